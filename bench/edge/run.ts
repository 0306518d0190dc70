// Time the edge adds to signalling (npm run bench:edge): offer → answer through the edge worker
// (real workerd via Miniflare, steering, auth, signing, health, metrics) versus straight to the
// same cluster stand-in (a signed POST /v1/calls from the client, as the edge would send it).
// Both paths run in the same process, interleaved, on the same keep-alive HTTP client, so load
// from other work on the machine hits both alike; the figure that matters is the difference.
//
//   node bench/edge/run.ts [--n 400] [--warmup 50] [--ws 200] [--json]
//
// A third path isolates the cost of the edge's own logic: the same Miniflare/workerd hop with a
// bare proxy worker (bench/edge/bare-proxy.ts: sign, POST, return; nothing else).
// Also: a WebSocket offer → answer on an open socket, through the edge vs direct.
// Bounded: defaults finish in well under a minute on a shared 2-core machine.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import WebSocket from "ws";
import { importSigningKeys, signRequest } from "../../shared/signing/request.ts";
import { FakeCluster } from "../../test/edge/fake-cluster.ts";
import { CITIES, OFFER, topologyFor } from "../../test/edge/fixtures.ts";
import { makeSecrets, startEdge } from "../../test/edge/harness.ts";
import { keyringOf } from "../../test/support/signed-call.ts";

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const N = option("n", 400);
const WARMUP = option("warmup", 50);
const WS_N = option("ws", 200);
const JSON_ONLY = process.argv.includes("--json");

interface Stats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    n: s.length,
    p50: r(q(0.5)),
    p90: r(q(0.9)),
    p99: r(q(0.99)),
    mean: r(s.reduce((a, b) => a + b, 0) / s.length),
  };
}

const secrets = makeSecrets();
const cluster = new FakeCluster("fra", 1, secrets.clusterSecret, secrets.callIdRing);
await cluster.start();
const edge = await startEdge({
  topology: topologyFor({ fra: cluster.url, iad: cluster.url, gru: cluster.url, syd: cluster.url }),
  bindings: {
    ...secrets.bindings,
    LOG_LEVEL: "warn",
    RATE_LIMIT_IP_LIMIT: "1000000",
    RATE_LIMIT_KEY_LIMIT: "1000000",
  },
});
const bareScript = join(import.meta.dirname, "..", "..", ".tmp", "edge-test", `bare-${process.pid}.js`);
await build({
  entryPoints: [join(import.meta.dirname, "bare-proxy.ts")],
  bundle: true,
  format: "esm",
  platform: "neutral",
  outfile: bareScript,
  logLevel: "error",
});
const bare = new Miniflare({
  modules: true,
  scriptPath: bareScript,
  compatibilityDate: "2026-07-01",
  port: 0,
  host: "127.0.0.1",
  bindings: { CLUSTER_URL: cluster.url, SECRET_B64: Buffer.from(secrets.clusterSecret).toString("base64") },
});
const bareUrl = (await bare.ready).href;
const key = await importSigningKeys(keyringOf(secrets.clusterSecret));
const offer = new TextEncoder().encode(OFFER);
const cf = JSON.stringify({ ...CITIES.frankfurt, clientAcceptEncoding: "" });
const edgeUrl = new URL("/v1/realtime/calls", edge.url).href;

const body = new TextEncoder().encode(
  JSON.stringify({
    sdp: OFFER,
    client: { region: "EU", country: "DE", continent: "EU", colo: "FRA", latitude: 50.11, longitude: 8.68 },
    ingress: { vip: "198.51.100.10:3478" },
  }),
);

/** Milliseconds the edge itself reports: Server-Timing edge total minus the cluster hop. */
const inEdge: number[] = [];

async function direct(): Promise<number> {
  const t0 = performance.now();
  const sig = await signRequest(
    key,
    { method: "POST", pathAndQuery: "/v1/calls", body: body, target: "gateway:1" },
    Date.now(),
    randomBytes(16).toString("base64url"),
  );
  const res = await fetch(`${cluster.url}/v1/calls`, {
    method: "POST",
    headers: { "content-type": "application/json", ...sig },
    body,
  });
  const j = (await res.json()) as { sdp?: string };
  if (res.status !== 201 || !j.sdp) throw new Error(`direct: ${res.status}`);
  return performance.now() - t0;
}

async function viaEdge(): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(edgeUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${secrets.apiKey}`,
      "content-type": "application/sdp",
      "mf-cf-blob": cf,
    },
    body: offer,
  });
  const text = await res.text();
  const took = performance.now() - t0;
  if (res.status !== 201 || !text.startsWith("v=0")) throw new Error(`edge: ${res.status} ${text}`);
  const st = res.headers.get("server-timing") ?? "";
  const total = Number(/edge;dur=([\d.]+)/.exec(st)?.[1]);
  const hop = Number(/cluster;dur=([\d.]+)/.exec(st)?.[1]);
  if (Number.isFinite(total) && Number.isFinite(hop)) inEdge.push(total - hop);
  return took;
}

async function viaBare(): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(bareUrl, {
    method: "POST",
    headers: { "content-type": "application/sdp" },
    body: offer,
  });
  const text = await res.text();
  if (res.status !== 201 || !text.startsWith("v=0")) throw new Error(`bare: ${res.status} ${text}`);
  return performance.now() - t0;
}

const a: number[] = [];
const b: number[] = [];
const c: number[] = [];
const paths: [() => Promise<number>, number[]][] = [
  [direct, a],
  [viaEdge, b],
  [viaBare, c],
];
for (let i = 0; i < WARMUP; i++) for (const [f] of paths) await f();
inEdge.length = 0;
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  // Rotate which path goes first so none always follows another.
  for (let k = 0; k < paths.length; k++) {
    const [f, out] = paths[(i + k) % paths.length]!;
    out.push(await f());
  }
}
const httpMs = performance.now() - t0;

// WebSocket: one socket each way, offer → answer round trips on it.
function openWs(url: string, headers: Record<string, string>): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}
async function wsRound(ws: WebSocket, msg: string): Promise<number> {
  const t = performance.now();
  ws.send(msg);
  for (;;) {
    const m = await new Promise<string>((r) => ws.once("message", (d) => r(String(d))));
    if ((JSON.parse(m) as { type: string }).type === "answer") return performance.now() - t;
  }
}
const wsEdgeUrl = new URL("/v1/realtime/ws", edge.url);
wsEdgeUrl.protocol = "ws:";
const wsEdge = await openWs(wsEdgeUrl.href, { authorization: `Bearer ${secrets.apiKey}`, "mf-cf-blob": cf });
const sig = await signRequest(
  key,
  { method: "GET", pathAndQuery: "/v1/ws", body: new Uint8Array(0), target: "gateway:1" },
  Date.now(),
  randomBytes(16).toString("base64url"),
);
const wsDirect = await openWs(`ws://127.0.0.1:${cluster.port}/v1/ws`, sig);
const wsMsg = JSON.stringify({ type: "offer", sdp: OFFER });
const wsFull = JSON.stringify({
  type: "offer",
  sdp: OFFER,
  client: { region: "EU" },
  ingress: { vip: "198.51.100.10:3478" },
});
const wa: number[] = [];
const wb: number[] = [];
for (let i = 0; i < WS_N + 20; i++) {
  const x = await wsRound(wsDirect, wsFull);
  const y = await wsRound(wsEdge, wsMsg);
  if (i >= 20) {
    wa.push(x);
    wb.push(y);
  }
}
wsEdge.close();
wsDirect.close();
await edge.dispose();
await bare.dispose();
await cluster.stop();
rmSync(bareScript, { force: true });

const sa = stats(a);
const sb = stats(b);
const sc = stats(c);
const swa = stats(wa);
const swb = stats(wb);
const result = {
  bench: "edge",
  http: {
    direct: sa,
    edge: sb,
    addedP50Ms: Math.round((sb.p50 - sa.p50) * 1000) / 1000,
    addedP99Ms: Math.round((sb.p99 - sa.p99) * 1000) / 1000,
    ratioP50: Math.round((sb.p50 / sa.p50) * 100) / 100,
    bareProxy: sc,
    logicP50Ms: Math.round((sb.p50 - sc.p50) * 1000) / 1000,
    /** Server-Timing edge total − cluster hop, as the worker's clock saw it (ms granularity). */
    reportedInEdge: stats(inEdge),
    seconds: Math.round(httpMs / 100) / 10,
  },
  ws: {
    direct: swa,
    edge: swb,
    addedP50Ms: Math.round((swb.p50 - swa.p50) * 1000) / 1000,
    addedP99Ms: Math.round((swb.p99 - swa.p99) * 1000) / 1000,
  },
  node: process.version,
};
if (JSON_ONLY) console.log(JSON.stringify(result));
else {
  const row = (name: string, s: Stats) =>
    `${name.padEnd(28)} ${String(s.p50).padStart(8)} ${String(s.p90).padStart(8)} ${String(s.p99).padStart(8)} ${String(s.mean).padStart(8)}`;
  console.log(`offer -> answer, ms (n=${N} HTTP, ${WS_N} WebSocket; loopback, Miniflare/workerd)`);
  console.log(
    `${"".padEnd(28)} ${"p50".padStart(8)} ${"p90".padStart(8)} ${"p99".padStart(8)} ${"mean".padStart(8)}`,
  );
  console.log(row("HTTP direct to cluster", sa));
  console.log(row("HTTP through edge", sb));
  console.log(row("HTTP through bare proxy", sc));
  console.log(row("WebSocket direct", swa));
  console.log(row("WebSocket through edge", swb));
  console.log(
    `edge adds (HTTP) p50 ${result.http.addedP50Ms} ms (ratio ${result.http.ratioP50}x), of which its own logic (edge − bare proxy) ${result.http.logicP50Ms} ms; p99 ${sb.p99} ms through the edge vs ${sa.p99} ms direct (tails follow machine load). WebSocket adds p50 ${result.ws.addedP50Ms} ms per offer.`,
  );
  console.log(JSON.stringify(result));
}
