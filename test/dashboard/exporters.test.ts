// The real exporters' output (edge, transceiver, relay: their own metric classes, not stand-ins)
// parses without a single issue, and every label a dashboard panel groups or matches on is one the
// exporter emits (or one the scrape adds: `pop` for POP relays, `cluster` for cluster-side processes).
import { describe, expect, it } from "vitest";
import { EdgeMetrics, Telemetry } from "../../edge/metrics/telemetry.ts";
import { type Exposition, parseExposition } from "../../regional/dashboard/core/exposition.ts";
import { histogramQuantile, parseLe } from "../../regional/dashboard/core/quantile.ts";
import { PANELS } from "../../regional/dashboard/panels.ts";
import { RttKind } from "../../regional/relay/core/rtt.ts";
import { EngineStats } from "../../regional/relay/core/stats.ts";
import { mergeExpositions, RelayMetrics } from "../../regional/relay/shell/metrics.ts";
import { TransceiverMetrics } from "../../regional/transceiver/metrics.ts";

/** Labels each process kind gets from the scrape configuration (docs/prometheus/prometheus.yml). */
const TARGET_LABELS = {
  edge: [] as string[],
  transceiver: ["cluster"],
  relayPop: ["pop"],
  relayCluster: ["cluster"],
};

function labelsOf(e: Exposition, family: string): Set<string> {
  const out = new Set<string>();
  for (const s of e.samples)
    if (s.name === family || s.name === `${family}_bucket` || s.name === `${family}_count`)
      for (const l of Object.keys(s.labels)) if (l !== "le") out.add(l);
  return out;
}

function checkPanels(e: Exposition, added: string[]): number {
  let checked = 0;
  for (const p of PANELS) {
    const have = labelsOf(e, p.metric);
    if (have.size === 0 && !e.samples.some((s) => s.name.startsWith(p.metric))) continue;
    checked++;
    for (const l of [...p.by, ...Object.keys(p.match ?? {})])
      expect(have.has(l) || added.includes(l), `${p.id}: ${p.metric} has no label ${l}`).toBe(true);
  }
  return checked;
}

describe("real exporters through the dashboard parser", () => {
  it("edge", () => {
    const t = new Telemetry(new EdgeMetrics(), undefined);
    for (let i = 0; i < 20; i++)
      t.callSteered({
        route: "calls.create",
        status: 201,
        region: "EU",
        cluster: "1",
        colo: "FRA",
        country: "DE",
        basis: "distance",
        totalMs: 40 + i,
        clusterMs: 30 + i,
        attempts: 1,
      });
    t.requestServed("calls.create", 201);
    t.failedOver("2");
    const e = parseExposition(t.metrics.registry.render());
    expect(e.issues).toEqual([]);
    expect(e.types.get("gr_edge_signalling_seconds")).toBe("histogram");
    // 20 totals of 40..59 ms: all within (25, 50] or (50, 75] ms buckets of the edge's bounds.
    const buckets = e.samples
      .filter((s) => s.name === "gr_edge_signalling_seconds_bucket" && s.labels.stage === "total")
      .map((s) => ({ le: parseLe(s.labels.le!)!, count: s.value }));
    const p50 = histogramQuantile(0.5, buckets);
    expect(p50).toBeGreaterThan(0.025);
    expect(p50).toBeLessThanOrEqual(0.075);
    expect(checkPanels(e, TARGET_LABELS.edge)).toBe(5);
  });

  it("transceiver", () => {
    const m = new TransceiverMetrics(1);
    const eu = m.region("EU");
    eu.created.inc();
    eu.setup.answer_to_ice_connected.observe(0.12);
    eu.iceRtt.observe(0.03);
    eu.rtcpRtt.observe(0.031);
    eu.jitter.observe(0.004);
    eu.loss.observe(0.01);
    m.failed("at_capacity");
    m.ended("hangup");
    m.backendError("connect_failed");
    m.drops["unknown_ufrag"].inc();
    m.callsActive.set(1);
    const e = parseExposition(m.render());
    expect(e.issues).toEqual([]);
    expect(checkPanels(e, TARGET_LABELS.transceiver)).toBe(15);
  });

  it("relay (both roles, several workers merged by the admin endpoint)", () => {
    const views = [1, 2].map(() => {
      const stats = new EngineStats();
      stats.packets[0]! += 10;
      stats.drops[2]! += 3;
      stats.flowsCreated = 2;
      return { stats, table: { size: 2, halfOpen: 1 } };
    });
    const texts = views.map((v) => {
      const m = new RelayMetrics("pop", 7);
      m.rtt(RttKind.firstHop, 1, 12);
      m.rtt(RttKind.backbone, 1, 30);
      m.count("set", "ok");
      m.sync(v);
      return m.registry.render();
    });
    const e = parseExposition(mergeExpositions(texts));
    expect(e.issues).toEqual([]);
    const count = e.samples.find((s) => s.name === "gr_relay_first_hop_rtt_seconds_count");
    expect(count).toEqual({
      name: "gr_relay_first_hop_rtt_seconds_count",
      labels: { pop: "7", cluster: "1" },
      value: 2,
    });
    expect(e.samples.find((s) => s.name === "gr_relay_flows_active")!.value).toBe(4);
    expect(checkPanels(e, TARGET_LABELS.relayPop)).toBeGreaterThanOrEqual(9);
    const cluster = new RelayMetrics("cluster", 1);
    cluster.sync(views[0]!);
    const ec = parseExposition(cluster.registry.render());
    expect(ec.issues).toEqual([]);
    checkPanels(ec, TARGET_LABELS.relayCluster);
  });
});
