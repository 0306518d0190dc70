// Attack 3, the case the per-process checks leave open: two gateway replicas of one cluster share
// the "gateway:1" identity, so a request accepted by one is valid at the other inside the replay
// window. With REDIS_URL both claim each nonce in a real redis-server (SET NX PX): the replay to
// the sibling replica is refused. If Redis goes away, requests still pass on the local checks
// and the skipped claims are counted.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayInit as GatewayConfig } from "../../regional/gateway/config.ts";
import { Gateway } from "../../regional/gateway/gateway.ts";
import { RedisNonces } from "../../regional/transceiver/nonce-store.ts";
import { type RedisHandle, startRedis } from "../support/redis.ts";
import { keyringOf, signedCaller } from "../support/signed-call.ts";
import { type Harness, quietLog, startHarness } from "../transceiver/helpers/harness.ts";

const secret = new Uint8Array(randomBytes(32));
let redis: RedisHandle;
let t: Harness;
let a: Gateway;
let b: Gateway;
const stores: RedisNonces[] = [];

function replica(): Promise<Gateway> {
  const nonces = new RedisNonces(redis.url);
  stores.push(nonces);
  const cfg: GatewayConfig = {
    clusterId: 1,
    http: { host: "127.0.0.1", port: 0, ipv6: false },
    clusterKeys: keyringOf(secret),
    transceivers: new Map([[1, t.t.httpUrl]]),
    membership: undefined,
    pollMs: 60_000,
    staleMs: 600_000,
    replayWindowMs: 5000,
    upstreamTimeoutMs: 5000,
    nonces,
  };
  return Gateway.start(cfg, quietLog);
}

beforeAll(async () => {
  redis = await startRedis();
  t = await startHarness({ clusterId: 1, clusterSecret: secret });
  a = await replica();
  b = await replica();
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  for (const s of stores) await s.close();
  await t?.close();
  await redis?.stop();
});

describe("gateway replicas sharing a nonce store", () => {
  const edge = signedCaller(() => "", secret, { clusterId: 1 });
  const callId = `rtc_${"A".repeat(48)}`;

  it("a request accepted by one replica is refused by the other", async () => {
    const path = `/v1/calls/${callId}`;
    const headers = await edge.signedHeaders("GET", path);
    const first = await fetch(a.url + path, { headers });
    expect(first.status).not.toBe(401); // reached the transceiver (which knows no such call)
    const replay = await fetch(b.url + path, { headers });
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as { error: { message: string } }).error.message).toMatch(/already used/);
    expect(b.registry.render()).toMatch(/gr_gateway_signatures_rejected_total\{reason="replayed"\} 1/);
  });

  it("without Redis the local checks still apply and the skipped claims are counted", async () => {
    await redis.kill();
    try {
      const path = `/v1/calls/${callId}`;
      const headers = await edge.signedHeaders("GET", path);
      const r = await fetch(a.url + path, { headers });
      expect(r.status).not.toBe(401);
      expect((await fetch(a.url + path, { headers })).status).toBe(401); // same replica: its memory
      expect(a.registry.render()).toMatch(/gr_gateway_nonce_store_errors_total [1-9]/);
      expect(a.registry.render()).toMatch(/gr_gateway_signatures_rejected_total\{reason="replayed"\} 1/);
    } finally {
      await redis.restart();
    }
  });
});
