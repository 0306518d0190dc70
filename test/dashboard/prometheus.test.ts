// Same math as PromQL, checked against a real Prometheus (the Debian `prometheus` binary, started by
// this test on a free loopback port with a temporary TSDB): the local aggregator, Prometheus'
// own histogram_quantile, and the page's production mode (PrometheusSource: query_range with the
// Grafana queries) must give the same p50/p95/p99 for the same exporters. Also runs every Grafana
// query against that Prometheus, so none of them is a syntax error.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Registry } from "../../regional/common/metrics.ts";
import { parseTargets } from "../../regional/dashboard/config.ts";
import type { PanelData } from "../../regional/dashboard/core/evaluate.ts";
import { grafanaDashboard } from "../../regional/dashboard/grafana.ts";
import { LocalSource } from "../../regional/dashboard/local.ts";
import { PrometheusSource } from "../../regional/dashboard/prometheus.ts";
import type { PanelsResponse } from "../../regional/dashboard/source.ts";
import { which } from "../../scripts/lib/system-deps.ts";
import { freeTcpPort } from "../support/ports.ts";
import { until } from "../support/wait.ts";
import { getJson, type MetricsServer, serveRegistry, startProcess } from "./support.ts";

interface Vector {
  status: string;
  data: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function last(res: PanelsResponse, panel: string, group: Record<string, string>, ref: string): number | null {
  const p = res.panels.find((x: PanelData) => x.id === panel)!;
  const s = p.series.find((x) => x.ref === ref && Object.entries(group).every(([k, v]) => x.group[k] === v));
  if (!s) return null;
  for (let i = s.values.length - 1; i >= 0; i--) if (s.values[i] !== null) return s.values[i]!;
  return null;
}

describe("local aggregator vs a real Prometheus", () => {
  const reg = new Registry();
  const hop = reg.histogram("gr_relay_first_hop_rtt_seconds", "rtt", ["pop", "cluster"]);
  const setup = reg.histogram("gr_transceiver_setup_seconds", "setup", ["cluster", "region", "stage"]);
  const flows = reg.gauge("gr_relay_flows_active", "flows", ["role"]).with({ role: "pop" });
  const series = {
    pop1: hop.with({ pop: "1", cluster: "1" }),
    pop2: hop.with({ pop: "2", cluster: "2" }),
    eu: setup.with({ cluster: "1", region: "EU", stage: "answer_to_ice_connected" }),
    na: setup.with({ cluster: "1", region: "NA", stage: "answer_to_ice_connected" }),
  };
  let promServer: MetricsServer;
  let localServer: MetricsServer;
  let prom: ChildProcess | undefined;
  let promUrl: string;
  let dir: string;
  let local: LocalSource;

  beforeAll(async () => {
    const bin = which("prometheus");
    if (!bin)
      throw new Error("prometheus is not installed: run `npm run setup:system` (the test starts its own)");
    // Batch A, before anyone scrapes: a large baseline in the lowest bucket of every series keeps
    // PromQL's extrapolation uniform across buckets (so it cannot move a quantile).
    for (const s of Object.values(series)) for (let i = 0; i < 1000; i++) s.observe(0.00005);
    flows.set(4);
    promServer = await serveRegistry(reg);
    localServer = await serveRegistry(reg);
    dir = mkdtempSync(join(tmpdir(), "gr-prom-"));
    const port = await freeTcpPort();
    promUrl = `http://127.0.0.1:${port}`;
    writeFileSync(
      join(dir, "prometheus.yml"),
      [
        "global:",
        "  scrape_interval: 1s",
        "  scrape_timeout: 1s",
        "scrape_configs:",
        "  - job_name: relay-pop",
        "    honor_labels: true",
        "    static_configs:",
        `      - targets: ["127.0.0.1:${promServer.port}"]`,
        "        labels:",
        '          pop: "9"',
        "",
      ].join("\n"),
    );
    prom = spawn(
      bin,
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=error",
      ],
      { stdio: "ignore" },
    );
    await until(
      () =>
        fetch(`${promUrl}/-/ready`).then(
          (r) => r.ok,
          () => false,
        ),
      "Prometheus ready",
      undefined,
      100,
    );
    local = new LocalSource({
      targets: parseTargets(`relay-pop{pop=9}=${localServer.url}`),
      scrapeIntervalMs: 1000,
      scrapeTimeoutMs: 1000,
      windowS: 3600,
      retentionS: 600,
    });
  });

  afterAll(async () => {
    prom?.kill("SIGTERM");
    if (prom && prom.exitCode === null) await new Promise((r) => prom!.once("exit", r));
    await local?.close();
    await promServer?.close();
    await localServer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("gives the same quantiles from the same histograms", async () => {
    await local.scrapeOnce(); // local baseline
    // Prometheus has a sample of the baseline too (its first scrape waits for service discovery's
    // first update, about 5 s).
    await promServer.waitForHit(1);
    // Batch B: the observations both must see.
    for (let i = 0; i < 60; i++) series.pop1.observe(0.012);
    for (let i = 0; i < 30; i++) series.pop1.observe(0.03);
    for (let i = 0; i < 10; i++) series.pop1.observe(0.4);
    for (let i = 0; i < 7; i++) series.pop2.observe(0.08);
    for (let i = 0; i < 3; i++) series.pop2.observe(0.0009);
    for (let i = 0; i < 40; i++) series.eu.observe(0.11 + i * 0.002);
    for (let i = 0; i < 9; i++) series.na.observe(0.7);
    series.na.observe(3);
    flows.set(11);
    await local.scrapeOnce();
    const seen = promServer.hits;
    await promServer.waitForHit(seen);
    // Wait until Prometheus has appended the scrape that saw batch B.
    await until(
      async () => {
        const v = await getJson<Vector>(
          `${promUrl}/api/v1/query?query=${encodeURIComponent('gr_relay_first_hop_rtt_seconds_count{pop="1"}')}`,
        );
        return v.data.result[0]?.value[1] === "1100";
      },
      "Prometheus to append the scrape that saw batch B",
      undefined,
      100,
    );
    // Not a wait for an outcome: query_range points sit on whole steps, so one step of wall time
    // must pass after the last scrape for a point to hold it.
    await sleep(1100);

    const localRes = await local.panels({ rangeS: 300, maxPoints: 300, filters: {}, panelIds: [] });
    const promRes = await new PrometheusSource({ url: promUrl, windowS: 3600, refreshMs: 1000 }).panels({
      rangeS: 60,
      maxPoints: 60,
      filters: {},
      panelIds: [],
    });
    expect(promRes.errors).toEqual([]);

    const cases: [string, Record<string, string>, string, number][] = [
      ["first_hop_rtt", { pop: "1" }, "p50", 0.5],
      ["first_hop_rtt", { pop: "1" }, "p95", 0.95],
      ["first_hop_rtt", { pop: "1" }, "p99", 0.99],
      ["first_hop_rtt", { pop: "2" }, "p50", 0.5],
      ["first_hop_rtt", { pop: "2" }, "p95", 0.95],
      ["setup_ice", { region: "EU" }, "p50", 0.5],
      ["setup_ice", { region: "EU" }, "p99", 0.99],
      ["setup_ice", { region: "NA" }, "p95", 0.95],
      ["setup_ice", { region: "NA" }, "p99", 0.99],
    ];
    for (const [panel, group, ref, q] of cases) {
      const mine = last(localRes, panel, group, ref);
      const theirs = last(promRes, panel, group, ref);
      expect(mine, `${panel} ${JSON.stringify(group)} ${ref} local`).not.toBeNull();
      expect(theirs, `${panel} ${JSON.stringify(group)} ${ref} prometheus`).not.toBeNull();
      expect(mine!, `${panel} ${JSON.stringify(group)} ${ref}`).toBeCloseTo(theirs!, 9);
      if (panel === "first_hop_rtt") {
        // And Prometheus' own instant query over increase() agrees with both.
        const by = Object.keys(group)[0]!;
        const expr = `histogram_quantile(${q}, sum by (le, ${by}) (increase(gr_relay_first_hop_rtt_seconds_bucket{${by}="${group[by]}"}[1h])))`;
        const v = await getJson<Vector>(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
        expect(Number(v.data.result[0]!.value[1])).toBeCloseTo(mine!, 9);
      }
    }
    // One by hand: POP 1's batch is 60 in (10, 25] ms, 30 in (25, 50] ms, 10 in (300, 500] ms; rank 95
    // lies in the last bucket, 5 into its 10: 300 + 200 * 5/10 ms.
    expect(last(localRes, "first_hop_rtt", { pop: "1" }, "p95")).toBeCloseTo(0.3 + 0.2 * (5 / 10), 12);
    expect(last(localRes, "first_hop_rtt", { pop: "1" }, "n")).toBe(100);
    // The gauge is the same number in both; the target label `pop` fills in where the series has none.
    expect(last(localRes, "flows_active", { role: "pop" }, "value")).toBe(11);
    expect(last(promRes, "flows_active", { role: "pop" }, "value")).toBe(11);
    // Filters reach Prometheus as regex matchers.
    const only2 = await new PrometheusSource({ url: promUrl, windowS: 3600, refreshMs: 1000 }).panels({
      rangeS: 60,
      maxPoints: 60,
      filters: { pop: ["2"] },
      panelIds: ["first_hop_rtt"],
    });
    expect(new Set(only2.panels[0]!.series.map((s) => s.group.pop))).toEqual(new Set(["2"]));
  });

  it("lists filter values and targets in production mode", async () => {
    const meta = await new PrometheusSource({ url: promUrl, windowS: 60, refreshMs: 1000 }).meta();
    expect(meta.mode).toBe("prometheus");
    // "9" is the scrape's target label on the gauge; "1" and "2" are exported by the histogram.
    expect(meta.filterValues.pop).toEqual(["1", "2", "9"]);
    expect(meta.filterValues.region).toEqual(["EU", "NA"]);
    expect(meta.targets.map((t) => [t.name, t.up])).toEqual([
      [`relay-pop 127.0.0.1:${promServer.port}`, true],
    ]);
  });

  it("runs as a process in production mode (PROMETHEUS_URL)", async () => {
    const child = await startProcess("regional/dashboard/main.ts", {
      DASHBOARD_HTTP: "127.0.0.1:0",
      PROMETHEUS_URL: promUrl,
      DASHBOARD_WINDOW_S: "3600",
    });
    try {
      expect(child.ready.mode).toBe("prometheus");
      const url = child.ready.url as string;
      const meta = await getJson<{ mode: string; refreshMs: number }>(`${url}api/meta`);
      expect(meta).toMatchObject({ mode: "prometheus", refreshMs: 5000 });
      const res = await getJson<PanelsResponse>(`${url}api/panels?range=60&panels=first_hop_rtt`);
      expect(res.errors).toEqual([]);
      expect(last(res, "first_hop_rtt", { pop: "1" }, "p95")).toBeCloseTo(0.3 + 0.2 * (5 / 10), 9);
      child.proc.kill("SIGTERM");
      expect(await child.exited).toBe(0);
    } finally {
      child.proc.kill("SIGKILL");
    }
  });

  it("accepts every Grafana query (no PromQL syntax or type errors)", async () => {
    const dash = grafanaDashboard() as { panels: { targets?: { expr: string }[] }[] };
    const exprs = dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(30);
    for (const e of exprs) {
      const q = e.replaceAll("$__rate_interval", "1m").replace(/\$(region|pop|cluster)/g, ".*");
      const r = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`);
      const body = (await r.json()) as { status: string; error?: string };
      expect(body.status, `${q}: ${body.error}`).toBe("success");
    }
  });
});
