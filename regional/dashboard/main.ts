// Entry point: `npx node regional/dashboard/main.ts`.
// Env: DASHBOARD_HTTP (listen ip:port, default 127.0.0.1:9090), DASHBOARD_TARGETS (local mode:
// "name{label=v}=url,..."), PROMETHEUS_URL (production mode: read Prometheus instead of scraping),
// DASHBOARD_SCRAPE_INTERVAL_MS, DASHBOARD_SCRAPE_TIMEOUT_MS, DASHBOARD_WINDOW_S (rate window),
// DASHBOARD_RETENTION_S (ring length), DASHBOARD_REFRESH_MS (page refresh). See docs/dashboards.md.
import { createLogger } from "../common/log.ts";
import { ConfigError, type DashboardConfig, loadConfig } from "./config.ts";
import { LocalSource } from "./local.ts";
import { PrometheusSource } from "./prometheus.ts";
import { startServer } from "./server.ts";
import type { DataSource } from "./source.ts";

const log = createLogger({ service: "dashboard" });

let config: DashboardConfig;
try {
  config = loadConfig();
} catch (e) {
  if (e instanceof ConfigError) {
    log.error("bad configuration", { error: e.message });
    process.exit(2);
  }
  throw e;
}

let source: DataSource;
if (config.prometheusUrl !== null) {
  source = new PrometheusSource({
    url: config.prometheusUrl,
    windowS: config.windowS,
    refreshMs: config.refreshMs,
  });
} else {
  const local = new LocalSource({ ...config, log });
  local.start();
  source = local;
}

const http = await startServer(source, config.http, log);
const host = http.address.family === "IPv6" ? `[${http.address.address}]` : http.address.address;
process.stdout.write(
  `${JSON.stringify({
    msg: "ready",
    http: `${host}:${http.address.port}`,
    url: `http://${host}:${http.address.port}/`,
    mode: config.prometheusUrl !== null ? "prometheus" : "local",
    targets: config.targets.map((t) => t.name),
  })}\n`,
);

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info("stopping", { signal });
  // Nothing to drain but open page requests: stop scraping, let in-flight requests finish.
  const timer = setTimeout(() => process.exit(0), signal === "SIGTERM" ? 5000 : 1000);
  timer.unref();
  await source.close();
  await http.close();
  process.exit(0);
};
process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));
