// The cluster signalling gateway: `node regional/gateway/main.ts` with CLUSTER_ID, GATEWAY_HTTP,
// GR_CLUSTER_SECRET and either GATEWAY_TRANSCEIVERS="1=http://127.0.0.1:7111,2=…" or REDIS_URL
// (members from heartbeats). docs/transceiver.md has the details. SIGINT and SIGTERM stop it.
import { createLogger } from "../common/log.ts";
import { ConfigError } from "../transceiver/config.ts";
import { type GatewayConfig, loadGatewayConfig } from "./config.ts";
import { Gateway } from "./gateway.ts";

const log = createLogger({ svc: "gateway", cluster: process.env.CLUSTER_ID });
let cfg: GatewayConfig;
try {
  cfg = loadGatewayConfig(process.env);
} catch (e) {
  if (e instanceof ConfigError) {
    log.error("invalid configuration", { problems: e.problems });
    process.exit(2);
  }
  throw e;
}
const g = await Gateway.start(cfg, log);
const stop = async (signal: string): Promise<void> => {
  log.info("stopping", { signal });
  await g.stop();
  await cfg.membership?.close();
  process.exit(0);
};
process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));
// Handlers first: a supervisor may signal as soon as it reads the ready line.
process.stdout.write(
  `${JSON.stringify({
    msg: "ready",
    svc: "gateway",
    clusterId: cfg.clusterId,
    http: g.url,
    transceivers: [...g.members.keys()],
    membership: cfg.transceivers.size > 0 ? "static" : "redis",
  })}\n`,
);
