// Global Relay POP / cluster relay. Configuration from the environment (docs/relay.md):
//   RELAY_ROLE=pop|cluster, POP_ID or CLUSTER_ID, TOPOLOGY_FILE, GR_HINT_KEYS (pop), RELAY_WORKERS,
//   ADMIN_PORT, REDIS_URL, RELAY_TRANSCEIVERS, RELAY_DRAIN_MS, ...
// Prints one JSON line {"msg":"ready",...} on stdout when listening; logs JSON to stderr.
// SIGTERM drains (no new flows, forwarding until RELAY_DRAIN_MS or the last flow), SIGINT stops now.
import { createLogger } from "../common/log.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { Relay } from "./shell/relay.ts";

const log = createLogger({ svc: "relay" });

async function main(): Promise<void> {
  let cfg: ReturnType<typeof loadConfig>;
  try {
    cfg = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      log.error("invalid configuration", { problems: e.problems });
      process.exit(2);
    }
    throw e;
  }
  const relay = await Relay.start(cfg, { threads: true, log: log.child({ role: cfg.role }) });
  const a = relay.addresses;
  process.stdout.write(
    `${JSON.stringify({
      msg: "ready",
      role: cfg.role,
      ...(cfg.role === "pop" ? { popId: cfg.id, vip: a.vip } : { clusterId: cfg.id }),
      backbone: a.backbone,
      admin: a.admin,
      workers: cfg.workers,
      redis: cfg.redisUrl !== null,
    })}\n`,
  );
  let stopping = false;
  process.on("SIGTERM", () => {
    if (stopping) return;
    stopping = true;
    log.info("draining", { drainMs: cfg.drainMs });
    void relay
      .drain()
      .then(() => relay.stop())
      .then(() => {
        log.info("stopped");
        process.exit(0);
      });
  });
  process.on("SIGINT", () => {
    stopping = true;
    void relay.stop().then(() => process.exit(0));
  });
}

main().catch((e: Error) => {
  log.error("relay failed to start", { error: e });
  process.exit(1);
});
