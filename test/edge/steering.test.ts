// Geo-steering and failover in real workerd (Miniflare) against four signed cluster stand-ins on
// loopback: Frankfurt, Ashburn, São Paulo, Sydney.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { until } from "../support/wait.ts";
import { FakeCluster } from "./fake-cluster.ts";
import { CITIES, type CityName, CLUSTERS, OFFER, topologyFor } from "./fixtures.ts";
import { type Edge, makeSecrets, startEdge } from "./harness.ts";

const secrets = makeSecrets();
const clusters = new Map<string, FakeCluster>();
let edges: Edge[] = [];

beforeAll(async () => {
  for (const c of CLUSTERS) {
    const f = new FakeCluster(c.name, c.id, secrets.clusterSecret, secrets.callIdRing);
    await f.start();
    clusters.set(c.name, f);
  }
});
afterEach(async () => {
  await Promise.all(edges.map((e) => e.dispose()));
  edges = [];
  for (const f of clusters.values()) {
    if (f.port === 0 || f.mode !== "ok" || typeof f.health !== "object" || f.health.status !== "ok") {
      f.mode = "ok";
      f.health = { status: "ok", load: 0, capacity: 100 };
    }
  }
});
afterAll(async () => {
  for (const f of clusters.values()) await f.stop();
});

const cluster = (n: string) => clusters.get(n)!;

async function edge(bindings: Record<string, unknown> = {}): Promise<Edge> {
  const urls = Object.fromEntries([...clusters].map(([n, f]) => [n, f.url]));
  const e = await startEdge({
    topology: topologyFor(urls),
    bindings: { ...secrets.bindings, CLUSTER_TIMEOUT_MS: "2000", ...bindings },
  });
  edges.push(e);
  return e;
}

const post = (e: Edge, city: CityName, cf: Record<string, unknown> = {}) =>
  e.fetch("/v1/realtime/calls", {
    method: "POST",
    city,
    cf,
    headers: { authorization: `Bearer ${secrets.apiKey}`, "content-type": "application/sdp" },
    body: OFFER,
  });

function timing(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (res.headers.get("server-timing") ?? "").split(",")) {
    const [name, ...params] = part.trim().split(";");
    out[name!] = params.join(";");
  }
  return out;
}

describe("geo-steering", () => {
  it.each(["sydney", "frankfurt", "virginia", "saoPaulo"] as CityName[])(
    "a call from %s lands on the nearest cluster",
    async (city) => {
      const e = await edge();
      const before = cluster(CITIES[city].expect).creates.length;
      const res = await post(e, city);
      expect(res.status).toBe(201);
      expect(res.headers.get("x-relay-cluster")).toBe(CITIES[city].expect);
      expect(cluster(CITIES[city].expect).creates.length).toBe(before + 1);
      expect(res.headers.get("content-type")).toBe("application/sdp");
      expect(res.headers.get("location")).toMatch(/^\/v1\/realtime\/calls\/rtc_[A-Za-z0-9_-]{48}$/);
      expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]+"$/);
      expect(await res.text()).toContain(`s=${CITIES[city].expect}`);
      const t = timing(res);
      expect(t.edge).toMatch(/^dur=\d/);
      expect(t.cluster).toContain(`desc="${CITIES[city].expect}"`);
      expect(t.attempts).toBe('desc="1"');
      expect(t.steer).toBe('desc="coordinates"');
    },
  );

  it("tells the cluster who is calling and which ingress to advertise, signed", async () => {
    const e = await edge();
    await post(e, "saoPaulo");
    const req = cluster("gru").creates.at(-1)!;
    expect(req.signature).toBe("ok");
    const body = JSON.parse(req.body);
    expect(body.sdp).toBe(OFFER);
    expect(body.client).toEqual({
      region: "SA",
      country: "BR",
      continent: "SA",
      colo: "GRU",
      latitude: -23.5505,
      longitude: -46.6333,
    });
    expect(body.ingress).toEqual({ vip: "198.51.100.10:3478" });
  });

  it("falls back to the country when there are no coordinates", async () => {
    const e = await edge();
    const res = await post(e, "sydney", { latitude: "", longitude: "", country: "BR", continent: "SA" });
    expect(res.headers.get("x-relay-cluster")).toBe("gru");
    expect(timing(res).steer).toBe('desc="country"');
  });
});

describe("failover", () => {
  it("goes to the next nearest when the nearest is down, then avoids it", async () => {
    const e = await edge();
    const fra = cluster("fra");
    const port = fra.port;
    await fra.stop();
    try {
      const res = await post(e, "frankfurt");
      expect(res.status).toBe(201);
      expect(res.headers.get("x-relay-cluster")).toBe("iad");
      expect(timing(res).attempts).toBe('desc="2"');
      // Passive marking: the next call skips Frankfurt at once.
      const again = await post(e, "frankfurt");
      expect(again.headers.get("x-relay-cluster")).toBe("iad");
      expect(timing(again).attempts).toBe('desc="1"');
      const regions = (await (await e.fetch("/v1/regions", { city: "frankfurt" })).json()) as {
        clusters: { name: string; health: { status: string; source: string } }[];
      };
      expect(regions.clusters.find((c) => c.name === "fra")!.health.status).toBe("down");
      const metrics = await (
        await e.fetch("/internal/metrics", { headers: { authorization: `Bearer ${secrets.metricsToken}` } })
      ).text();
      expect(metrics).toMatch(/gr_edge_failovers_total\{cluster="fra"\} 1/);
    } finally {
      await fra.start(port);
    }
  });

  it("goes to the next nearest when the nearest is full (503), honouring Retry-After", async () => {
    const e = await edge();
    cluster("syd").mode = "full";
    const sydBefore = cluster("syd").creates.length;
    const res = await post(e, "sydney");
    expect(res.status).toBe(201);
    const second = res.headers.get("x-relay-cluster");
    expect(second).not.toBe("syd");
    expect(cluster("syd").creates.length).toBe(sydBefore + 1);
    // Marked full for its Retry-After: not asked again right away.
    const again = await post(e, "sydney");
    expect(again.headers.get("x-relay-cluster")).toBe(second);
    expect(cluster("syd").creates.length).toBe(sydBefore + 1);
  });

  it("times out a hanging cluster and fails over within the deadline", async () => {
    const e = await edge({ CLUSTER_TIMEOUT_MS: "1500" });
    cluster("iad").mode = "hang";
    const res = await post(e, "virginia");
    expect(res.status).toBe(201);
    expect(res.headers.get("x-relay-cluster")).not.toBe("iad");
    expect(timing(res).attempts).toBe('desc="2"');
  });

  it("passes a cluster's 4xx through without failing over", async () => {
    const e = await edge();
    cluster("fra").mode = "bad-request";
    const iadBefore = cluster("iad").creates.length;
    const res = await post(e, "frankfurt");
    expect(res.status).toBe(422);
    expect(res.headers.get("x-relay-cluster")).toBe("fra");
    expect(await res.json()).toEqual({
      error: { type: "invalid_request_error", code: "no_opus", message: "offer has no opus" },
    });
    expect(cluster("iad").creates.length).toBe(iadBefore);
  });

  it("answers 503 + Retry-After when every attempt fails, bounded by STEERING_MAX_ATTEMPTS", async () => {
    const e = await edge({ STEERING_MAX_ATTEMPTS: "2" });
    for (const f of clusters.values()) f.mode = "full";
    const before = [...clusters.values()].reduce((n, f) => n + f.creates.length, 0);
    const res = await post(e, "frankfurt");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("3");
    const body = (await res.json()) as { error: { code: string } };
    expect(body.error.code).toBe("no_cluster_available");
    const after = [...clusters.values()].reduce((n, f) => n + f.creates.length, 0);
    expect(after - before).toBe(2);
    // The second call tries the two clusters not yet marked full; the third has no candidate left
    // and answers at once with the time until the first mark lapses.
    const res2 = await post(e, "frankfurt");
    expect(res2.status).toBe(503);
    const res3 = await post(e, "frankfurt");
    expect(res3.status).toBe(503);
    expect(res3.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
  });
});

describe("active health probes", () => {
  it("probes /healthz (signed) and steers around a draining cluster before any call fails", async () => {
    const e = await edge({ HEALTH_FRESH_MS: "100" });
    cluster("fra").health = { status: "draining", load: 0, capacity: 100 };
    const fraBefore = cluster("fra").creates.length;
    const res = await e.fetch("/v1/regions?refresh=1", { city: "frankfurt" });
    const body = (await res.json()) as {
      clusters: { name: string; health: { status: string; capacity: number } }[];
      you: { nearest: string };
    };
    expect(body.clusters.find((c) => c.name === "fra")!.health.status).toBe("draining");
    expect(body.clusters.find((c) => c.name === "iad")!.health.status).toBe("up");
    expect(body.you.nearest).toBe("iad");
    const probes = cluster("fra").requests.filter((r) => r.path === "/healthz");
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.every((p) => p.signature === "ok")).toBe(true);
    const call = await post(e, "frankfurt");
    expect(call.headers.get("x-relay-cluster")).toBe("iad");
    expect(cluster("fra").creates.length).toBe(fraBefore);
  });

  it("treats a cluster at capacity as full and one that fails its probe as down", async () => {
    const e = await edge();
    cluster("fra").health = { status: "ok", load: 100, capacity: 100 };
    cluster("iad").health = "error";
    await e.fetch("/v1/regions?refresh=1", { city: "frankfurt" });
    const res = await post(e, "frankfurt");
    expect(res.headers.get("x-relay-cluster")).toBe("gru");
  });

  it("starts probes in the background from ordinary traffic", async () => {
    const e = await edge();
    const before = cluster("syd").requests.filter((r) => r.path === "/healthz").length;
    await post(e, "sydney");
    // The probe runs in waitUntil; poll until it has landed (no timing assertion).
    await until(
      () => cluster("syd").requests.filter((r) => r.path === "/healthz").length > before,
      "a background probe of syd",
    );
  });
});
