// Runs the edge worker in real workerd (Miniflare) from plain vitest: bundles edge/index.ts once
// per process with esbuild (what wrangler does), starts a Miniflare on an ephemeral port with the
// given bindings, and captures the worker's console output.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { formatKeyring, type Keyring, parseKeyring } from "../../shared/keys.ts";
import type { Topology } from "../../shared/topology/schema.ts";
import { CITIES, type CityName } from "./fixtures.ts";

const ROOT = join(import.meta.dirname, "..", "..");
let bundled: Promise<string> | null = null;

export function bundleEdge(): Promise<string> {
  bundled ??= (async () => {
    const dir = join(ROOT, ".tmp", "edge-test");
    mkdirSync(dir, { recursive: true });
    const r = await build({
      entryPoints: [join(ROOT, "edge", "index.ts")],
      bundle: true,
      format: "esm",
      platform: "neutral",
      target: "es2024",
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["module", "main"],
      write: false,
      logLevel: "error",
    });
    const code = r.outputFiles[0]!.contents;
    // Content-addressed: test files and runs share one bundle per version of the code.
    const out = join(dir, `worker-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.js`);
    if (!existsSync(out)) {
      // Parallel test files may build at once: write aside, then rename (atomic).
      writeFileSync(`${out}.${process.pid}`, code);
      renameSync(`${out}.${process.pid}`, out);
    }
    // Bundles of older code that nothing has used for an hour are removed.
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      if (p !== out && f.startsWith("worker-") && Date.now() - statSync(p).mtimeMs > 3_600_000)
        rmSync(p, { force: true });
    }
    return out;
  })();
  return bundled;
}

export interface Secrets {
  apiKey: string;
  apiKey2: string;
  clusterSecret: Uint8Array;
  callIdRing: Keyring;
  clientSecretKey: string;
  metricsToken: string;
  /** The secret bindings, as wrangler would pass them. */
  bindings: Record<string, string>;
}

const b64 = (n: number) => randomBytes(n).toString("base64");

export function makeSecrets(): Secrets {
  const apiKey = `sk-test-${randomBytes(12).toString("hex")}`;
  const apiKey2 = `sk-test-${randomBytes(12).toString("hex")}`;
  const clusterSecret = randomBytes(32);
  const callIdRing = parseKeyring(`3:${b64(32)}`, "test", 15);
  const clientSecretKey = b64(32);
  const metricsToken = randomBytes(16).toString("hex");
  const sha = (s: string) => createHash("sha256").update(s).digest("hex");
  return {
    apiKey,
    apiKey2,
    clusterSecret,
    callIdRing,
    clientSecretKey,
    metricsToken,
    bindings: {
      API_KEY_HASHES: `${sha(apiKey)},${sha(apiKey2)}`,
      GR_CLUSTER_SECRET: Buffer.from(clusterSecret).toString("base64"),
      GR_CALL_ID_KEYS: formatKeyring(callIdRing.keys),
      CLIENT_SECRET_KEY: clientSecretKey,
      METRICS_TOKEN: metricsToken,
    },
  };
}

export interface EdgeOptions {
  topology?: Topology | string;
  bindings?: Record<string, unknown>;
  ratelimits?: Record<string, { limit: number; period?: 10 | 60 }>;
  kv?: Record<string, Record<string, string>>;
  /** Serve HTTPS with a self-signed certificate (clients that insist on wss://, like openai's). */
  https?: boolean;
}

export interface Edge {
  url: URL;
  mf: Miniflare;
  logs: string[];
  fetch(
    path: string,
    init?: RequestInit & { city?: CityName; cf?: Record<string, unknown>; ip?: string },
  ): Promise<Response>;
  dispose(): Promise<void>;
}

export async function startEdge(o: EdgeOptions): Promise<Edge> {
  const scriptPath = await bundleEdge();
  const logs: string[] = [];
  const collect = (stream: NodeJS.ReadableStream) => {
    let buf = "";
    stream.on("data", (d: Buffer) => {
      buf += d.toString();
      let i = buf.indexOf("\n");
      while (i >= 0) {
        logs.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
        i = buf.indexOf("\n");
      }
    });
  };
  const bindings: Record<string, unknown> = { ...o.bindings };
  if (o.topology !== undefined) {
    bindings.TOPOLOGY_JSON = typeof o.topology === "string" ? o.topology : JSON.stringify(o.topology);
  }
  const mf = new Miniflare({
    modules: true,
    scriptPath,
    compatibilityDate: "2026-07-01",
    port: 0,
    host: "127.0.0.1",
    ...(o.https ? { https: true } : {}),
    bindings: bindings as Record<string, string>,
    ratelimits: Object.fromEntries(
      Object.entries(o.ratelimits ?? {}).map(([k, v], i) => [
        k,
        { namespace_id: String(1000 + i), simple: { limit: v.limit, period: v.period ?? 60 } },
      ]),
    ),
    kvNamespaces: Object.keys(o.kv ?? {}),
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      collect(stdout);
      collect(stderr);
    },
  });
  const url = await mf.ready;
  for (const [ns, entries] of Object.entries(o.kv ?? {})) {
    const kv = await mf.getKVNamespace(ns);
    for (const [k, v] of Object.entries(entries)) await kv.put(k, v);
  }
  return {
    url,
    mf,
    logs,
    async fetch(path, init = {}) {
      const { city, cf, ip, ...rest } = init;
      const headers = new Headers(rest.headers);
      headers.set("cf-connecting-ip", ip ?? "203.0.113.50");
      const cfObj = { ...(city ? CITIES[city] : {}), ...cf };
      let body = rest.body;
      if (body instanceof FormData) {
        // Miniflare bundles its own undici, which does not know Node's FormData: encode it here.
        const encoded = new Request("http://x/", { method: "POST", body });
        headers.set("content-type", encoded.headers.get("content-type")!);
        body = new Uint8Array(await encoded.arrayBuffer());
      }
      const res = await mf.dispatchFetch(new URL(path, url).href, {
        ...(rest as object),
        body,
        headers,
        cf: cfObj,
      } as never);
      return res as unknown as Response;
    },
    dispose: () => mf.dispose(),
  };
}
