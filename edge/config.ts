// Configuration from bindings, parsed once per isolate per distinct value. Every getter throws an
// EdgeError (500) naming the variable, never a secret's value, so a misconfigured deployment says what is
// wrong on the first request and in the log.
import { type ConfigVars, EnvReader } from "../shared/config/env-reader.ts";
import { importHmacKeys } from "../shared/hint/webcrypto.ts";
import { parseKeyring } from "../shared/keys.ts";
import { parseClusterKeys } from "../shared/signing/keys.ts";
import { importSigningKeys, type SigningKeys } from "../shared/signing/request.ts";
import { type ClusterSpec, parseTopology, type Topology } from "../shared/topology/schema.ts";
import { type ApiKeyHashes, parseApiKeyHashes } from "./auth/api-key.ts";
import { type ClientSecretKeys, importClientSecretKeys } from "./auth/client-secret.ts";
import type { Bindings } from "./env.ts";
import { type EdgeError, Errors } from "./errors.ts";
import type { HealthTiming } from "./health/book.ts";

export interface TopologyIndex {
  topology: Topology;
  byId: Map<number, ClusterSpec>;
}

export interface Tuning {
  maxAttempts: number;
  clusterTimeoutMs: number;
  deadlineMs: number;
  probeTimeoutMs: number;
  health: HealthTiming;
  rateLimitPeriodS: number;
  rateLimitKey: number;
  rateLimitIp: number;
}

const memo = new Map<string, Promise<unknown>>();

function once<T>(kind: string, raw: string, make: () => Promise<T>): Promise<T> {
  const k = `${kind}\u0000${raw}`;
  let p = memo.get(k) as Promise<T> | undefined;
  if (!p) {
    if (memo.size > 64) memo.clear();
    p = make();
    memo.set(k, p);
    // A failed parse is not cached: a fixed binding takes effect on the next request.
    p.catch(() => memo.delete(k));
  }
  return p;
}

function misconfigured(what: string, e: unknown): EdgeError {
  return Errors.misconfigured(`${what}: ${e instanceof Error ? e.message : String(e)}`);
}

const KV_TTL_MS = 30_000;
let kvCache: { key: string; text: string; atMs: number } | null = null;

export async function loadTopology(env: Bindings, nowMs: number): Promise<TopologyIndex> {
  let text: string;
  let source: string;
  const inline = env.TOPOLOGY_JSON ?? env.TOPOLOGY;
  if (inline !== undefined && inline !== "") {
    // Inline first: no I/O. Terraform writes the same value to KV before the script.
    source = env.TOPOLOGY_JSON !== undefined ? "var TOPOLOGY_JSON" : "var TOPOLOGY";
    text = typeof inline === "string" ? inline : JSON.stringify(inline);
  } else if (env.TOPOLOGY_KV) {
    const key = env.TOPOLOGY_KEY || "topology.json";
    source = `KV TOPOLOGY_KV/${key}`;
    if (kvCache && kvCache.key === key && nowMs - kvCache.atMs < KV_TTL_MS) text = kvCache.text;
    else {
      const v = await env.TOPOLOGY_KV.get(key, { cacheTtl: 60 });
      if (v === null) throw Errors.invalidTopology(`invalid topology (${source}): the key is missing`);
      kvCache = { key, text: v, atMs: nowMs };
      text = v;
    }
  } else {
    throw Errors.invalidTopology(
      "no topology configured: set the TOPOLOGY_JSON var or bind the TOPOLOGY_KV namespace",
    );
  }
  return once("topology", text, async () => {
    try {
      const topology = parseTopology(text, source);
      return { topology, byId: new Map(topology.clusters.map((c) => [c.id as number, c])) };
    } catch (e) {
      throw Errors.invalidTopology((e as Error).message);
    }
  });
}

/** GR_CLUSTER_SECRET: "id:base64,…" (the first signs) or one bare base64 secret (key id 0). */
export function clusterKey(env: Bindings): Promise<SigningKeys> {
  const raw = env.GR_CLUSTER_SECRET;
  if (!raw) return Promise.reject(Errors.misconfigured("GR_CLUSTER_SECRET is not set"));
  return once("cluster", raw, async () => {
    try {
      return await importSigningKeys(parseClusterKeys(raw, "GR_CLUSTER_SECRET"));
    } catch (e) {
      throw Errors.misconfigured((e as Error).message);
    }
  });
}

export function callIdKeys(env: Bindings): Promise<Map<number, CryptoKey>> {
  const raw = env.GR_CALL_ID_KEYS;
  if (!raw) return Promise.reject(Errors.misconfigured("GR_CALL_ID_KEYS is not set"));
  return once("callid", raw, async () => {
    try {
      return await importHmacKeys(parseKeyring(raw, "GR_CALL_ID_KEYS", 15).keys);
    } catch (e) {
      throw misconfigured("GR_CALL_ID_KEYS", e);
    }
  });
}

export function apiKeyHashes(env: Bindings): Promise<ApiKeyHashes> {
  const raw = env.API_KEY_HASHES ?? "";
  return once("apikeys", raw, async () => {
    try {
      return parseApiKeyHashes(raw);
    } catch (e) {
      throw Errors.misconfigured((e as Error).message);
    }
  });
}

/** null when CLIENT_SECRET_KEY is unset: client secrets are then simply not accepted. */
export function clientSecretKeys(env: Bindings): Promise<ClientSecretKeys | null> {
  const raw = env.CLIENT_SECRET_KEY;
  if (!raw) return Promise.resolve(null);
  return once("clientsecret", raw, async () => {
    try {
      return await importClientSecretKeys(raw);
    } catch (e) {
      throw Errors.misconfigured((e as Error).message);
    }
  });
}

export function tuning(env: Bindings): Tuning {
  const r = new EnvReader(env as unknown as ConfigVars);
  const t: Tuning = {
    maxAttempts: r.int("STEERING_MAX_ATTEMPTS", 1, 10, 3),
    clusterTimeoutMs: r.int("CLUSTER_TIMEOUT_MS", 50, 30_000, 2500),
    deadlineMs: r.int("SIGNALLING_DEADLINE_MS", 100, 60_000, 6000),
    probeTimeoutMs: r.int("PROBE_TIMEOUT_MS", 50, 30_000, 1500),
    health: {
      freshMs: r.int("HEALTH_FRESH_MS", 100, 600_000, 10_000),
      maxAgeMs: r.int("HEALTH_MAX_AGE_MS", 1000, 3_600_000, 60_000),
      passiveDownMs: r.int("PASSIVE_DOWN_MS", 100, 600_000, 15_000),
    },
    rateLimitPeriodS: r.int("RATE_LIMIT_PERIOD_S", 1, 3600, 10),
    rateLimitKey: r.int("RATE_LIMIT_KEY_LIMIT", 1, 1_000_000, 100),
    rateLimitIp: r.int("RATE_LIMIT_IP_LIMIT", 1, 1_000_000, 20),
  };
  if (r.problems.length > 0) throw Errors.misconfigured(r.problems.join("; "));
  return t;
}
