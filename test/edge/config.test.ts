// Configuration paths in real workerd: topology from a var, the terraform alias or KV; a bad
// topology or a missing secret is a clear 500 on the first request (and logged once); rate limits
// through the Workers Rate Limiting binding and the isolate-local fallback.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { until } from "../support/wait.ts";
import { FakeCluster } from "./fake-cluster.ts";
import { OFFER, topologyFor } from "./fixtures.ts";
import { type Edge, type EdgeOptions, makeSecrets, startEdge } from "./harness.ts";

const secrets = makeSecrets();
let fra: FakeCluster;
let edges: Edge[] = [];

beforeAll(async () => {
  fra = new FakeCluster("fra", 1, secrets.clusterSecret, secrets.callIdRing);
  await fra.start();
});
afterEach(async () => {
  await Promise.all(edges.map((x) => x.dispose()));
  edges = [];
});
afterAll(async () => {
  await fra.stop();
});

async function edge(o: EdgeOptions): Promise<Edge> {
  const x = await startEdge(o);
  edges.push(x);
  return x;
}
const topology = () => topologyFor({ fra: fra.url });

// Miniflare's rate limiter counts in windows of the wall clock (floor(now / period)) and forgets
// every count when a window ends, so a test whose calls straddle a boundary would see its limit
// reset midway. Start such a test with at least MARGIN_MS of the window left.
const MARGIN_MS = 8000;
async function windowWithRoom(periodS: number): Promise<void> {
  const periodMs = periodS * 1000;
  const left = periodMs - (Date.now() % periodMs);
  if (left < MARGIN_MS) await new Promise((r) => setTimeout(r, left + 50));
}
const call = (x: Edge, token = secrets.apiKey, ip?: string) =>
  x.fetch("/v1/realtime/calls", {
    method: "POST",
    city: "frankfurt",
    ip,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/sdp" },
    body: OFFER,
  });

describe("topology sources", () => {
  it("reads TOPOLOGY (terraform's inline name) and KV TOPOLOGY_KV/<TOPOLOGY_KEY>", async () => {
    const inline = await edge({ bindings: { ...secrets.bindings, TOPOLOGY: JSON.stringify(topology()) } });
    expect((await call(inline)).status).toBe(201);
    const kv = await edge({
      bindings: secrets.bindings,
      kv: { TOPOLOGY_KV: { "topology.json": JSON.stringify(topology()) } },
    });
    expect((await call(kv)).status).toBe(201);
    expect(await (await kv.fetch("/healthz")).json()).toMatchObject({ status: "ok", clusters: 4 });
  });

  it("a bad topology answers 500 naming the problem, healthz says so, and it is logged once", async () => {
    const bad = JSON.parse(JSON.stringify(topology()));
    bad.clusters[1].latitude = 123;
    bad.defaultClusterId = 9;
    const x = await edge({ topology: JSON.stringify(bad), bindings: secrets.bindings });
    const res = await call(x);
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("invalid_topology");
    expect(body.error.message).toContain("clusters[1].latitude: must be a number between -90 and 90");
    expect(body.error.message).toContain("topology.defaultClusterId: names no cluster (9)");
    await call(x);
    const health = await x.fetch("/healthz");
    expect(health.status).toBe(503);
    expect(((await health.json()) as { status: string }).status).toBe("misconfigured");
    await until(() => x.logs.some((l) => l.includes("clusters[1].latitude")), "the error's log line");
    const lines = x.logs.filter((l) => l.includes("clusters[1].latitude"));
    expect(lines.length).toBe(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", code: "invalid_topology" });
  });

  it("no topology at all, and invalid JSON, are explained", async () => {
    const none = await edge({ bindings: secrets.bindings });
    expect(((await (await call(none)).json()) as { error: { message: string } }).error.message).toContain(
      "set the TOPOLOGY_JSON var or bind the TOPOLOGY_KV namespace",
    );
    const junk = await edge({ topology: "{not json", bindings: secrets.bindings });
    expect(((await (await call(junk)).json()) as { error: { message: string } }).error.message).toContain(
      "not valid JSON",
    );
  });
});

describe("secrets", () => {
  it("a missing or short GR_CLUSTER_SECRET is a 500 naming the variable, never a value", async () => {
    const { GR_CLUSTER_SECRET: _, ...rest } = secrets.bindings;
    const x = await edge({ topology: topology(), bindings: rest });
    const res = await call(x);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      "GR_CLUSTER_SECRET is not set",
    );
    const short = await edge({ topology: topology(), bindings: { ...rest, GR_CLUSTER_SECRET: "c2hvcnQ=" } });
    const msg = ((await (await call(short)).json()) as { error: { message: string } }).error.message;
    expect(msg).toContain("GR_CLUSTER_SECRET[0]: secret has 5 bytes");
    expect(msg).not.toContain("c2hvcnQ");
  });

  it("without CLIENT_SECRET_KEY client secrets are disabled (500 to mint, 401 to use)", async () => {
    const { CLIENT_SECRET_KEY: _, ...rest } = secrets.bindings;
    const x = await edge({ topology: topology(), bindings: rest });
    const mint = await x.fetch("/v1/realtime/client_secrets", {
      method: "POST",
      headers: { authorization: `Bearer ${secrets.apiKey}` },
    });
    expect(mint.status).toBe(500);
    expect((await call(x, "ek_abc.def")).status).toBe(401);
  });

  it("/internal/metrics does not exist in production without METRICS_TOKEN", async () => {
    const { METRICS_TOKEN: _, ...rest } = secrets.bindings;
    const x = await edge({ topology: topology(), bindings: rest });
    expect((await x.fetch("/internal/metrics")).status).toBe(404);
    const local = await edge({ topology: topology(), bindings: { ...rest, GR_LOCAL_DEV: "true" } });
    expect((await local.fetch("/internal/metrics")).status).toBe(200);
  });

  it("a bad tuning var is named", async () => {
    const x = await edge({
      topology: topology(),
      bindings: { ...secrets.bindings, CLUSTER_TIMEOUT_MS: "soon" },
    });
    const body = (await (await call(x)).json()) as { error: { message: string } };
    expect(body.error.message).toBe('CLUSTER_TIMEOUT_MS: must be an integer 50-30000, got "soon"');
  });
});

describe("rate limits", () => {
  it("per client IP through the Workers Rate Limiting binding: 429 + Retry-After", async () => {
    const x = await edge({
      topology: topology(),
      bindings: { ...secrets.bindings, RATE_LIMIT_PERIOD_S: "60" },
      ratelimits: { RL_IP: { limit: 3 }, RL_KEY: { limit: 1000 } },
    });
    await windowWithRoom(60);
    for (let i = 0; i < 3; i++) expect((await call(x, secrets.apiKey, "198.51.100.1")).status).toBe(201);
    const limited = await call(x, secrets.apiKey, "198.51.100.1");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(((await limited.json()) as { error: { code: string; type: string } }).error).toMatchObject({
      type: "rate_limit_error",
      code: "rate_limit_ip",
    });
    // Another address is unaffected; unauthenticated floods count against the address too.
    expect((await call(x, secrets.apiKey, "198.51.100.2")).status).toBe(201);
    expect((await call(x, "sk-wrong", "198.51.100.1")).status).toBe(429);
  });

  it("per key through the binding, across addresses", async () => {
    const x = await edge({
      topology: topology(),
      bindings: secrets.bindings,
      ratelimits: { RL_IP: { limit: 1000 }, RL_KEY: { limit: 2, period: 60 } },
    });
    await windowWithRoom(60);
    expect((await call(x, secrets.apiKey, "198.51.100.1")).status).toBe(201);
    expect((await call(x, secrets.apiKey, "198.51.100.2")).status).toBe(201);
    const limited = await call(x, secrets.apiKey, "198.51.100.3");
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe("rate_limit_key");
    expect((await call(x, secrets.apiKey2, "198.51.100.3")).status).toBe(201);
  });

  it("one RATE_LIMITER binding (terraform) serves both scopes", async () => {
    const x = await edge({
      topology: topology(),
      bindings: secrets.bindings,
      ratelimits: { RATE_LIMITER: { limit: 2 } },
    });
    await windowWithRoom(60);
    expect((await call(x, secrets.apiKey, "198.51.100.9")).status).toBe(201);
    expect((await call(x, secrets.apiKey, "198.51.100.9")).status).toBe(201);
    expect((await call(x, secrets.apiKey, "198.51.100.9")).status).toBe(429);
  });

  it("falls back to isolate-local windows without a binding", async () => {
    const x = await edge({
      topology: topology(),
      bindings: { ...secrets.bindings, RATE_LIMIT_IP_LIMIT: "2", RATE_LIMIT_PERIOD_S: "3600" },
    });
    await windowWithRoom(3600);
    expect((await call(x, secrets.apiKey, "198.51.100.7")).status).toBe(201);
    expect((await call(x, secrets.apiKey, "198.51.100.7")).status).toBe(201);
    const limited = await call(x, secrets.apiKey, "198.51.100.7");
    expect(limited.status).toBe(429);
    const retry = Number(limited.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(3600);
  });
});
