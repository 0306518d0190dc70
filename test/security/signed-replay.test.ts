// Attack 3 (docs/security.md): replayed signed edge → cluster requests. The attacker sits on the
// path from the real edge (workerd, Miniflare) to cluster 1's gateway, captures one genuine signed
// POST /v1/calls byte for byte, and replays it: to the same gateway, to the other cluster's
// gateway, straight to each transceiver, to the same gateway after it restarts, and after the
// replay window. Every replay must be refused with a 401 naming why; the genuine call succeeds.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayInit as GatewayConfig } from "../../regional/gateway/config.ts";
import { Gateway } from "../../regional/gateway/gateway.ts";
import { topologyFor } from "../edge/fixtures.ts";
import { type Edge, makeSecrets, startEdge } from "../edge/harness.ts";
import { keyringOf } from "../support/signed-call.ts";
import { createTestClient } from "../transceiver/helpers/client.ts";
import { type Harness, quietLog, startHarness } from "../transceiver/helpers/harness.ts";

// Short, so "after the window" is a short wait, yet long enough that the genuine call and the
// replays before it (a werift call, a gateway restart) fit inside it on a loaded machine: a replay
// that arrives after the window is refused as too old, not for the reason each step checks.
const WINDOW_MS = 4000;
const secrets = makeSecrets();
const keys = keyringOf(secrets.clusterSecret);

interface Captured {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** An on-path observer: records each request, forwards it unchanged, returns the answer. */
async function tap(upstream: () => string, seen: Captured[]): Promise<Server> {
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === "string" && !["host", "connection", "content-length"].includes(k)) headers[k] = v;
    }
    const cap = { method: req.method!, url: req.url!, headers, body: Buffer.concat(chunks) };
    seen.push(cap);
    const up = await send(upstream(), cap);
    res.writeHead(up.status, { "content-type": up.headers.get("content-type") ?? "application/json" });
    res.end(Buffer.from(await up.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

/** The attacker's replay: the captured bytes, to any address. */
function send(base: string, c: Captured): Promise<Response> {
  return fetch(base + c.url, {
    method: c.method,
    headers: c.headers,
    ...(c.body.length > 0 ? { body: new Uint8Array(c.body) } : {}),
  });
}

function gatewayConfig(clusterId: number, members: Harness[], port = 0): GatewayConfig {
  return {
    clusterId,
    http: { host: "127.0.0.1", port, ipv6: false },
    clusterKeys: keys,
    transceivers: new Map(members.map((h) => [h.t.config.transceiverId, h.t.httpUrl])),
    membership: undefined,
    pollMs: 60_000,
    staleMs: 600_000,
    replayWindowMs: WINDOW_MS,
    upstreamTimeoutMs: 5000,
  };
}

const errorOf = async (r: Response) =>
  ((await r.json()) as { error: { code: string; message: string } }).error;

let t11: Harness;
let t12: Harness;
let t21: Harness;
let g1: Gateway;
let g2: Gateway;
let edge: Edge;
let proxy: Server;
const seen: Captured[] = [];

beforeAll(async () => {
  const over = { clusterKeys: keys, replayWindowMs: WINDOW_MS, callIdKeys: secrets.callIdRing };
  t11 = await startHarness({ ...over, clusterId: 1, transceiverId: 1 });
  t12 = await startHarness({ ...over, clusterId: 1, transceiverId: 2 }, { agent: t11.agent });
  t21 = await startHarness({ ...over, clusterId: 2, transceiverId: 1 }, { agent: t11.agent });
  g1 = await Gateway.start(gatewayConfig(1, [t11, t12]), quietLog);
  g2 = await Gateway.start(gatewayConfig(2, [t21]), quietLog);
  proxy = await tap(() => g1.url, seen);
  const via = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  edge = await startEdge({
    topology: topologyFor({ fra: via, iad: g2.url }, {}, `${t11.relay.vip.host}:${t11.relay.vip.port}`),
    bindings: { ...secrets.bindings, GR_LOCAL_DEV: "true" },
  });
});

afterAll(async () => {
  await edge?.dispose();
  await new Promise((r) => proxy?.close(r));
  await g1?.stop();
  await g2?.stop();
  for (const h of [t21, t12, t11]) await h?.close();
});

describe("a captured signed request works only once, only where it was sent", () => {
  it("the genuine call succeeds; every replay is refused with a 401 naming the reason", async () => {
    const client = createTestClient();
    const offer = await client.createOffer();
    await client.close();
    const res = await edge.fetch("/v1/realtime/calls", {
      method: "POST",
      city: "frankfurt",
      headers: { authorization: `Bearer ${secrets.apiKey}`, "content-type": "application/sdp" },
      body: offer,
    });
    expect(res.status).toBe(201);
    const captured = seen.find((c) => c.method === "POST" && c.url === "/v1/calls")!;
    expect(captured.headers["x-gr-target"]).toBe("gateway:1");
    const created = t11.t.calls.size + t12.t.calls.size;
    expect(created).toBe(1);

    const again = await send(g1.url, captured);
    expect(again.status).toBe(401);
    expect((await errorOf(again)).message).toMatch(/nonce was already used/);

    // The gateway restarts on the same port: its nonce memory is new, the start-time rule holds.
    const port = Number(new URL(g1.url).port);
    await g1.stop();
    g1 = await Gateway.start(gatewayConfig(1, [t11, t12], port), quietLog);
    const afterRestart = await send(g1.url, captured);
    expect(afterRestart.status).toBe(401);
    expect((await errorOf(afterRestart)).message).toMatch(/signed before this process started/);

    const outcomes: [string, string, RegExp][] = [
      ["the other cluster's gateway", g2.url, /signed for gateway:1, this is gateway:2/],
      ["straight to transceiver 1/1", t11.t.httpUrl, /signed for gateway:1, this is transceiver:1\/1/],
      [
        "straight to sibling transceiver 1/2",
        t12.t.httpUrl,
        /signed for gateway:1, this is transceiver:1\/2/,
      ],
      ["straight to transceiver 2/1", t21.t.httpUrl, /signed for gateway:1, this is transceiver:2\/1/],
    ];
    for (const [where, base, why] of outcomes) {
      const r = await send(base, captured);
      expect([where, r.status]).toEqual([where, 401]);
      const e = await errorOf(r);
      expect(e.code).toBe("unauthorized");
      expect(e.message).toMatch(why);
    }

    // After the replay window nothing signed then is accepted anywhere.
    await new Promise((r) => setTimeout(r, WINDOW_MS + 200));
    for (const base of [g1.url, g2.url, t11.t.httpUrl, t12.t.httpUrl]) {
      const late = await send(base, captured);
      expect(late.status).toBe(401);
      expect((await errorOf(late)).message).toMatch(/older than the replay window|signed for gateway:1/);
    }

    // Not one replay made a session.
    expect(t11.t.calls.size + t12.t.calls.size + t21.t.calls.size).toBe(created);
    expect(g2.health()).toMatchObject({ load: 0 });
  });

  it("what the gateway forwards is signed for that one transceiver: replayed to its sibling it fails", async () => {
    // The attacker now sits inside cluster 1, between the gateway and transceiver 1/1.
    const inner: Captured[] = [];
    const innerTap = await tap(() => t11.t.httpUrl, inner);
    const port = Number(new URL(g1.url).port);
    await g1.stop();
    const cfg = gatewayConfig(1, [t11], port);
    cfg.transceivers = new Map([[1, `http://127.0.0.1:${(innerTap.address() as AddressInfo).port}`]]);
    g1 = await Gateway.start(cfg, quietLog);
    try {
      const client = createTestClient();
      const offer = await client.createOffer();
      await client.close();
      const res = await edge.fetch("/v1/realtime/calls", {
        method: "POST",
        city: "frankfurt",
        headers: { authorization: `Bearer ${secrets.apiKey2}`, "content-type": "application/sdp" },
        body: offer,
      });
      expect(res.status).toBe(201);
      const forwarded = inner.find((c) => c.method === "POST")!;
      expect(forwarded.headers["x-gr-target"]).toBe("transceiver:1/1");
      for (const base of [t12.t.httpUrl, t21.t.httpUrl, g1.url, g2.url, t11.t.httpUrl]) {
        const r = await send(base, forwarded);
        expect(r.status).toBe(401);
      }
    } finally {
      await new Promise((r) => innerTap.close(r));
    }
  });
});
