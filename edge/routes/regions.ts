// GET /v1/regions: the clusters and POPs this edge knows, their health as this location sees it,
// and how this caller would be steered. Public (no credentials, nothing internal: signalling URLs
// and backbone addresses stay out). `?refresh=1` probes every cluster before answering.
import type { Hono } from "hono";
import type { AppEnv } from "../env.ts";
import { admitIp } from "../http.ts";
import { regionLabel } from "../steering/client.ts";
import { planSteering } from "../steering/policy.ts";
import { steerScope } from "../steering/steer.ts";

export function registerRegions(app: Hono<AppEnv>): void {
  app.get("/v1/regions", async (c) => {
    c.set("route", "regions");
    await admitIp(c);
    const s = await steerScope(c);
    const t = s.topo.topology;
    if (c.req.query("refresh") === "1") await s.monitor.probe(t, s.deps, true);
    else await s.monitor.prepare(t, s.deps);
    const now = Date.now();
    const plan = planSteering(t, s.client, (cl) => s.monitor.view(cl, now));
    const order = new Map(plan.candidates.map((x, i) => [x.cluster.id as number, { rank: i + 1, x }]));
    c.header("cache-control", "no-store");
    return c.json({
      globalVip: t.globalVip,
      defaultCluster: t.clusters.find((x) => x.id === t.defaultClusterId)?.name,
      clusters: t.clusters.map((cl) => {
        const h = s.monitor.view(cl, now);
        const o = order.get(cl.id);
        return {
          id: cl.id,
          name: cl.name,
          region: cl.region,
          continent: cl.continent,
          latitude: cl.latitude,
          longitude: cl.longitude,
          health: {
            status: h.status,
            load: h.load,
            capacity: h.capacity,
            utilization: h.capacity > 0 ? Math.round((h.load / h.capacity) * 1000) / 1000 : null,
            source: h.source,
            checkedAt: h.checkedAtMs === null ? null : new Date(h.checkedAtMs).toISOString(),
          },
          steering: o
            ? { rank: o.rank, distanceKm: Math.round(o.x.distanceKm), costKm: Math.round(o.x.costKm) }
            : null,
        };
      }),
      pops: t.pops.map((p) => ({
        id: p.id,
        name: p.name,
        region: p.region,
        latitude: p.latitude,
        longitude: p.longitude,
        clusterId: p.clusterId ?? null,
      })),
      you: {
        region: regionLabel(s.client),
        country: s.client.country ?? null,
        colo: s.client.colo ?? null,
        basis: plan.basis,
        nearest: plan.candidates[0]?.cluster.name ?? null,
      },
    });
  });
}
