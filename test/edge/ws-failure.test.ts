// The edge's WebSocket when the cluster side drops without a close frame (the cluster or its
// transceiver died): the client gets a Realtime-shaped error event and 1011, never a "normal"
// 1000. Real workerd, a cluster stand-in whose socket is torn down.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { FakeCluster } from "./fake-cluster.ts";
import { CITIES, CLUSTERS, topologyFor } from "./fixtures.ts";
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

describe("WebSocket when the cluster vanishes", () => {
  it("tells the client with an error event and closes with 1011", async () => {
    const url = new URL("/v1/realtime/ws", e.url);
    url.protocol = "ws:";
    const ws = new WebSocket(url, ["gr-realtime", `gr-auth.${secrets.apiKey}`], {
      headers: { "MF-CF-Blob": JSON.stringify({ ...CITIES.frankfurt, clientAcceptEncoding: "" }) },
    });
    const messages: Record<string, unknown>[] = [];
    ws.on("message", (d) => messages.push(JSON.parse(String(d)) as Record<string, unknown>));
    const closed = new Promise<number>((r) => ws.on("close", (code) => r(code)));
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    // Tear the cluster's side down: its sockets die without a close frame.
    await clusters.get("fra")!.stop();
    expect(await closed).toBe(1011);
    expect(messages.at(-1)).toMatchObject({
      type: "error",
      error: { type: "server_error", code: "cluster_connection_lost" },
    });
  });
});
