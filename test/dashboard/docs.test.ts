// The operator-facing files stay true to the code: the Grafana JSON parses, is what panels.ts
// generates, and every metric its queries name is exported by the code; the alert rules parse (YAML
// and promtool), fire on the series they should (promtool test rules) and name exported metrics;
// docs/metrics.md documents every metric the code registers.
//
// "Exported by the code" is computed from the sources (string literals `"gr_..."` in regional/ and
// edge/), so the check tightens by itself: a component that has started exporting metrics must export
// every name the dashboards use for it; names of a component that exports nothing yet are listed as
// pending on the console.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { grafanaDashboard, grafanaDashboardText } from "../../regional/dashboard/grafana.ts";
import { PANELS } from "../../regional/dashboard/panels.ts";
import { which } from "../../scripts/lib/system-deps.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");

/** The metric names of the system contract (docs/metrics.md must document each). */
const CONTRACT = [
  "gr_relay_packets_total",
  "gr_relay_bytes_total",
  "gr_relay_flows_active",
  "gr_relay_flows_half_open",
  "gr_relay_flows_created_total",
  "gr_relay_flows_expired_total",
  "gr_relay_flows_closed_total",
  "gr_relay_drops_total",
  "gr_relay_redis_ops_total",
  "gr_relay_backbone_rtt_seconds",
  "gr_relay_first_hop_rtt_seconds",
  "gr_transceiver_calls_active",
  "gr_transceiver_calls_created_total",
  "gr_transceiver_calls_failed_total",
  "gr_transceiver_calls_ended_total",
  "gr_transceiver_setup_seconds",
  "gr_transceiver_ice_rtt_seconds",
  "gr_transceiver_rtcp_rtt_seconds",
  "gr_transceiver_jitter_seconds",
  "gr_transceiver_packet_loss_ratio",
  "gr_transceiver_backend_errors_total",
  "gr_transceiver_backend_dropped_frames_total",
  "gr_transceiver_drops_total",
  "gr_edge_signalling_seconds",
  "gr_edge_requests_total",
  "gr_edge_failovers_total",
];

const COMPONENTS = [
  { dir: "regional/relay", owns: (n: string) => n.startsWith("gr_relay_") },
  { dir: "edge", owns: (n: string) => n.startsWith("gr_edge_") },
  { dir: "regional/gateway", owns: (n: string) => n.startsWith("gr_gateway_") },
  {
    dir: "regional/transceiver",
    owns: (n: string) =>
      !n.startsWith("gr_relay_") && !n.startsWith("gr_edge_") && !n.startsWith("gr_gateway_"),
  },
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(join(ROOT, dir));
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e === "node_modules" || e === ".wrangler" || e === "dist" || e.startsWith(".")) continue;
    const rel = `${dir}/${e}`;
    if (statSync(join(ROOT, rel)).isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.(ts|js|mjs)$/.test(e) && !/\.test\./.test(e)) out.push(rel);
  }
  return out;
}

/** Histogram sample names map to their family. */
const family = (n: string) => n.replace(/_(bucket|count|sum)$/, "");

/** gr_ names written as string literals in a component's sources. */
function exportedBy(dir: string): Set<string> {
  const names = new Set<string>();
  for (const f of sourceFiles(dir)) {
    for (const m of read(f).matchAll(/["'`](gr_[a-z0-9_]+)(?=["'`{\s])/g)) names.add(family(m[1]!));
  }
  return names;
}

const METRICS_DOC = read("docs/metrics.md");
const exported = new Map(COMPONENTS.map((c) => [c.dir, exportedBy(c.dir)]));
const allExported = new Set([...exported.values()].flatMap((s) => [...s]));

/** Metric names a PromQL expression reads (gr_ names and `up`). */
function promqlMetrics(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...withoutStrings.matchAll(/\b(gr_[a-z0-9_]+|up)\b(?!\s*\()/g)].map((m) => family(m[1]!));
}

/** Checks names against the code; returns the names whose component exports nothing yet. */
function checkExported(names: Iterable<string>, where: string): string[] {
  const pending: string[] = [];
  for (const n of new Set(names)) {
    if (n === "up") continue;
    const c = COMPONENTS.find((x) => x.owns(n))!;
    const own = exported.get(c.dir)!;
    if (own.size === 0) {
      pending.push(n);
      continue;
    }
    expect(own.has(n), `${where} uses ${n}, which ${c.dir} does not export`).toBe(true);
  }
  return pending;
}

interface GrafanaPanel {
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { expr: string; refId: string }[];
}

describe("Grafana dashboard", () => {
  const text = read("docs/grafana/global-relay.json");
  const dash = JSON.parse(text) as {
    uid: string;
    panels: GrafanaPanel[];
    templating: { list: { name: string; definition?: string; query: unknown }[] };
  };

  it("is exactly what regional/dashboard/panels.ts generates (run scripts/dashboard-grafana.ts)", () => {
    expect(text).toBe(grafanaDashboardText());
    expect(dash).toEqual(grafanaDashboard());
  });

  it("has a query for every catalogue panel, and panels that do not overlap", () => {
    const series = dash.panels.filter((p) => p.type === "timeseries");
    expect(series.map((p) => p.title)).toEqual(PANELS.map((p) => p.title));
    for (const p of series) {
      expect(p.targets!.length).toBeGreaterThan(0);
      for (const t of p.targets!) expect(t.expr).toMatch(/gr_/);
    }
    const cells = new Set<string>();
    for (const p of dash.panels)
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), `${p.title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
    expect(dash.templating.list.map((v) => v.name)).toEqual(["datasource", "region", "pop", "cluster"]);
  });

  it("only queries metrics the code exports", () => {
    const exprs = [
      ...dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
      ...dash.templating.list.flatMap((v) => (v.definition ? [v.definition] : [])),
    ];
    const names = exprs.flatMap(promqlMetrics);
    expect(names.length).toBeGreaterThan(30);
    for (const n of names)
      expect(METRICS_DOC, `${n} is not documented in docs/metrics.md`).toContain(`\`${n}\``);
    const pending = checkExported(names, "docs/grafana/global-relay.json");
    if (pending.length)
      console.info(
        `[dashboard] Grafana metrics not exported yet (component has no metrics): ${pending.join(", ")}`,
      );
  });
});

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; runbook: string };
}

describe("Prometheus configuration and alert rules", () => {
  const rules = parseYaml(read("docs/prometheus/alerts.yml")) as {
    groups: { name: string; rules: Rule[] }[];
  };
  const all = rules.groups.flatMap((g) => g.rules);

  it("parse as YAML with the fields every alert needs", () => {
    expect(all.length).toBeGreaterThanOrEqual(8);
    for (const r of all) {
      expect(r.alert).toMatch(/^[A-Z][A-Za-z0-9]+$/);
      expect(r.expr.length).toBeGreaterThan(10);
      expect(["warning", "critical"]).toContain(r.labels.severity);
      expect(r.annotations.summary.length).toBeGreaterThan(10);
      expect(r.annotations.runbook).toMatch(/^docs\/dashboards\.md#/);
    }
    const names = all.map((r) => r.alert);
    for (const needed of [
      "FirstHopRttP95High",
      "HalfOpenFlowSurge",
      "RelayDropsHigh",
      "CallSetupFailures",
      "ClusterNoHealthyTransceivers",
    ])
      expect(names).toContain(needed);
    const config = parseYaml(read("docs/prometheus/prometheus.yml")) as {
      rule_files: string[];
      scrape_configs: { job_name: string; honor_labels: boolean }[];
    };
    expect(config.rule_files).toEqual(["alerts.yml"]);
    expect(config.scrape_configs.map((s) => s.job_name)).toEqual([
      "relay-pop",
      "relay-cluster",
      "gateway",
      "transceiver",
      "edge-local",
    ]);
    for (const s of config.scrape_configs) expect(s.honor_labels).toBe(true);
  });

  it("link to playbooks that exist in docs/dashboards.md", () => {
    const slugs = new Set(
      [...read("docs/dashboards.md").matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, "")
          .replace(/ /g, "-"),
      ),
    );
    for (const r of all) expect(slugs, r.alert).toContain(r.annotations.runbook.split("#")[1]);
  });

  it("only read metrics the code exports", () => {
    const names = all.flatMap((r) => promqlMetrics(r.expr));
    for (const n of names)
      if (n !== "up") expect(METRICS_DOC, `${n} is not documented in docs/metrics.md`).toContain(`\`${n}\``);
    const pending = checkExported(names, "docs/prometheus/alerts.yml");
    if (pending.length) console.info(`[dashboard] alert metrics not exported yet: ${pending.join(", ")}`);
  });

  it("pass promtool check config, check rules and the rule unit tests", () => {
    const promtool = which("promtool");
    if (!promtool)
      throw new Error(
        "promtool is not installed: run `npm run setup:system` (package prometheus, never started as a service)",
      );
    const run = (...args: string[]) =>
      execFileSync(promtool, args, { cwd: join(ROOT, "docs/prometheus"), encoding: "utf8", stdio: "pipe" });
    expect(run("check", "config", "prometheus.yml")).toMatch(/SUCCESS/);
    expect(run("check", "rules", "alerts.yml")).toMatch(/SUCCESS: \d+ rules found/);
    expect(run("test", "rules", "alerts.test.yml")).toMatch(/SUCCESS/);
  });
});

describe("docs/metrics.md", () => {
  const doc = METRICS_DOC;
  it("documents every metric of the contract and every gr_ metric the code registers", () => {
    for (const n of new Set([...CONTRACT, ...allExported])) expect(doc, n).toContain(`\`${n}\``);
  });
  it("covers every latency metric of the contract with a dashboard panel", () => {
    const histograms = CONTRACT.filter((n) => /_(seconds|ratio)$/.test(n));
    for (const n of histograms)
      expect(
        PANELS.some((p) => p.metric === n && p.kind === "quantile"),
        n,
      ).toBe(true);
  });
});
