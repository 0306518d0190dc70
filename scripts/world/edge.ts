// The edge worker in workerd (Miniflare), run inside the fabric namespace by the world runner:
// bundles edge/index.ts as wrangler would and serves it on WORLD_EDGE_LISTEN. Each site's request
// carries its location in MF-CF-Blob, which Miniflare turns into request.cf, as Cloudflare would.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { Miniflare } from "miniflare";

const ROOT = join(import.meta.dirname, "..", "..");
const need = (k: string): string => {
  const v = process.env[k];
  if (!v) {
    console.error(JSON.stringify({ level: "error", msg: `${k} is not set` }));
    process.exit(2);
  }
  return v;
};
const [host, port] = need("WORLD_EDGE_LISTEN").split(":");
const out = join(need("TOPOLOGY_FILE"), "..", "edge-worker.js");
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
writeFileSync(out, r.outputFiles[0]!.contents);
const mf = new Miniflare({
  modules: true,
  scriptPath: out,
  // The bundle lives in the run's temporary directory, outside the working directory.
  modulesRoot: join(out, ".."),
  compatibilityDate: "2026-07-01",
  host: host!,
  port: Number(port),
  bindings: {
    TOPOLOGY_JSON: readFileSync(need("TOPOLOGY_FILE"), "utf8"),
    API_KEY_HASHES: createHash("sha256").update(need("WORLD_EDGE_API_KEY")).digest("hex"),
    GR_CLUSTER_SECRET: need("GR_CLUSTER_SECRET"),
    GR_CALL_ID_KEYS: need("GR_CALL_ID_KEYS"),
    CLIENT_SECRET_KEY: randomBytes(32).toString("base64"),
    GR_LOCAL_DEV: "true",
    LOG_LEVEL: "warn",
    RATE_LIMIT_KEY_LIMIT: "100000",
    RATE_LIMIT_IP_LIMIT: "100000",
  },
});
const url = await mf.ready;
const stop = async (): Promise<void> => {
  await mf.dispose().catch(() => {});
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
console.log(JSON.stringify({ msg: "ready", svc: "edge", url: url.href }));
