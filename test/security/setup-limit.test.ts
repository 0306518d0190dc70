// Attack 4 (docs/security.md): one API key from one address opens sessions and never connects
// them, to hold the cluster's capacity until each setup times out. Through the real edge
// (workerd), a real gateway and a real transceiver: sessions in setup are limited per API key
// (20) and per client /24 (5); over the limit the edge answers 429 setup_limit with Retry-After;
// other keys and networks are unaffected, and connected or ended sessions give their slot back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { Gateway } from "../../regional/gateway/gateway.ts";
import {
  DEFAULT_SETUP_LIMIT_PER_KEY,
  DEFAULT_SETUP_LIMIT_PER_NETWORK,
} from "../../regional/transceiver/config.ts";
import { CITIES, topologyFor } from "../edge/fixtures.ts";
import { type Edge, makeSecrets, startEdge } from "../edge/harness.ts";
import { keyringOf } from "../support/signed-call.ts";
import { createTestClient, type TestClient } from "../transceiver/helpers/client.ts";
import { type Harness, quietLog, startHarness, until } from "../transceiver/helpers/harness.ts";

const secrets = makeSecrets();
let h: Harness;
let gw: Gateway;
let e: Edge;
let template = "";
let n = 0;
const clients: TestClient[] = [];
/** Locations of the attacker's sessions in setup. */
const held: string[] = [];

/** A fresh offer (its own ICE credentials, so the transceiver does not see a duplicate). */
const uniqueOffer = () => template.replace(/a=ice-ufrag:(\S+)/g, `a=ice-ufrag:sl${n++}x`);

function post(key: string, ip: string, sdp = uniqueOffer()): Promise<Response> {
  return e.fetch("/v1/realtime/calls", {
    method: "POST",
    city: "frankfurt",
    ip,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/sdp" },
    body: sdp,
  });
}

beforeAll(async () => {
  h = await startHarness({
    clusterId: 1,
    callIdKeys: secrets.callIdRing,
    clusterSecret: secrets.clusterSecret,
  });
  gw = await Gateway.start(
    {
      clusterId: 1,
      http: { host: "127.0.0.1", port: 0, ipv6: false },
      clusterKeys: keyringOf(secrets.clusterSecret),
      transceivers: new Map([[1, h.t.httpUrl]]),
      membership: undefined,
      pollMs: 1000,
      staleMs: 600_000,
      replayWindowMs: 5000,
      upstreamTimeoutMs: 5000,
    },
    quietLog,
  );
  e = await startEdge({
    topology: topologyFor({ fra: gw.url }, {}, `${h.relay.vip.host}:${h.relay.vip.port}`),
    // The edge's request-rate limits are raised so that only the setup limit is under test.
    bindings: {
      ...secrets.bindings,
      GR_LOCAL_DEV: "true",
      RATE_LIMIT_IP_LIMIT: "100000",
      RATE_LIMIT_KEY_LIMIT: "100000",
    },
  });
  const c = createTestClient();
  template = await c.createOffer();
  await c.close();
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await e?.dispose();
  await gw?.stop();
  await h?.close();
});

describe("sessions in setup per API key and per client network", () => {
  it("the defaults are 20 per key and 5 per network", () => {
    expect([DEFAULT_SETUP_LIMIT_PER_KEY, DEFAULT_SETUP_LIMIT_PER_NETWORK]).toEqual([20, 5]);
    expect(h.t.config.setupLimitPerKey).toBe(20);
    expect(h.t.config.setupLimitPerNetwork).toBe(5);
  });

  it("a caller who connects each call is never limited: a connected session frees its slot", async () => {
    for (let i = 0; i < DEFAULT_SETUP_LIMIT_PER_NETWORK + 1; i++) {
      const client = createTestClient();
      clients.push(client);
      const res = await post(secrets.apiKey2, "192.0.2.10", await client.createOffer());
      expect(res.status).toBe(201);
      await client.setAnswer(await res.text());
      await client.connected(25_000);
    }
    expect(h.t.setupLimiter.inSetup).toBe(0);
  }, 90_000);

  it("200 never-connecting offers from one key and address: 5 held, 195 refused with 429 setup_limit", async () => {
    const before = h.t.calls.size;
    const statuses: number[] = [];
    let refused: { headers: Headers; text: string } | undefined;
    for (let i = 0; i < 200; i++) {
      const r = await post(secrets.apiKey, "203.0.113.50");
      statuses.push(r.status);
      const text = await r.text();
      if (r.status === 429) refused ??= { headers: r.headers, text };
      if (r.status === 201) held.push(r.headers.get("location")!);
    }
    const count = (s: number) => statuses.filter((x) => x === s).length;
    expect({ created: count(201), refused: count(429) }).toEqual({ created: 5, refused: 195 });
    expect(h.t.calls.size - before).toBe(5);
    expect(h.t.metrics.render()).toMatch(
      /gr_transceiver_calls_failed_total\{cluster="1",reason="setup_limit"\} 195\b/,
    );
    // A Realtime-shaped error, with when to try again (the oldest setup's timeout, about 30 s).
    expect(refused!.headers.get("content-type")).toMatch(/application\/json/);
    const retryAfter = Number(refused!.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    const body = JSON.parse(refused!.text) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: "rate_limit_error", code: "setup_limit" });
    expect(body.error.message).toMatch(/client network has 5 sessions in setup/);
  });

  it("other keys on other networks are unaffected; the attacker's network is limited for every key", async () => {
    expect((await post(secrets.apiKey2, "198.51.100.7")).status).toBe(201);
    expect((await post(secrets.apiKey2, "203.0.113.99")).status).toBe(429);
  });

  it("the same key from many networks stops at 20 in setup", async () => {
    const statuses: number[] = [];
    for (let net = 1; net <= 20; net++) {
      const r = await post(secrets.apiKey, `10.${net}.0.1`);
      statuses.push(r.status);
      if (r.status === 429) {
        const err = ((await r.json()) as { error: { message: string } }).error;
        expect(err.message).toMatch(/API key has 20 sessions in setup/);
      } else await r.body?.cancel();
    }
    // 5 already in setup from 203.0.113.0/24, so 15 more fit.
    expect(statuses.filter((s) => s === 201)).toHaveLength(15);
    expect(statuses.slice(15).every((s) => s === 429)).toBe(true);
    expect((await post(secrets.apiKey2, "10.200.0.1")).status).toBe(201);
  });

  it("hanging up a session in setup gives its slot back", async () => {
    // The key is at 20, its first network at 5: ending one of those sessions frees one slot of each.
    expect((await post(secrets.apiKey, "203.0.113.50")).status).toBe(429);
    const del = await e.fetch(held[0]!, {
      method: "DELETE",
      ip: "203.0.113.50",
      headers: { authorization: `Bearer ${secrets.apiKey}` },
    });
    expect(del.status).toBe(204);
    expect((await post(secrets.apiKey, "203.0.113.50")).status).toBe(201);
    expect((await post(secrets.apiKey, "203.0.113.51")).status).toBe(429);
  });

  it("over the edge's WebSocket the same limit answers an error message with setup_limit", async () => {
    const outcomes: string[] = [];
    const sockets: WebSocket[] = [];
    try {
      for (let i = 0; i < DEFAULT_SETUP_LIMIT_PER_NETWORK + 1; i++) {
        const url = new URL("/v1/realtime/ws", e.url);
        url.protocol = "ws:";
        const ws = new WebSocket(url, ["gr-realtime", `gr-auth.${secrets.apiKey2}`], {
          headers: {
            "cf-connecting-ip": "198.18.0.9",
            "MF-CF-Blob": JSON.stringify({ ...CITIES.frankfurt, clientAcceptEncoding: "" }),
          },
        });
        sockets.push(ws);
        const messages: { type: string; error?: { code: string } }[] = [];
        ws.on("message", (d) => messages.push(JSON.parse(String(d))));
        await new Promise((resolve, reject) => {
          ws.once("open", resolve);
          ws.once("error", reject);
        });
        ws.send(JSON.stringify({ type: "offer", sdp: uniqueOffer() }));
        await until(() => messages.length > 0, "a reply to the offer");
        outcomes.push(messages[0]!.type === "error" ? messages[0]!.error!.code : messages[0]!.type);
      }
    } finally {
      for (const ws of sockets) ws.close();
    }
    expect(outcomes).toEqual([...new Array(DEFAULT_SETUP_LIMIT_PER_NETWORK).fill("answer"), "setup_limit"]);
  });
});
