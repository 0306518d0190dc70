// Transceiver configuration: one typed object, built from the environment by loadConfig() (every
// problem reported at once, naming the variable) or directly by tests and embedders.
import { readFileSync } from "node:fs";
import { CALL_ID_MAX_KEY_ID } from "../../shared/callid/callid.ts";
import { ConfigError, EnvReader } from "../../shared/config/env-reader.ts";
import { HINT_MAX_KEY_ID } from "../../shared/hint/layout.ts";
import type { Keyring } from "../../shared/keys.ts";
import { DEFAULT_REPLAY_WINDOW_MS } from "../../shared/signing/request.ts";
import { type Cidr, type HostPort, parseCidr, parseHostPort } from "../../shared/topology/address.ts";
import { parseTopology } from "../../shared/topology/schema.ts";
import { SRTP_PROFILE_ORDERS, type SrtpProfileOrder } from "./srtp/install.ts";

// The reader and its error live in shared/config; re-exported for this wing's other entry points.
export { ConfigError, EnvReader } from "../../shared/config/env-reader.ts";

/** TRANSCEIVER_IO values (shell/backbone-open.ts chooses). */
export const BACKBONE_IO = ["auto", "batch", "dgram"] as const;
export type BackboneIo = (typeof BACKBONE_IO)[number];

export interface TransceiverConfig {
  clusterId: number;
  transceiverId: number;
  /** Where the backbone UDP socket binds. Port 0 picks a free port. */
  udp: HostPort;
  /** Backbone address announced in heartbeats ("ip:port"); default: the bound address. */
  udpAdvertise: string | undefined;
  /** Receive/send buffer asked for the backbone socket (capped by net.core.rmem_max / wmem_max). */
  socketBufferBytes: number;
  /** Sockets bound to the backbone port with SO_REUSEPORT (1 = one socket, the default). */
  socketCount: number;
  /** Per relay source, a socket connected to it on the backbone port (SO_REUSEPORT) for sending (dgram I/O). */
  connectRelays: boolean;
  /** Backbone datagram I/O: the batched addon, Node's dgram, or the addon when it loads. */
  io: BackboneIo;
  /** SRTP profiles offered in DTLS (docs/werift.md, "SRTP"): AES-CM alone by default. */
  srtpProfiles: SrtpProfileOrder;
  /** V8's heap growing factor, 1 + this/100, for the process (heap-tuning.ts); 0: V8's own. */
  heapGrowingPercent: number;
  /** Where the signalling HTTP server binds. */
  http: HostPort;
  /** Signalling URL announced in heartbeats; default: http://<bound address>. */
  httpAdvertise: string | undefined;
  /** Per-session backend WebSocket URL. */
  backendUrl: string;
  /** Fallback candidate when a request names no ingress VIP (topology globalVip). */
  globalVip: HostPort;
  /** The cluster's own VIP, a lower-priority second candidate (topology clusters[].vip). */
  clusterVip: HostPort | undefined;
  /** Port of the passive ICE-TCP candidate on the VIP (topology globalVipTcpPort); none if undefined. */
  vipTcpPort: number | undefined;
  hintKeys: Keyring;
  callIdKeys: Keyring;
  /** GR_CLUSTER_SECRET: the keyring the edge (and the gateway, forwarding) signs requests with. */
  clusterKeys: Keyring;
  capacity: number;
  maxSessionMs: number;
  consentTimeoutMs: number;
  setupTimeoutMs: number;
  drainDeadlineMs: number;
  statsIntervalMs: number;
  /** Backend queue bound in bytes (WebSocket bufferedAmount and pending frames). */
  backendQueueBytes: number;
  backendConnectTimeoutMs: number;
  /** Shared backend connections (many calls on one WebSocket) at most; 0: one connection per call. */
  /** Batched I/O: read the relays' runs of datagrams joined by UDP GRO (TRANSCEIVER_GRO, default 1). */
  gro: boolean;
  backendSharedConnections: number;
  /** An old path is "quiet" after this long; then an authenticated check from a new address moves the session. */
  pathQuietMs: number;
  redisUrl: string | undefined;
  heartbeatIntervalMs: number;
  /** Signature replay window (also the clock-skew tolerance). */
  replayWindowMs: number;
  /** Sessions in setup (created, not yet connected) per API key and per client /24 or /64. */
  setupLimitPerKey: number;
  setupLimitPerNetwork: number;
  /** Conferences (docs/cascade.md); undefined without GR_BACKBONE_KEYS: no conference socket. */
  conference: ConferenceConfig | undefined;
}

export interface ConferenceConfig {
  /** Where the conference UDP socket binds (TRANSCEIVER_UDP's host, TRANSCEIVER_CONFERENCE_PORT; 0 = free port). */
  bind: HostPort;
  /** TRANSCEIVER_CONFERENCE_ADDR: the "ip:port" other transceivers send to; default the bound address. */
  advertise: HostPort | undefined;
  /** GR_BACKBONE_KEYS: the MAC keyring of conference frames (key ids 0-15). */
  keys: Keyring;
  /** Participants per call, the owner's client included (CONFERENCE_MAX_PARTICIPANTS). */
  maxParticipants: number;
  /** Per-hop repair by NACK (CONFERENCE_NACK=0 turns it off, for the with/without measurement). */
  nack: boolean;
  /** A hello's leaf address must be inside one of these (the topology's backboneCidrs); [] = any. */
  cidrs: Cidr[];
}

/** Largest key id a conference frame carries (byte 3 of its header is 0-15). */
export const CONFERENCE_MAX_KEY_ID = 15;
export const DEFAULT_CONFERENCE_MAX_PARTICIPANTS = 8;

type Env = Record<string, string | undefined>;

/** Builds the configuration from environment variables (docs/transceiver.md lists them). */
export function loadConfig(
  env: Env,
  readFile: (path: string) => string = (p) => readFileSync(p, "utf8"),
): TransceiverConfig {
  const r = new EnvReader(env);
  const clusterId = r.int("CLUSTER_ID", 1, 65535);
  const transceiverId = r.int("TRANSCEIVER_ID", 1, 65535);
  const topologyPath = r.str("TOPOLOGY_FILE");
  let globalVip: HostPort = { host: "127.0.0.1", port: 3478, ipv6: false };
  let clusterVip: HostPort | undefined;
  let vipTcpPort: number | undefined;
  const cidrs: Cidr[] = [];
  if (topologyPath) {
    try {
      const topo = parseTopology(readFile(topologyPath), topologyPath);
      const g = parseHostPort(topo.globalVip);
      if (typeof g !== "string") globalVip = g;
      vipTcpPort = topo.globalVipTcpPort;
      for (const c of topo.clusters)
        for (const text of c.backboneCidrs) {
          const cidr = parseCidr(text);
          if (typeof cidr !== "string") cidrs.push(cidr);
        }
      const cluster = topo.clusters.find((c) => c.id === clusterId);
      if (!cluster)
        r.problems.push(`TOPOLOGY_FILE: ${topologyPath} has no cluster with id ${clusterId} (CLUSTER_ID)`);
      else if (cluster.vip) {
        const v = parseHostPort(cluster.vip);
        if (typeof v !== "string") clusterVip = v;
      }
    } catch (e) {
      r.problems.push(`TOPOLOGY_FILE: ${(e as Error).message}`);
    }
  }
  const udp = r.hostPort("TRANSCEIVER_UDP", "127.0.0.1:0");
  const cfg: TransceiverConfig = {
    clusterId,
    transceiverId,
    udp,
    udpAdvertise: r.optional("TRANSCEIVER_UDP_ADVERTISE"),
    socketBufferBytes: r.int("TRANSCEIVER_SOCKET_BUFFER_BYTES", 65_536, 1 << 30, 4 * 1024 * 1024),
    socketCount: r.int("TRANSCEIVER_SOCKETS", 1, 16, 1),
    connectRelays: r.int("TRANSCEIVER_CONNECT_RELAYS", 0, 1, 0) === 1,
    io: backboneIo(r.str("TRANSCEIVER_IO", "auto"), r.problems),
    gro: r.int("TRANSCEIVER_GRO", 0, 1, 1) === 1,
    srtpProfiles: srtpProfileOrder(r),
    heapGrowingPercent: r.int("TRANSCEIVER_HEAP_GROWING_PERCENT", 0, 1000, DEFAULT_HEAP_GROWING_PERCENT),
    http: r.hostPort("TRANSCEIVER_HTTP", "127.0.0.1:0"),
    httpAdvertise: r.optional("TRANSCEIVER_HTTP_ADVERTISE"),
    backendUrl: r.url("BACKEND_URL", "ws://127.0.0.1:8090", /^(wss?|internal):$/),
    globalVip,
    clusterVip,
    vipTcpPort,
    hintKeys: r.keyring("GR_HINT_KEYS", HINT_MAX_KEY_ID),
    callIdKeys: r.keyring("GR_CALL_ID_KEYS", CALL_ID_MAX_KEY_ID),
    clusterKeys: r.clusterKeys("GR_CLUSTER_SECRET"),
    capacity: r.int("TRANSCEIVER_CAPACITY", 1, 100_000, 150),
    maxSessionMs: r.int("MAX_SESSION_SECONDS", 1, 86_400, 3600) * 1000,
    consentTimeoutMs: r.int("CONSENT_TIMEOUT_MS", 1000, 120_000, 30_000),
    setupTimeoutMs: r.int("SETUP_TIMEOUT_MS", 1000, 300_000, 30_000),
    drainDeadlineMs: r.int("DRAIN_DEADLINE_MS", 0, 86_400_000, 600_000),
    statsIntervalMs: r.int("STATS_INTERVAL_MS", 1000, 600_000, 10_000),
    backendQueueBytes: r.int("BACKEND_QUEUE_BYTES", 1024, 64 * 1024 * 1024, 64 * 1024),
    backendConnectTimeoutMs: r.int("BACKEND_CONNECT_TIMEOUT_MS", 100, 60_000, 5000),
    backendSharedConnections: r.int("BACKEND_SHARED_CONNECTIONS", 0, 64, 4),
    pathQuietMs: r.int("PATH_QUIET_MS", 100, 30_000, 3000),
    redisUrl: r.optional("REDIS_URL"),
    heartbeatIntervalMs: r.int("HEARTBEAT_INTERVAL_MS", 100, 60_000, 2000),
    replayWindowMs: r.int("REPLAY_WINDOW_MS", 1000, 60_000, DEFAULT_REPLAY_WINDOW_MS),
    setupLimitPerKey: r.int("SETUP_LIMIT_PER_KEY", 1, 100_000, DEFAULT_SETUP_LIMIT_PER_KEY),
    setupLimitPerNetwork: r.int("SETUP_LIMIT_PER_NETWORK", 1, 100_000, DEFAULT_SETUP_LIMIT_PER_NETWORK),
    conference: conferenceConfig(r, udp, cidrs),
  };
  if (cfg.redisUrl !== undefined && !/^rediss?:\/\//.test(cfg.redisUrl)) {
    r.problems.push("REDIS_URL: must start with redis:// or rediss://");
  }
  r.done();
  return cfg;
}

export const DEFAULT_SETUP_LIMIT_PER_KEY = 20;
export const DEFAULT_SETUP_LIMIT_PER_NETWORK = 5;
export const DEFAULT_HEAP_GROWING_PERCENT = 300; // 4x the live heap (heap-tuning.ts)

/** A one-key cluster keyring (key id 0, the single-secret form) from raw bytes. */
export function singleClusterKey(secret: Uint8Array): Keyring {
  const k = { id: 0, secret };
  return { active: k, keys: [k] };
}

/**
 * Defaults for embedders and tests; secrets and ids must still be given. `clusterSecret` (raw
 * bytes) is shorthand for a one-key `clusterKeys`.
 */
export function configWithDefaults(
  c: Pick<TransceiverConfig, "clusterId" | "transceiverId" | "hintKeys" | "callIdKeys"> &
    Partial<TransceiverConfig> & { clusterSecret?: Uint8Array },
): TransceiverConfig {
  const { clusterSecret, ...rest } = c;
  const clusterKeys = rest.clusterKeys ?? (clusterSecret ? singleClusterKey(clusterSecret) : undefined);
  if (!clusterKeys) throw new ConfigError(["GR_CLUSTER_SECRET: clusterKeys (or clusterSecret) is required"]);
  return {
    udp: { host: "127.0.0.1", port: 0, ipv6: false },
    udpAdvertise: undefined,
    socketBufferBytes: 4 * 1024 * 1024,
    socketCount: 1,
    connectRelays: false,
    // Test projects pick the path by environment (vitest.config.ts); embedders pass `io`.
    io: backboneIo(process.env.TRANSCEIVER_IO ?? "auto", []),
    gro: true,
    srtpProfiles: "aes-cm-only",
    heapGrowingPercent: DEFAULT_HEAP_GROWING_PERCENT,
    http: { host: "127.0.0.1", port: 0, ipv6: false },
    httpAdvertise: undefined,
    backendUrl: "ws://127.0.0.1:8090",
    globalVip: { host: "127.0.0.1", port: 3478, ipv6: false },
    clusterVip: undefined,
    vipTcpPort: undefined,
    capacity: 150,
    maxSessionMs: 3_600_000,
    consentTimeoutMs: 30_000,
    setupTimeoutMs: 30_000,
    drainDeadlineMs: 600_000,
    statsIntervalMs: 10_000,
    backendQueueBytes: 64 * 1024,
    backendConnectTimeoutMs: 5000,
    backendSharedConnections: 4,
    pathQuietMs: 3000,
    redisUrl: undefined,
    heartbeatIntervalMs: 2000,
    replayWindowMs: DEFAULT_REPLAY_WINDOW_MS,
    setupLimitPerKey: DEFAULT_SETUP_LIMIT_PER_KEY,
    setupLimitPerNetwork: DEFAULT_SETUP_LIMIT_PER_NETWORK,
    conference: undefined,
    ...rest,
    clusterKeys,
  };
}

function backboneIo(v: string, problems: string[]): BackboneIo {
  if ((BACKBONE_IO as readonly string[]).includes(v)) return v as BackboneIo;
  problems.push(`TRANSCEIVER_IO: "${v}" is not one of ${BACKBONE_IO.join(", ")}`);
  return "auto";
}

function srtpProfileOrder(r: EnvReader): SrtpProfileOrder {
  const v = r.str("TRANSCEIVER_SRTP_PROFILES", "aes-cm-only");
  if ((SRTP_PROFILE_ORDERS as readonly string[]).includes(v)) return v as SrtpProfileOrder;
  r.problems.push(`TRANSCEIVER_SRTP_PROFILES: "${v}" is not one of ${SRTP_PROFILE_ORDERS.join(", ")}`);
  return "aes-cm-only";
}

/** The conference settings, or undefined when GR_BACKBONE_KEYS is unset (the others are then refused). */
function conferenceConfig(r: EnvReader, udp: HostPort, cidrs: Cidr[]): ConferenceConfig | undefined {
  const port = r.int("TRANSCEIVER_CONFERENCE_PORT", 0, 65535, 0);
  const addr = r.optional("TRANSCEIVER_CONFERENCE_ADDR");
  const max = r.int("CONFERENCE_MAX_PARTICIPANTS", 2, 64, DEFAULT_CONFERENCE_MAX_PARTICIPANTS);
  const nack = r.int("CONFERENCE_NACK", 0, 1, 1) === 1;
  if (r.optional("GR_BACKBONE_KEYS") === undefined) {
    if (addr !== undefined)
      r.problems.push("TRANSCEIVER_CONFERENCE_ADDR: conferences need GR_BACKBONE_KEYS (unset)");
    return undefined;
  }
  let advertise: HostPort | undefined;
  if (addr !== undefined) {
    const hp = parseHostPort(addr);
    if (typeof hp === "string") r.problems.push(`TRANSCEIVER_CONFERENCE_ADDR: ${hp}`);
    else if (hp.host === "0.0.0.0" || hp.host === "::")
      r.problems.push(
        "TRANSCEIVER_CONFERENCE_ADDR: must be an address other transceivers reach, not a wildcard",
      );
    else advertise = hp;
  }
  return {
    bind: { ...udp, port },
    advertise,
    keys: r.keyring("GR_BACKBONE_KEYS", CONFERENCE_MAX_KEY_ID),
    maxParticipants: max,
    nack,
    cidrs,
  };
}

/** Conference settings for embedders and tests: a free port on 127.0.0.1, the defaults. */
export function conferenceWithDefaults(
  keys: Keyring,
  over: Partial<ConferenceConfig> = {},
): ConferenceConfig {
  return {
    bind: { host: "127.0.0.1", port: 0, ipv6: false },
    advertise: undefined,
    keys,
    maxParticipants: DEFAULT_CONFERENCE_MAX_PARTICIPANTS,
    nack: true,
    cidrs: [],
    ...over,
  };
}
