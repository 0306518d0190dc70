// The cluster gateway in front of two transceiver processes (embedded here): spreading new
// sessions by load, retrying on a 503, routing follow-ups by the transceiver id in the call id,
// signing, health, WebSocket pass-through; membership from /healthz polls and from Redis heartbeats.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { parseMembers } from "../../regional/gateway/config.ts";
import { Gateway } from "../../regional/gateway/gateway.ts";
import { transceiverOfCallId } from "../../regional/gateway/routing.ts";
import { configWithDefaults } from "../../regional/transceiver/config.ts";
import { RedisMembership } from "../../regional/transceiver/membership.ts";
import { startTransceiver, type Transceiver } from "../../regional/transceiver/transceiver.ts";
import { parseHeartbeat, transceiverKey } from "../../shared/membership.ts";
import { importSigningKeys, type SigningKeys, signRequest } from "../../shared/signing/request.ts";
import { formatTarget, type SignTarget } from "../../shared/signing/target.ts";
import { type RedisHandle, startRedis } from "../support/redis.ts";
import { keyringOf } from "../support/signed-call.ts";
import { createTestClient } from "./helpers/client.ts";
import { quietLog, randomKeyring, until } from "./helpers/harness.ts";

const secret = new Uint8Array(randomBytes(32));
const hintKeys = randomKeyring(1);
const callIdKeys = randomKeyring(2);
let offer: string;
let key: SigningKeys;
const GATEWAY: SignTarget = { clusterId: 1 };
let agent: EchoAgent;

async function transceiver(id: number, capacity: number, membership?: RedisMembership): Promise<Transceiver> {
  return startTransceiver(
    configWithDefaults({
      clusterId: 1,
      transceiverId: id,
      hintKeys,
      callIdKeys,
      clusterSecret: secret,
      capacity,
      backendUrl: agent.url,
      heartbeatIntervalMs: 200,
    }),
    { log: quietLog, ...(membership ? { membership } : {}) },
  );
}

async function call(
  base: string,
  method: string,
  path: string,
  body?: object,
  headers: Record<string, string> = {},
  target: SignTarget = GATEWAY,
) {
  const text = body === undefined ? "" : JSON.stringify(body);
  const signed = await signRequest(
    key,
    { method, pathAndQuery: path, body: new TextEncoder().encode(text), target: formatTarget(target) },
    Date.now(),
    randomBytes(16).toString("base64url"),
  );
  return fetch(base + path, {
    method,
    headers: { ...signed, ...(body ? { "content-type": "application/json" } : {}), ...headers },
    ...(body ? { body: text } : {}),
  });
}

let n = 0;
const uniqueOffer = () => offer.replace(/a=ice-ufrag:(\S+)/g, `a=ice-ufrag:gw${n++}x`);

beforeAll(async () => {
  agent = await startEchoAgent();
  key = await importSigningKeys(keyringOf(secret));
  const c = createTestClient();
  offer = await c.createOffer();
  await c.close();
});

afterAll(async () => {
  await agent?.close();
});

describe("gateway with static members (/healthz polls)", () => {
  let t1: Transceiver;
  let t2: Transceiver;
  let g: Gateway;
  beforeAll(async () => {
    t1 = await transceiver(1, 3);
    t2 = await transceiver(2, 3);
    g = await Gateway.start(
      {
        clusterId: 1,
        http: { host: "127.0.0.1", port: 0, ipv6: false },
        clusterKeys: keyringOf(secret),
        transceivers: new Map([
          [1, t1.httpUrl],
          [2, t2.httpUrl],
        ]),
        membership: undefined,
        pollMs: 60_000,
        staleMs: 600_000,
        replayWindowMs: 30_000,
        upstreamTimeoutMs: 5000,
      },
      quietLog,
    );
  });
  afterAll(async () => {
    await g?.stop();
    await t1?.stop();
    await t2?.stop();
  });

  it("spreads sessions over the least loaded, routes follow-ups by call id, retries on 503", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await call(g.url, "POST", "/v1/calls", { sdp: uniqueOffer() });
      expect(r.status).toBe(201);
      ids.push(((await r.json()) as { callId: string }).callId);
    }
    const owners = ids.map((id) => transceiverOfCallId(id));
    expect(owners.filter((o) => o === 1)).toHaveLength(2);
    expect(owners.filter((o) => o === 2)).toHaveLength(2);
    for (const id of ids) {
      const st = await call(g.url, "GET", `/v1/calls/${id}`);
      expect(st.status).toBe(200);
      expect(((await st.json()) as { callId: string }).callId).toBe(id);
    }
    // t1 fills up behind the gateway's back (its view is a poll old): the gateway gets a 503
    // from it and retries on t2.
    const direct = await call(
      t1.httpUrl,
      "POST",
      "/v1/calls",
      { sdp: uniqueOffer() },
      {},
      { clusterId: 1, transceiverId: 1 },
    );
    expect(direct.status).toBe(201);
    await g.poll();
    (g.members.get(1) as { load: number }).load = 0;
    const retried = await call(g.url, "POST", "/v1/calls", { sdp: uniqueOffer() });
    expect(retried.status).toBe(201);
    expect(transceiverOfCallId(((await retried.json()) as { callId: string }).callId)).toBe(2);
    expect(g.registry.render()).toMatch(/gr_gateway_retries_total 1/);
    // Both full now: 503 with Retry-After.
    await g.poll();
    const full = await call(g.url, "POST", "/v1/calls", { sdp: uniqueOffer() });
    expect(full.status).toBe(503);
    expect(full.headers.get("retry-after")).toBe("2");
    const health = (await (await fetch(`${g.url}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toEqual({ status: "ok", clusterId: 1, load: 6, capacity: 6, transceivers: 2 });
    const del = await call(g.url, "DELETE", `/v1/calls/${ids[0]}`);
    expect(del.status).toBe(204);
    expect(t1.calls.has(ids[0]!) || t2.calls.has(ids[0]!)).toBe(false);
  });

  it("checks signatures itself and rejects malformed or foreign call ids", async () => {
    const unsigned = await fetch(`${g.url}/v1/calls`, { method: "POST", body: "{}" });
    expect(unsigned.status).toBe(401);
    const bad = await call(g.url, "GET", "/v1/calls/rtc_short");
    expect(bad.status).toBe(400);
    const elsewhere = `rtc_${Buffer.from([0x12, 0, 1, 0, 9, ...randomBytes(31)]).toString("base64url")}`;
    expect(transceiverOfCallId(elsewhere)).toBe(9);
    const unknown = await call(g.url, "GET", `/v1/calls/${elsewhere}`);
    expect(unknown.status).toBe(404);
  });

  it("passes the WebSocket signalling through to a transceiver", async () => {
    for (const id of [...t1.calls.keys()]) t1.hangup(id);
    for (const id of [...t2.calls.keys()]) t2.hangup(id);
    await g.poll();
    const path = "/v1/ws";
    const headers = await signRequest(
      key,
      { method: "GET", pathAndQuery: path, body: new Uint8Array(0), target: formatTarget(GATEWAY) },
      Date.now(),
      randomBytes(16).toString("base64url"),
    );
    const ws = new WebSocket(`${g.url.replace("http", "ws")}${path}`, { headers });
    const msgs: { type: string; callId?: string }[] = [];
    ws.on("message", (d) => msgs.push(JSON.parse(String(d))));
    await new Promise((r, j) => {
      ws.once("open", r);
      ws.once("error", j);
    });
    ws.send(JSON.stringify({ type: "offer", sdp: uniqueOffer() }));
    await until(() => msgs.length > 0, "answer through the gateway");
    expect(msgs[0]!.type).toBe("answer");
    expect([1, 2]).toContain(transceiverOfCallId(msgs[0]!.callId!));
    ws.send(JSON.stringify({ type: "hangup" }));
    await until(() => msgs.some((m) => m.type === "ended"), "ended");
    ws.close();
  });

  it("sends no new sessions to a draining transceiver", async () => {
    await g.poll();
    const held = await call(
      t2.httpUrl,
      "POST",
      "/v1/calls",
      { sdp: uniqueOffer() },
      {},
      { clusterId: 1, transceiverId: 2 },
    );
    expect(held.status).toBe(201);
    const drained = t2.drain(2000);
    await g.poll();
    expect(g.candidates().map((m) => m.id)).toEqual([1]);
    for (let i = 0; i < 2; i++) {
      const r = await call(g.url, "POST", "/v1/calls", { sdp: uniqueOffer() });
      expect(r.status).toBe(201);
      expect(transceiverOfCallId(((await r.json()) as { callId: string }).callId)).toBe(1);
    }
    await drained;
  });

  it("parses GATEWAY_TRANSCEIVERS with precise errors", () => {
    expect(parseMembers("1=http://127.0.0.1:7111,2=http://127.0.0.1:7112/")).toEqual(
      new Map([
        [1, "http://127.0.0.1:7111"],
        [2, "http://127.0.0.1:7112"],
      ]),
    );
    expect(parseMembers("1=http://a:1,1=http://b:2")).toMatch(/repeated/);
    expect(parseMembers("x")).toMatch(/GATEWAY_TRANSCEIVERS\[0\]/);
  });
});

describe("membership through a real redis-server", () => {
  let redis: RedisHandle;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("transceivers announce themselves with a TTL; the gateway finds them there", async () => {
    const m1 = new RedisMembership(redis.url);
    const m2 = new RedisMembership(redis.url);
    const reader = new RedisMembership(redis.url);
    const t1 = await transceiver(11, 5, m1);
    const t2 = await transceiver(12, 5, m2);
    const g = await Gateway.start(
      {
        clusterId: 1,
        http: { host: "127.0.0.1", port: 0, ipv6: false },
        clusterKeys: keyringOf(secret),
        transceivers: new Map(),
        membership: reader,
        pollMs: 100,
        staleMs: 5000,
        replayWindowMs: 30_000,
        upstreamTimeoutMs: 5000,
      },
      quietLog,
    );
    try {
      const raw = await reader.redis.get(transceiverKey(1, 11));
      const hb = parseHeartbeat(raw!);
      expect(hb).toMatchObject({
        clusterId: 1,
        transceiverId: 11,
        backbone: t1.backbone,
        apiUrl: t1.httpUrl,
        capacity: 5,
        draining: false,
      });
      const ttl = await reader.redis.pttl(transceiverKey(1, 11));
      expect(ttl).toBeGreaterThan(0);
      await until(() => g.members.size === 2, "both members seen");
      const r = await call(g.url, "POST", "/v1/calls", { sdp: uniqueOffer() });
      expect(r.status).toBe(201);
      const { callId } = (await r.json()) as { callId: string };
      expect([11, 12]).toContain(transceiverOfCallId(callId));
      await until(
        async () =>
          parseHeartbeat((await reader.redis.get(transceiverKey(1, transceiverOfCallId(callId)!)))!)?.load ===
          1,
        "load announced",
      );
      // A stopped transceiver removes its record; the gateway forgets it.
      await t2.stop();
      expect(await reader.redis.get(transceiverKey(1, 12))).toBeNull();
      await until(() => !g.members.has(12), "member 12 gone");
    } finally {
      await g.stop();
      await t1.stop();
      await t2.stop();
      await Promise.all([m1.close(), m2.close(), reader.close()]);
    }
  });
});
