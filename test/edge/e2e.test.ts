// The edge in real workerd in front of the real cluster signalling entry (regional/transceiver
// gateway) and transceiver (werift) with its echo agent, and a loopback relay standing in for the
// POP: a werift client's offer goes
// through the edge, the answer comes back, ICE and DTLS connect through the VIP the edge
// advertised, audio echoes; trickle, status and hang-up go through the edge by call id; and the
// same over the edge's WebSocket.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { Gateway } from "../../regional/gateway/gateway.ts";
import { keyringOf } from "../support/signed-call.ts";
import { createTestClient, type TestClient } from "../transceiver/helpers/client.ts";
import { type Harness, quietLog, startHarness, until } from "../transceiver/helpers/harness.ts";
import { CITIES, topologyFor } from "./fixtures.ts";
import { type Edge, makeSecrets, startEdge } from "./harness.ts";

const secrets = makeSecrets();
let h: Harness;
let e: Edge;
let gw: Gateway;
const clients: TestClient[] = [];

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
      staleMs: 10_000,
      replayWindowMs: 30_000,
      upstreamTimeoutMs: 5000,
    },
    quietLog,
  );
  e = await startEdge({
    // Only Frankfurt (cluster 1) is real; the others point at a closed port.
    topology: topologyFor({ fra: gw.url }, {}, `${h.relay.vip.host}:${h.relay.vip.port}`),
    bindings: { ...secrets.bindings, GR_LOCAL_DEV: "true" },
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await e?.dispose();
  await gw?.stop();
  await h?.close();
});

const auth = { authorization: `Bearer ${secrets.apiKey}` };

describe("edge + real transceiver", () => {
  it("offer through the edge → answer → media connects and echoes; trickle, status, hang-up by call id", async () => {
    const client = createTestClient();
    clients.push(client);
    const offer = await client.createOffer();
    const res = await e.fetch("/v1/realtime/calls", {
      method: "POST",
      city: "frankfurt",
      headers: { ...auth, "content-type": "application/sdp" },
      body: offer,
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-relay-cluster")).toBe("fra");
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const location = res.headers.get("location")!;
    const answer = await res.text();
    // The transceiver advertised the ingress the edge told it: the topology's global VIP.
    expect(answer).toContain(`${h.relay.vip.host} ${h.relay.vip.port} typ`);
    await client.setAnswer(answer);
    await client.connected();
    for (let i = 0; i < 20; i++) client.sendAudio(Buffer.from([7, i]), i, i * 960);
    await until(() => client.received.some((p) => p.payload[0] === 7), "echoed audio");

    const status = await e.fetch(location, { headers: auth });
    expect(status.status).toBe(200);
    expect(((await status.json()) as { state: string }).state).toBe("connected");

    const trickle = await e.fetch(location, {
      method: "PATCH",
      headers: { ...auth, "content-type": "application/trickle-ice-sdpfrag", "if-match": etag },
      body: "a=mid:0\r\na=candidate:1 1 udp 2130706431 127.0.0.1 40000 typ host\r\n",
    });
    expect(trickle.status).toBe(204);
    const noMatch = await e.fetch(location, {
      method: "PATCH",
      headers: { ...auth, "content-type": "application/trickle-ice-sdpfrag" },
      body: "a=mid:0\r\n",
    });
    expect(noMatch.status).toBe(428);
    const stale = await e.fetch(location, {
      method: "PATCH",
      headers: { ...auth, "content-type": "application/trickle-ice-sdpfrag", "if-match": '"stale"' },
      body: "a=mid:0\r\n",
    });
    expect(stale.status).toBe(412);

    const del = await e.fetch(location, { method: "DELETE", headers: auth });
    expect(del.status).toBe(204);
    // The transceiver keeps an ended session's status for a while, or forgets it (404).
    const after = await e.fetch(location, { headers: auth });
    if (after.status === 200) expect(((await after.json()) as { state: string }).state).toBe("ended");
    else expect(after.status).toBe(404);
  });

  it("probes the gateway's /healthz and reads its load and capacity", async () => {
    const res = await e.fetch("/v1/regions?refresh=1", { city: "frankfurt" });
    const body = (await res.json()) as {
      clusters: { name: string; health: { status: string; capacity: number; source: string } }[];
    };
    const fra = body.clusters.find((c) => c.name === "fra")!;
    expect(fra.health).toMatchObject({ status: "up", source: "probe" });
    expect(fra.health.capacity).toBeGreaterThan(0);
    expect(body.clusters.find((c) => c.name === "iad")!.health.status).toBe("down");
  });

  it("WebSocket signalling through the edge to the transceiver's /v1/ws", async () => {
    const client = createTestClient();
    clients.push(client);
    const url = new URL("/v1/realtime/ws", e.url);
    url.protocol = "ws:";
    const ws = new WebSocket(url, ["gr-realtime", `gr-auth.${secrets.apiKey}`], {
      headers: { "MF-CF-Blob": JSON.stringify({ ...CITIES.frankfurt, clientAcceptEncoding: "" }) },
    });
    const messages: Record<string, unknown>[] = [];
    ws.on("message", (d) => messages.push(JSON.parse(String(d)) as Record<string, unknown>));
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    ws.send(JSON.stringify({ type: "offer", sdp: await client.createOffer() }));
    await until(() => messages.some((m) => m.type === "answer" || m.type === "error"), "answer");
    const answer = messages.find((m) => m.type === "answer");
    expect(answer, JSON.stringify(messages)).toBeDefined();
    await client.setAnswer(String(answer!.sdp));
    await client.connected();
    ws.send(JSON.stringify({ type: "hangup" }));
    await until(() => messages.some((m) => m.type === "ended"), "ended");
    ws.close();
  });
});
