// Relay configuration from the environment (and optionally a JSON file named by RELAY_CONFIG_FILE
// whose keys are the same variable names; the environment wins). Every problem is reported with
// the variable it came from; secrets are never echoed.
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { ConfigError, EnvReader } from "../../shared/config/env-reader.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { parseHostPort } from "../../shared/topology/address.ts";
import { parseTopology, type Topology } from "../../shared/topology/schema.ts";
import type { FlowLimits } from "./core/flow-table.ts";
import { DEFAULT_RESTORE_LIMITS, type RestoreLimits } from "./core/restore.ts";
import { checkTimers, DEFAULT_TIMERS, type FlowTimers } from "./core/timers.ts";
import { parseStaticRegistry } from "./registry/registry.ts";
import { readTcpLimits, type TcpLimits } from "./shell/tcp-limits.ts";

export { ConfigError } from "../../shared/config/env-reader.ts";

export type RelayRole = "pop" | "cluster";

/** Everything a relay worker needs; plain data (it crosses into worker threads). */
export interface RelayConfig {
  role: RelayRole;
  /** POP id (role pop) or cluster id (role cluster). */
  id: number;
  topology: Topology;
  /** Hint keyring text (role pop). */
  hintKeys: string;
  workers: number;
  adminHost: string;
  adminPort: number;
  /**
   * Address to bind the VIP and backbone ports on instead of the topology's (RELAY_BIND_HOST),
   * for hosts behind NAT or a load balancer where the advertised address is not local (0.0.0.0).
   */
  bindHost: string | null;
  redisUrl: string | null;
  /** Static transceiver registry (cluster role, or a co-located POP), when no Redis. */
  transceivers: [number, string][] | null;
  drainMs: number;
  limits: FlowLimits;
  timers: FlowTimers;
  restore: RestoreLimits;
  socketBufferBytes: number;
  /** Redis flow TTL (ms); must outlive idle timeout + refresh period. */
  mirrorTtlMs: number;
  registryRefreshMs: number;
  /** Bounds of the ICE-TCP listener (a POP whose topology entry has vipTcpPort). */
  tcp: TcpLimits;
}

type Env = Record<string, string | undefined>;

/** Reads and validates the configuration; throws ConfigError listing every problem. */
export function loadConfig(env: Env = process.env): RelayConfig {
  let problems: string[] = [];
  let vars: Env = env;
  const file = env.RELAY_CONFIG_FILE;
  if (file) {
    try {
      const raw = JSON.parse(readFileSync(file, "utf8")) as unknown;
      if (typeof raw !== "object" || raw === null || Array.isArray(raw))
        throw new Error("must be a JSON object");
      const fromFile: Env = {};
      for (const [k, v] of Object.entries(raw)) fromFile[k] = typeof v === "string" ? v : JSON.stringify(v);
      vars = { ...fromFile, ...env };
    } catch (e) {
      problems.push(`RELAY_CONFIG_FILE (${file}): ${(e as Error).message}`);
    }
  }

  const reader = new EnvReader(vars, "relay");
  reader.problems.push(...problems);
  problems = reader.problems;
  const int = (name: string, def: number, min: number, max: number): number =>
    reader.int(name, min, max, def);

  const role = vars.RELAY_ROLE;
  if (role !== "pop" && role !== "cluster") {
    problems.push(`RELAY_ROLE: must be "pop" or "cluster", got ${JSON.stringify(role)}`);
  }
  const idVar = role === "cluster" ? "CLUSTER_ID" : "POP_ID";
  const id = int(idVar, 0, 1, 65535);
  if (role && (vars[idVar] === undefined || vars[idVar] === ""))
    problems.push(`${idVar}: required for RELAY_ROLE=${role}`);

  let topology: Topology | null = null;
  const topoFile = vars.TOPOLOGY_FILE;
  if (!topoFile) problems.push("TOPOLOGY_FILE: required (path to the topology JSON)");
  else {
    try {
      topology = parseTopology(readFileSync(topoFile, "utf8"), topoFile);
    } catch (e) {
      problems.push(`TOPOLOGY_FILE: ${(e as Error).message}`);
    }
  }

  let colocated = 0;
  if (topology && id > 0) {
    if (role === "pop") {
      const pop = topology.pops.find((p) => p.id === id);
      if (!pop)
        problems.push(
          `POP_ID: ${id} is not a POP in ${topoFile} (have ${topology.pops.map((p) => p.id).join(", ")})`,
        );
      else colocated = pop.clusterId ?? 0;
    } else if (role === "cluster" && !topology.clusters.some((c) => c.id === id)) {
      problems.push(
        `CLUSTER_ID: ${id} is not a cluster in ${topoFile} (have ${topology.clusters.map((c) => c.id).join(", ")})`,
      );
    }
  }

  const hintKeys = vars.GR_HINT_KEYS ?? "";
  if (role === "pop") {
    try {
      parseKeyring(hintKeys, "GR_HINT_KEYS", 15);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }

  const redisUrl = vars.REDIS_URL ? vars.REDIS_URL : null;
  if (redisUrl !== null && !/^rediss?:\/\/\S+$/.test(redisUrl)) {
    problems.push("REDIS_URL: must be a redis:// or rediss:// URL");
  }
  let transceivers: [number, string][] | null = null;
  if (vars.RELAY_TRANSCEIVERS) {
    try {
      transceivers = [...parseStaticRegistry(vars.RELAY_TRANSCEIVERS, "RELAY_TRANSCEIVERS")];
    } catch (e) {
      problems.push((e as Error).message);
    }
  } else if (redisUrl === null && (role === "cluster" || colocated !== 0)) {
    problems.push(
      `RELAY_TRANSCEIVERS: required when REDIS_URL is not set (${role === "cluster" ? "cluster relay" : "co-located POP"}), e.g. "1=127.0.0.1:6101"`,
    );
  }

  const adminHost = vars.ADMIN_HOST || "127.0.0.1";
  if (typeof parseHostPort(`${adminHost.includes(":") ? `[${adminHost}]` : adminHost}:1`) === "string") {
    problems.push(`ADMIN_HOST: must be an IP address, got ${JSON.stringify(adminHost)}`);
  }

  const bindHost = vars.RELAY_BIND_HOST || null;
  if (
    bindHost !== null &&
    typeof parseHostPort(`${bindHost.includes(":") ? `[${bindHost}]` : bindHost}:1`) === "string"
  ) {
    problems.push(`RELAY_BIND_HOST: must be an IP address such as 0.0.0.0, got ${JSON.stringify(bindHost)}`);
  }

  const timers: FlowTimers = {
    tickMs: int("RELAY_TICK_MS", DEFAULT_TIMERS.tickMs, 10, 10_000),
    halfOpenMs: int("RELAY_HALF_OPEN_MS", DEFAULT_TIMERS.halfOpenMs, 100, 600_000),
    idleMs: int("RELAY_IDLE_MS", DEFAULT_TIMERS.idleMs, 100, 86_400_000),
    maxLifetimeMs: int("RELAY_MAX_LIFETIME_MS", DEFAULT_TIMERS.maxLifetimeMs, 1_000, 7 * 86_400_000),
    mirrorRefreshMs: int("RELAY_MIRROR_REFRESH_MS", DEFAULT_TIMERS.mirrorRefreshMs, 100, 3_600_000),
  };
  for (const p of checkTimers(timers)) problems.push(`RELAY_*_MS: ${p}`);

  const maxFlows = int("RELAY_MAX_FLOWS", 262_144, 1, 1 << 26);
  const limits: FlowLimits = {
    maxFlows,
    maxFlowsPerPrefix: int("RELAY_MAX_FLOWS_PER_PREFIX", 4_096, 1, 1 << 26),
    maxHalfOpenPerPrefix: int("RELAY_MAX_HALF_OPEN_PER_PREFIX", 256, 1, 1 << 26),
  };

  const workers = int("RELAY_WORKERS", availableParallelism(), 1, 256);
  const adminPort = int("ADMIN_PORT", 0, 0, 65535);
  const drainMs = int("RELAY_DRAIN_MS", 30_000, 0, 3_600_000);
  const restoreConcurrency = int(
    "RELAY_RESTORE_CONCURRENCY",
    DEFAULT_RESTORE_LIMITS.maxConcurrent,
    1,
    100_000,
  );
  const socketBufferBytes = int("RELAY_SOCKET_BUFFER", 4 * 1024 * 1024, 65_536, 1 << 30);
  const registryRefreshMs = int("RELAY_REGISTRY_REFRESH_MS", 1_000, 50, 60_000);
  const tcp = readTcpLimits(int);
  if (problems.length > 0 || topology === null) throw new ConfigError(problems, "relay");
  return {
    role: role as RelayRole,
    id,
    topology,
    hintKeys,
    workers,
    adminHost,
    adminPort,
    bindHost,
    redisUrl,
    transceivers,
    drainMs,
    limits,
    timers,
    restore: { ...DEFAULT_RESTORE_LIMITS, maxConcurrent: restoreConcurrency },
    socketBufferBytes,
    mirrorTtlMs: timers.idleMs + 2 * timers.mirrorRefreshMs,
    registryRefreshMs,
    tcp,
  };
}
