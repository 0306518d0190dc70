// Local development: renders the edge's secrets and vars as a dotenv file for
// `wrangler dev --env-file <file>` (values stay off the command line, where `ps` would show them).
// Library: edgeEnvFile({...}). CLI (reads the same environment the other programs read):
//   GR_CLUSTER_SECRET=1:… GR_CALL_ID_KEYS=1:… TOPOLOGY_FILE=config/topology.local.json \
//   EDGE_API_KEYS=local-dev-key [CLIENT_SECRET_KEY=…] node edge/dev/env-file.ts .tmp/edge.env
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { parseTopology } from "../../shared/topology/schema.ts";

export interface EdgeEnvInput {
  /** Topology JSON text (validated here, so a bad file fails before wrangler starts). */
  topologyJson: string;
  /** Plain API keys; only their SHA-256 goes into the file. */
  apiKeys: string[];
  clusterSecret: string;
  callIdKeys: string;
  /** Generated when absent. */
  clientSecretKey?: string;
  /** Opens /internal/metrics without a token (default true: this is for local runs). */
  localDev?: boolean;
  extra?: Record<string, string>;
}

const quote = (v: string): string => {
  if (v.includes("'") || /[\r\n]/.test(v)) throw new Error("dotenv value may not contain ' or newlines");
  return `'${v}'`;
};

export function edgeEnvFile(i: EdgeEnvInput): string {
  const topology = parseTopology(i.topologyJson, "topology");
  const vars: Record<string, string> = {
    TOPOLOGY_JSON: JSON.stringify(topology),
    API_KEY_HASHES: i.apiKeys.map((k) => createHash("sha256").update(k).digest("hex")).join(","),
    GR_CLUSTER_SECRET: i.clusterSecret,
    GR_CALL_ID_KEYS: i.callIdKeys,
    CLIENT_SECRET_KEY: i.clientSecretKey ?? randomBytes(32).toString("base64"),
    GR_LOCAL_DEV: i.localDev === false ? "false" : "true",
    ...i.extra,
  };
  return `${Object.entries(vars)
    .map(([k, v]) => `${k}=${quote(v)}`)
    .join("\n")}\n`;
}

if (import.meta.main) {
  const need = (name: string): string => {
    const v = process.env[name];
    if (!v) {
      console.error(JSON.stringify({ level: "error", msg: `${name} is not set` }));
      process.exit(2);
    }
    return v;
  };
  const out = process.argv[2];
  if (!out) {
    console.error("usage: node edge/dev/env-file.ts <output file>");
    process.exit(2);
  }
  const text = edgeEnvFile({
    topologyJson: readFileSync(need("TOPOLOGY_FILE"), "utf8"),
    apiKeys: (process.env.EDGE_API_KEYS ?? "local-dev-key").split(","),
    clusterSecret: need("GR_CLUSTER_SECRET"),
    callIdKeys: need("GR_CALL_ID_KEYS"),
    ...(process.env.CLIENT_SECRET_KEY ? { clientSecretKey: process.env.CLIENT_SECRET_KEY } : {}),
  });
  writeFileSync(out, text, { mode: 0o600 });
}
