// The gateway's configuration from the environment (docs/transceiver.md, "Gateway environment").
import { EnvReader } from "../../shared/config/env-reader.ts";
import type { Keyring } from "../../shared/keys.ts";
import { DEFAULT_REPLAY_WINDOW_MS } from "../../shared/signing/request.ts";
import type { HostPort } from "../../shared/topology/address.ts";
import { type MembershipStore, RedisMembership } from "../transceiver/membership.ts";
import { RedisNonces } from "../transceiver/nonce-store.ts";
import type { SharedNonces } from "../transceiver/signing.ts";

/** How often the gateway probes each transceiver's /healthz (GATEWAY_POLL_MS). */
export const DEFAULT_GATEWAY_POLL_MS = 500;

export interface GatewayConfig {
  clusterId: number;
  http: HostPort;
  /** GR_CLUSTER_SECRET: verifies the edge, signs what is forwarded to the transceivers. */
  clusterKeys: Keyring;
  /** Static members: id → base URL (polled at /healthz). */
  transceivers: Map<number, string>;
  /** Used when `transceivers` is empty: members from heartbeats, then polled at /healthz. */
  membership: MembershipStore | undefined;
  pollMs: number;
  /** A /healthz probe that takes longer than this marks the member down. */
  healthTimeoutMs: number;
  /** A member not heard from for this long is not used. */
  staleMs: number;
  /** How long calls of a failed transceiver are answered as ended (`transceiver_failed`). */
  failedMemoryMs: number;
  replayWindowMs: number;
  upstreamTimeoutMs: number;
  /** Nonces shared with the cluster's other gateway replicas (Redis when REDIS_URL is set). */
  nonces?: SharedNonces & { close(): Promise<void> };
}

/** What Gateway.start takes: the tuning added for failure handling has defaults. */
export type GatewayInit = Omit<GatewayConfig, "healthTimeoutMs" | "failedMemoryMs"> &
  Partial<Pick<GatewayConfig, "healthTimeoutMs" | "failedMemoryMs">>;

export function withDefaults(c: GatewayInit): GatewayConfig {
  return { ...c, healthTimeoutMs: c.healthTimeoutMs ?? 1000, failedMemoryMs: c.failedMemoryMs ?? 600_000 };
}

export function parseMembers(text: string, what = "GATEWAY_TRANSCEIVERS"): Map<number, string> | string {
  const out = new Map<number, string>();
  for (const [i, part] of text.split(",").entries()) {
    const m = /^\s*(\d{1,5})\s*=\s*(https?:\/\/\S+?)\/?\s*$/.exec(part);
    if (!m) return `${what}[${i}]: expected "<transceiverId>=http://host:port"`;
    const id = Number(m[1]);
    if (id < 1 || id > 65535) return `${what}[${i}]: transceiver id ${id} is outside 1-65535`;
    if (out.has(id)) return `${what}[${i}]: transceiver id ${id} is repeated`;
    out.set(id, m[2]!);
  }
  return out;
}

export function loadGatewayConfig(env: Record<string, string | undefined>): GatewayConfig {
  const r = new EnvReader(env);
  const clusterId = r.int("CLUSTER_ID", 1, 65535);
  const http = r.hostPort("GATEWAY_HTTP", "127.0.0.1:7101");
  const clusterKeys = r.clusterKeys("GR_CLUSTER_SECRET");
  const list = r.optional("GATEWAY_TRANSCEIVERS");
  const redisUrl = r.optional("REDIS_URL");
  let transceivers = new Map<number, string>();
  if (list !== undefined) {
    const parsed = parseMembers(list);
    if (typeof parsed === "string") r.problems.push(parsed);
    else transceivers = parsed;
  } else if (redisUrl === undefined) {
    r.problems.push("GATEWAY_TRANSCEIVERS or REDIS_URL: one is required to find the transceivers");
  }
  const cfg: GatewayConfig = {
    clusterId,
    http,
    clusterKeys,
    transceivers,
    membership: undefined,
    pollMs: r.int("GATEWAY_POLL_MS", 100, 60_000, DEFAULT_GATEWAY_POLL_MS),
    healthTimeoutMs: r.int("GATEWAY_HEALTH_TIMEOUT_MS", 100, 60_000, 1000),
    staleMs: r.int("GATEWAY_STALE_MS", 500, 600_000, 2000),
    failedMemoryMs: r.int("GATEWAY_FAILED_MEMORY_MS", 1000, 86_400_000, 600_000),
    replayWindowMs: r.int("REPLAY_WINDOW_MS", 1000, 60_000, DEFAULT_REPLAY_WINDOW_MS),
    upstreamTimeoutMs: r.int("GATEWAY_UPSTREAM_TIMEOUT_MS", 100, 120_000, 10_000),
  };
  r.done();
  if (list === undefined && redisUrl !== undefined) cfg.membership = new RedisMembership(redisUrl);
  if (redisUrl !== undefined) cfg.nonces = new RedisNonces(redisUrl);
  return cfg;
}
