// Surviving restarts through a real redis-server (started by this file on a free port): a POP that
// restarts restores a flow from the client's next non-STUN datagram; with Redis gone, established
// flows keep flowing and lookups fail fast and are counted; the cluster relay learns transceivers
// from heartbeats.
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../regional/common/log.ts";
import { RelayWorker } from "../../regional/relay/shell/worker.ts";
import { transceiverKey } from "../../shared/membership.ts";
import { type RedisHandle, startRedis } from "../support/redis.ts";
import { bindingRequest, hint, rtp } from "./fixtures.ts";
import { Client, FakeTransceiver, ports, relayConfig, topology, until } from "./harness.ts";

const log = createLogger({ test: "relay" }, "error");
let redis: RedisHandle;
let admin: Redis;
const cleanup: (() => Promise<void>)[] = [];
beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});
afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});

describe("relay with Redis", () => {
  it("restores a flow after a POP restart from the client's next RTP packet", async () => {
    const p = await ports();
    const topo = topology(p);
    const t = await FakeTransceiver.start();
    cleanup.push(() => t.close());
    // The cluster relay finds the transceiver through its heartbeat.
    await admin.set(
      transceiverKey(1, 1),
      JSON.stringify({
        clusterId: 1,
        transceiverId: 1,
        backbone: t.address,
        apiUrl: "http://127.0.0.1:1",
        load: 0,
        capacity: 10,
        draining: false,
        sentAt: Date.now(),
      }),
      "PX",
      60_000,
    );
    const cluster = await RelayWorker.start(relayConfig("cluster", topo, { redisUrl: redis.url }), log);
    cleanup.push(() => cluster.close());
    const popCfg = relayConfig("pop", topo, { redisUrl: redis.url });
    let pop = await RelayWorker.start(popCfg, log);
    const client = await Client.open();
    cleanup.push(() => client.close());
    client.send(bindingRequest(hint(1, 1)), p.vip);
    await until(() => client.inbox.length === 1, "answer");
    const key = `gr:flow:127.0.0.1:${client.port}`;
    await until(async () => (await admin.get(key)) !== null, "flow mirrored to Redis");
    expect(await admin.get(key)).toMatch(/^1\|1\|1\|7\|\d+$/);
    expect(await admin.pttl(key)).toBeGreaterThan(0);

    await pop.close();
    pop = await RelayWorker.start(popCfg, log);
    cleanup.push(() => pop.close());
    expect(pop.flows().active).toBe(0);
    // The three packets wait in the POP during the lookup; malformed STUN from another address right
    // behind them lands in the same receive memory (batched path) and must not overwrite them.
    const noise = await Client.open();
    cleanup.push(() => noise.close());
    for (let i = 0; i < 3; i++) client.send(rtp(200, i), p.vip);
    for (let i = 0; i < 100; i++) noise.send(Buffer.alloc(200, 1), p.vip);
    await until(() => client.inbox.length === 4, "three echoes after the restart");
    const echoed = client.inbox.slice(1).map((m) => m.msg.toString("hex"));
    expect(echoed.sort()).toEqual([0, 1, 2].map((i) => rtp(200, i).toString("hex")).sort());
    expect(pop.flows(`127.0.0.1:${client.port}`).flow).toMatchObject({ state: "answered", transceiverId: 1 });
    const m = pop.metricsText();
    expect(m).toMatch(/gr_relay_flows_restored_total\{role="pop"\} 1/);
    expect(m).toMatch(/gr_relay_restore_lookups_total\{result="hit"\} 1/);
    expect(m).toMatch(/gr_relay_redis_ops_total\{op="get",result="ok"\} 1/);

    // An address Redis does not know: one lookup, then the negative cache.
    const stranger = await Client.open();
    cleanup.push(() => stranger.close());
    for (let i = 0; i < 5; i++) stranger.send(rtp(), p.vip);
    await until(() => /result="miss"\} 1/.test(pop.metricsText()), "one miss");
    expect(pop.metricsText()).toMatch(/gr_relay_redis_ops_total\{op="get",result="ok"\} 2/);

    // Redis goes away: established flows keep flowing; lookups fail fast and are counted.
    await redis.stop();
    client.send(rtp(), p.vip);
    await until(() => client.inbox.length === 5, "echo with Redis down");
    const other = await Client.open();
    cleanup.push(() => other.close());
    other.send(rtp(), p.vip);
    await until(() => /result="error"\} 1/.test(pop.metricsText()), "lookup error counted");
    // A new call still connects: the first packet never needs Redis.
    other.send(bindingRequest(hint(1, 1)), p.vip);
    await until(() => other.inbox.length === 1, "new flow with Redis down");
    redis = await startRedis(redis.port);
    admin.disconnect();
    admin = new Redis(redis.url);
  });
});
