// GR_CLUSTER_SECRET rotation without an outage (docs/operations/deploy.md), through the real edge
// (workerd) and a real gateway and transceiver: add the new key second on the verifiers, move it
// first on the edge, remove the old one. Every step keeps calls working; a request under the
// removed key, and an edge that moved too early, are refused with a 401 naming the key.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayInit as GatewayConfig } from "../../regional/gateway/config.ts";
import { Gateway } from "../../regional/gateway/gateway.ts";
import { formatKeyring, type Keyring, type SecretKey } from "../../shared/keys.ts";
import { topologyFor } from "../edge/fixtures.ts";
import { type Edge, makeSecrets, startEdge } from "../edge/harness.ts";
import { createTestClient } from "../transceiver/helpers/client.ts";
import { type Harness, quietLog, startHarness } from "../transceiver/helpers/harness.ts";

const secrets = makeSecrets();
const oldKey: SecretKey = { id: 1, secret: new Uint8Array(randomBytes(32)) };
const newKey: SecretKey = { id: 2, secret: new Uint8Array(randomBytes(32)) };
const ring = (...k: SecretKey[]): Keyring => ({ active: k[0]!, keys: k });

let t: Harness;
let g: Gateway | undefined;
let port = 0;
const edges: Edge[] = [];

/** (Re)deploys the cluster's gateway with a keyring, on the same port. */
async function deployGateway(keys: Keyring): Promise<void> {
  await g?.stop();
  const cfg: GatewayConfig = {
    clusterId: 1,
    http: { host: "127.0.0.1", port, ipv6: false },
    clusterKeys: keys,
    transceivers: new Map([[1, t.t.httpUrl]]),
    membership: undefined,
    pollMs: 60_000,
    staleMs: 600_000,
    replayWindowMs: 5000,
    upstreamTimeoutMs: 5000,
  };
  g = await Gateway.start(cfg, quietLog);
  port = Number(new URL(g.url).port);
}

async function edgeWith(keys: Keyring): Promise<Edge> {
  const e = await startEdge({
    topology: topologyFor({ fra: `http://127.0.0.1:${port}` }),
    bindings: { ...secrets.bindings, GR_CLUSTER_SECRET: formatKeyring(keys.keys), GR_LOCAL_DEV: "true" },
  });
  edges.push(e);
  return e;
}

async function offer(e: Edge): Promise<{ status: number; error?: { code: string; message: string } }> {
  const c = createTestClient();
  const sdp = await c.createOffer();
  await c.close();
  const res = await e.fetch("/v1/realtime/calls", {
    method: "POST",
    city: "frankfurt",
    headers: { authorization: `Bearer ${secrets.apiKey}`, "content-type": "application/sdp" },
    body: sdp,
  });
  if (res.status === 201) {
    await res.body?.cancel();
    return { status: 201 };
  }
  return {
    status: res.status,
    error: ((await res.json()) as { error: { code: string; message: string } }).error,
  };
}

beforeAll(async () => {
  // The transceiver knows both keys throughout (it is a verifier like the gateway).
  t = await startHarness({ clusterId: 1, clusterKeys: ring(oldKey, newKey), callIdKeys: secrets.callIdRing });
  await deployGateway(ring(oldKey));
});

afterAll(async () => {
  for (const e of edges) await e.dispose();
  await g?.stop();
  await t?.close();
});

describe("rotating GR_CLUSTER_SECRET", () => {
  it("add second, deploy verifiers, move first, remove old: no step refuses a call", async () => {
    const edgeOld = await edgeWith(ring(oldKey));
    expect((await offer(edgeOld)).status).toBe(201);

    // An edge that signs with the new key before the verifiers know it: refused, naming the key.
    const edgeNew = await edgeWith(ring(newKey, oldKey));
    const early = await offer(edgeNew);
    expect(early.status).toBe(401);
    expect(early.error?.message).toMatch(/signing key is not in GR_CLUSTER_SECRET/);

    // 1. Verifiers get the new key second: old-key edges keep working.
    await deployGateway(ring(oldKey, newKey));
    expect((await offer(edgeOld)).status).toBe(201);
    // 2. The edge moves the new key first: it signs with key 2, still accepted.
    expect((await offer(edgeNew)).status).toBe(201);
    // 3. The old key is removed from the verifiers: new-key calls work, old-key signatures are refused.
    await deployGateway(ring(newKey));
    expect((await offer(edgeNew)).status).toBe(201);
    const removed = await offer(edgeOld);
    expect(removed.status).toBe(401);
    expect(removed.error?.message).toMatch(/signing key is not in GR_CLUSTER_SECRET/);
  });
});
