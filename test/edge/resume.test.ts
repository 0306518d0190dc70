// POST /v1/realtime/calls/{id}: resuming a call with a new offer, in real workerd. Routed by the
// call id alone like every follow-up (forged ids never reach a cluster), checked like a new call
// (SDP, content type, credentials), forwarded signed as POST /v1/calls/{id} with the caller's
// location and the ingress VIP, answered 200 with the SDP, the same Location and a new ETag.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeCluster } from "./fake-cluster.ts";
import { CLUSTERS, OFFER, topologyFor } from "./fixtures.ts";
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
    bindings: { ...secrets.bindings, RATE_LIMIT_IP_LIMIT: "100000", RATE_LIMIT_KEY_LIMIT: "100000" },
  });
});
afterAll(async () => {
  await e?.dispose();
  for (const f of clusters.values()) await f.stop();
});

const auth = { authorization: `Bearer ${secrets.apiKey}` };
const sdp = { ...auth, "content-type": "application/sdp" };

async function newCall(): Promise<string> {
  const res = await e.fetch("/v1/realtime/calls", {
    method: "POST",
    city: "frankfurt",
    headers: sdp,
    body: OFFER,
  });
  expect(res.status).toBe(201);
  return res.headers.get("location")!;
}

describe("resume a call with a new offer", () => {
  it("reaches the owning cluster signed, and answers 200 with the SDP, the same Location and an ETag", async () => {
    const location = await newCall();
    const callId = location.split("/").pop()!;
    const fra = clusters.get("fra")!;
    // Wherever the caller is now, the call id names the cluster.
    const res = await e.fetch(location, { method: "POST", city: "sydney", headers: sdp, body: OFFER });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/sdp/);
    expect(res.headers.get("location")).toBe(location);
    expect(res.headers.get("etag")).toMatch(/^"[^"]+"$/);
    expect(res.headers.get("x-relay-cluster")).toBe("fra");
    expect(await res.text()).toContain("v=0");
    const sent = fra.requests.at(-1)!;
    expect(sent).toMatchObject({ method: "POST", path: `/v1/calls/${callId}`, signature: "ok" });
    const body = JSON.parse(sent.body) as {
      sdp: string;
      client: { country?: string };
      ingress: { vip: string };
    };
    expect(body.sdp).toBe(OFFER);
    expect(body.client.country).toBe("AU");
    expect(body.ingress.vip).toBeTruthy();
  });

  it("refuses what a new call would refuse, and forged ids without asking any cluster", async () => {
    const location = await newCall();
    const sessions = () =>
      [...clusters.values()].reduce(
        (n, f) => n + f.requests.filter((r) => r.path.startsWith("/v1/calls")).length,
        0,
      );
    const before = sessions();
    const cases: [string, Record<string, string>, string, number][] = [
      [location, { ...auth, "content-type": "application/json" }, "{}", 415],
      [location, sdp, "v=0\r\nnope", 400],
      [location, { "content-type": "application/sdp" }, OFFER, 401],
      [`${location.slice(0, -2)}${location.endsWith("AA") ? "BB" : "AA"}`, sdp, OFFER, 404],
    ];
    for (const [path, headers, body, status] of cases) {
      const res = await e.fetch(path, { method: "POST", headers, body });
      expect(res.status, `${status} case`).toBe(status);
    }
    expect(sessions()).toBe(before);
  });
});
