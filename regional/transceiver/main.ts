// Transceiver process: `npx node regional/transceiver/main.ts`. Configuration from the
// environment (docs/transceiver.md): CLUSTER_ID, TRANSCEIVER_ID, TRANSCEIVER_UDP, TRANSCEIVER_HTTP,
// BACKEND_URL, TOPOLOGY_FILE, GR_HINT_KEYS, GR_CALL_ID_KEYS, GR_CLUSTER_SECRET, GR_BACKBONE_KEYS
// (conferences), TRANSCEIVER_CAPACITY, REDIS_URL (optional) and the tuning variables. SIGTERM drains, SIGINT stops. The wiring: the
// only transceiver file that may import a backend (the in-process echo for BACKEND_URL=internal:echo).
import { createLogger } from "../common/log.ts";
import { inProcessEchoBackend } from "../echo-agent/in-process.ts";
import { type BackendConnector, INTERNAL_ECHO } from "./backend-link.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { type MembershipStore, MemoryMembership, RedisMembership } from "./membership.ts";
import { startTransceiver } from "./transceiver.ts";

const log = createLogger({
  svc: "transceiver",
  cluster: process.env.CLUSTER_ID,
  transceiver: process.env.TRANSCEIVER_ID,
});
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (e) {
  if (e instanceof ConfigError) {
    log.error("invalid configuration", { problems: e.problems });
    process.exit(2);
  }
  throw e;
}
const membership: MembershipStore = config.redisUrl
  ? new RedisMembership(config.redisUrl)
  : new MemoryMembership();
// The backend is chosen here, once: the sessions only see a BackendConnector (ws(s):// is built
// by startTransceiver, which counts its connections in its metrics).
const backend: BackendConnector | undefined = config.backendUrl.startsWith(INTERNAL_ECHO)
  ? inProcessEchoBackend(config.backendUrl)
  : undefined;
let t: Awaited<ReturnType<typeof startTransceiver>>;
try {
  t = await startTransceiver(config, { log, membership, backend });
} catch (e) {
  // A port in use, TRANSCEIVER_IO=batch without the addon, ...: one structured line, exit 1.
  log.error("start failed", { error: (e as Error).message });
  process.exit(1);
}
let stopping = false;
const exit = async (how: "drain" | "stop"): Promise<void> => {
  if (stopping && how === "drain") return;
  stopping = true;
  log.info(how === "drain" ? "SIGTERM: draining" : "SIGINT: stopping", { calls: t.calls.size });
  if (how === "drain") await t.drain();
  else await t.stop();
  await membership.close();
  process.exit(0);
};
process.on("SIGTERM", () => void exit("drain"));
process.on("SIGINT", () => void exit("stop"));
// Handlers first: a supervisor may signal as soon as it reads the ready line.
process.stdout.write(
  `${JSON.stringify({
    msg: "ready",
    svc: "transceiver",
    clusterId: config.clusterId,
    transceiverId: config.transceiverId,
    udp: t.backbone,
    http: t.httpUrl,
    conference: t.conferences
      ? `${t.conferences.socket.address.host}:${t.conferences.socket.address.port}`
      : null,
    backend: config.backendUrl,
    membership: config.redisUrl ? "redis" : "memory",
  })}\n`,
);
