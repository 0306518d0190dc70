// WebSocket signalling through the edge in real workerd: a `ws` client on real HTTP to Miniflare,
// proxied over a signed upgrade to the cluster stand-in's /v1/ws.
import type { IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { FakeCluster } from "./fake-cluster.ts";
import { CITIES, type CityName, CLUSTERS, OFFER, topologyFor } from "./fixtures.ts";
import { type Edge, makeSecrets, startEdge } from "./harness.ts";

const secrets = makeSecrets();
const clusters = new Map<string, FakeCluster>();
let e: Edge;

beforeAll(async () => {
  for (const c of CLUSTERS) {
    const f = new FakeCluster(c.name, c.id, secrets.clusterSecret, secrets.callIdRing);
    await f.start();
    clusters.set(c.name, f);
  }
  e = await startEdge({
    topology: topologyFor(Object.fromEntries([...clusters].map(([n, f]) => [n, f.url]))),
    bindings: { ...secrets.bindings, GR_LOCAL_DEV: "true" },
  });
});
afterAll(async () => {
  await e?.dispose();
  for (const f of clusters.values()) await f.stop();
});

interface Conn {
  ws: WebSocket;
  upgrade: IncomingMessage;
  next(): Promise<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
}

function connect(
  city: CityName,
  o: { protocols?: string[]; headers?: Record<string, string> } = {},
): Promise<Conn> {
  const url = new URL("/v1/realtime/ws", e.url);
  url.protocol = "ws:";
  const ws = new WebSocket(url, o.protocols ?? [], {
    headers: {
      "MF-CF-Blob": JSON.stringify({ ...CITIES[city], clientAcceptEncoding: "" }),
      ...o.headers,
    },
  });
  const queue: Record<string, unknown>[] = [];
  const waiters: ((m: Record<string, unknown>) => void)[] = [];
  ws.on("message", (d) => {
    const m = JSON.parse(String(d)) as Record<string, unknown>;
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })),
  );
  return new Promise((resolve, reject) => {
    ws.once("upgrade", (upgrade) => {
      ws.once("open", () =>
        resolve({
          ws,
          upgrade,
          closed,
          next: () => {
            const m = queue.shift();
            return m ? Promise.resolve(m) : new Promise((r) => waiters.push(r));
          },
        }),
      );
    });
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (d: Buffer) => {
        body += d.toString();
      });
      res.on("end", () =>
        reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body })),
      );
    });
    ws.once("error", reject);
  });
}

describe("WebSocket signalling", () => {
  it("authenticates by subprotocol (browsers), steers, and proxies offer → answer and events", async () => {
    const c = await connect("sydney", { protocols: ["gr-realtime", `gr-auth.${secrets.apiKey}`] });
    expect(c.ws.protocol).toBe("gr-realtime");
    expect(c.upgrade.headers["x-relay-cluster"]).toBe("syd");
    expect(String(c.upgrade.headers["server-timing"])).toContain('attempts;desc="1"');
    const syd = clusters.get("syd")!;
    expect(syd.requests.at(-1)).toMatchObject({ path: "/v1/ws", signature: "ok" });
    // A client cannot choose its own location or ingress: the edge overwrites them.
    c.ws.send(
      JSON.stringify({
        type: "offer",
        sdp: OFFER,
        client: { region: "EU", country: "DE" },
        ingress: { vip: "6.6.6.6:1" },
      }),
    );
    const answer = await c.next();
    expect(answer.type).toBe("answer");
    expect(String(answer.callId)).toMatch(/^rtc_/);
    expect(await c.next()).toEqual({ type: "event", event: { type: "session.created", cluster: "syd" } });
    const offer = syd.wsMessages.at(-1)!;
    expect(offer.client).toEqual({
      region: "OC",
      country: "AU",
      continent: "OC",
      colo: "SYD",
      latitude: -33.8688,
      longitude: 151.2093,
    });
    expect(offer.ingress).toEqual({ vip: "198.51.100.10:3478" });
    // The call id from the socket routes follow-ups like any other.
    const del = await e.fetch(`/v1/realtime/calls/${answer.callId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${secrets.apiKey}` },
    });
    expect(del.status).toBe(204);
    c.ws.send(JSON.stringify({ type: "hangup" }));
    expect(await c.next()).toEqual({ type: "ended", reason: "hangup" });
    expect((await c.closed).code).toBe(1000);
  });

  it("authenticates by Authorization header (servers)", async () => {
    const c = await connect("saoPaulo", { headers: { authorization: `Bearer ${secrets.apiKey}` } });
    expect(c.upgrade.headers["x-relay-cluster"]).toBe("gru");
    c.ws.close(1000);
    await c.closed;
  });

  it("rejects an upgrade without credentials (401) or with a bad key", async () => {
    await expect(connect("frankfurt")).rejects.toMatchObject({ status: 401 });
    await expect(
      connect("frankfurt", { protocols: ["gr-realtime", "gr-auth.sk-nope"] }),
    ).rejects.toMatchObject({
      status: 401,
    });
    await expect(
      connect("frankfurt", { protocols: ["chat"], headers: { authorization: `Bearer ${secrets.apiKey}` } }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it("checks offers at the edge and never forwards a bad one", async () => {
    const c = await connect("frankfurt", { protocols: ["gr-realtime", `gr-auth.${secrets.apiKey}`] });
    const fra = clusters.get("fra")!;
    const before = fra.wsMessages.length;
    c.ws.send(JSON.stringify({ type: "offer", sdp: "v=0\r\nnope" }));
    expect(await c.next()).toMatchObject({ type: "error", error: { code: "invalid_sdp" } });
    c.ws.send("not json");
    expect(await c.next()).toMatchObject({ type: "error", error: { code: "invalid_json" } });
    c.ws.send(JSON.stringify({ type: "subscribe" }));
    expect(await c.next()).toMatchObject({ type: "error", error: { code: "unknown_message_type" } });
    expect(fra.wsMessages.length).toBe(before);
    c.ws.close(1000);
    await c.closed;
  });

  it("fails over when the nearest cluster refuses the upgrade with 503", async () => {
    const iad = clusters.get("iad")!;
    iad.mode = "full";
    try {
      const c = await connect("virginia", { protocols: ["gr-realtime", `gr-auth.${secrets.apiKey}`] });
      expect(c.upgrade.headers["x-relay-cluster"]).not.toBe("iad");
      expect(String(c.upgrade.headers["server-timing"])).toContain('attempts;desc="2"');
      c.ws.close(1000);
      await c.closed;
    } finally {
      iad.mode = "ok";
    }
  });

  it("closes the client when the cluster goes away", async () => {
    const c = await connect("frankfurt", { headers: { authorization: `Bearer ${secrets.apiKey}` } });
    const fra = clusters.get("fra")!;
    const port = fra.port;
    await fra.stop();
    try {
      const { code } = await c.closed;
      expect([1000, 1006, 1011]).toContain(code);
    } finally {
      await fra.start(port);
    }
  });

  it("records offer → answer for the dashboard", async () => {
    const text = await (await e.fetch("/internal/metrics")).text();
    expect(text).toMatch(/gr_edge_signalling_seconds_count\{region="OC",cluster="syd",stage="total"\} [1-9]/);
    expect(text).toMatch(/gr_edge_requests_total\{route="ws",status="101"\} [1-9]/);
  });
});
