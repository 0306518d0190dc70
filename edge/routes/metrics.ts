// GET /internal/metrics: Prometheus text from this isolate's memory (local dev: wrangler dev runs
// one isolate, so it is the whole picture; in production Analytics Engine is the source).
// Allowed when GR_LOCAL_DEV is "true"/"1", or with "Authorization: Bearer <METRICS_TOKEN>".
// Otherwise it does not exist (404).
import type { Hono } from "hono";
import { constantTimeEqual } from "../../shared/bytes/constant-time.ts";
import { sha256Hex, utf8 } from "../bytes.ts";
import type { AppEnv } from "../env.ts";
import { Errors } from "../errors.ts";
import { PROMETHEUS_CONTENT_TYPE } from "../metrics/registry.ts";
import { metrics } from "../runtime.ts";

async function sameSecret(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([sha256Hex(a), sha256Hex(b)]);
  return constantTimeEqual(utf8(x), 0, utf8(y), 0, 64);
}

export function registerMetrics(app: Hono<AppEnv>): void {
  app.get("/internal/metrics", async (c) => {
    c.set("route", "metrics");
    const local = c.env.GR_LOCAL_DEV === "true" || c.env.GR_LOCAL_DEV === "1";
    if (!local) {
      const token = c.env.METRICS_TOKEN;
      if (!token) throw Errors.notFound();
      const m = /^Bearer (\S+)$/.exec(c.req.header("authorization") ?? "");
      if (!m) throw Errors.missingCredentials();
      if (!(await sameSecret(m[1]!, token))) throw Errors.forbidden("wrong metrics token");
    }
    return c.body(metrics.registry.render(), 200, {
      "content-type": PROMETHEUS_CONTENT_TYPE,
      "cache-control": "no-store",
    });
  });
}
