// GET /healthz: the worker itself (no cluster calls): 200 when its configuration loads, 503 with
// the reason when it does not.
import type { Hono } from "hono";
import { loadTopology } from "../config.ts";
import type { AppEnv } from "../env.ts";
import { EdgeError } from "../errors.ts";

export function registerHealth(app: Hono<AppEnv>): void {
  app.get("/healthz", async (c) => {
    c.set("route", "healthz");
    c.header("cache-control", "no-store");
    try {
      const { topology } = await loadTopology(c.env, Date.now());
      return c.json({ status: "ok", clusters: topology.clusters.length, pops: topology.pops.length });
    } catch (e) {
      const message = e instanceof EdgeError ? e.message : "configuration failed to load";
      return c.json({ status: "misconfigured", message }, 503);
    }
  });
}
