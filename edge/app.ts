// The edge worker as a Hono app: middleware (timing, logging, telemetry, CORS), the routes, and
// the one error path (EdgeError → JSON).
import { Hono } from "hono";
import { cors, registerOptions } from "./cors.ts";
import type { AppEnv } from "./env.ts";
import { EdgeError, Errors, errorBody } from "./errors.ts";
import { createLogger, type Logger } from "./log.ts";
import { Telemetry } from "./metrics/telemetry.ts";
import { registerCalls } from "./routes/calls.ts";
import { registerClientSecrets } from "./routes/client-secrets.ts";
import { registerDemo } from "./routes/demo.ts";
import { registerFollowUps } from "./routes/followups.ts";
import { registerHealth } from "./routes/health.ts";
import { registerMetrics } from "./routes/metrics.ts";
import { registerParticipants } from "./routes/participants.ts";
import { registerRegions } from "./routes/regions.ts";
import { registerSideband } from "./routes/sideband.ts";
import { registerWs } from "./routes/ws.ts";
import { metrics } from "./runtime.ts";

const loggers = new Map<string, Logger>();
function logger(level: string | undefined): Logger {
  const k = level ?? "info";
  let l = loggers.get(k);
  if (!l) {
    l = createLogger(k);
    loggers.set(k, l);
  }
  return l;
}

/** Configuration errors are logged once per isolate per message, not once per request. */
const reported = new Set<string>();

export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("startMs", Date.now());
    c.set("route", "other");
    c.set("log", logger(c.env.LOG_LEVEL));
    c.set("telemetry", new Telemetry(metrics, c.env.ANALYTICS));
    await next();
    c.get("telemetry").requestServed(c.get("route"), c.res.status);
  });
  app.use("*", cors());
  registerOptions(app);
  registerDemo(app);
  registerHealth(app);
  registerRegions(app);
  registerCalls(app);
  registerFollowUps(app);
  registerParticipants(app);
  registerClientSecrets(app);
  registerWs(app);
  registerSideband(app);
  registerMetrics(app);
  // A known path with another method: 405 with Allow, not 404.
  for (const [path, allow] of [
    ["/v1/realtime/calls", "POST, OPTIONS"],
    ["/v1/realtime/calls/:id", "GET, PATCH, DELETE, OPTIONS"],
    ["/v1/realtime/calls/:id/hangup", "POST, OPTIONS"],
    ["/v1/realtime/calls/:id/accept", "POST, OPTIONS"],
    ["/v1/realtime/calls/:id/reject", "POST, OPTIONS"],
    ["/v1/realtime/calls/:id/refer", "POST, OPTIONS"],
    ["/v1/realtime/calls/:id/participants", "GET, POST, OPTIONS"],
    ["/v1/realtime/calls/:id/participants/:pid", "GET, PATCH, DELETE, OPTIONS"],
    ["/v1/realtime/client_secrets", "POST, OPTIONS"],
    ["/v1/realtime/ws", "GET"],
    ["/v1/realtime", "GET"],
    ["/v1/regions", "GET, OPTIONS"],
    ["/healthz", "GET"],
    ["/internal/metrics", "GET"],
  ] as const) {
    app.all(path, () => {
      throw Errors.methodNotAllowed(allow);
    });
  }
  app.notFound((c) => c.json(errorBody(Errors.notFound()), 404));
  app.onError((err, c) => {
    const e = err instanceof EdgeError ? err : Errors.internal();
    const log = c.get("log") ?? logger(undefined);
    if (!(err instanceof EdgeError)) {
      log.error("unhandled error", { route: c.get("route"), error: err.message });
    } else if (e.status === 500 && !reported.has(e.message)) {
      if (reported.size < 100) reported.add(e.message);
      log.error("configuration error", { code: e.code, message: e.message });
    }
    return c.json(errorBody(e), e.status as 500, e.headers);
  });
  return app;
}
