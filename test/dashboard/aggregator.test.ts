// The local aggregator scraping real HTTP servers on loopback that export metrics through the real
// Registry: known observations between two scrapes must come out as known quantiles and rates,
// through the JSON API and through the entry point as a process.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Registry } from "../../regional/common/metrics.ts";
import { loadConfig, parseTargets } from "../../regional/dashboard/config.ts";
import type { PanelData } from "../../regional/dashboard/core/evaluate.ts";
import { LocalSource } from "../../regional/dashboard/local.ts";
import { type DashboardServer, startServer } from "../../regional/dashboard/server.ts";
import type { DashboardMeta, PanelsResponse } from "../../regional/dashboard/source.ts";
import { freeTcpPort } from "../support/ports.ts";
import { getJson, type MetricsServer, serveRegistry, startProcess } from "./support.ts";

function relayRegistry(pop: string) {
  const reg = new Registry();
  const firstHop = reg.histogram("gr_relay_first_hop_rtt_seconds", "rtt", ["pop", "cluster"]);
  const flows = reg.gauge("gr_relay_flows_active", "flows", ["role"]).with({ role: "pop" });
  const drops = reg.counter("gr_relay_drops_total", "drops", ["role", "reason"]);
  return { reg, firstHop: (cluster: string) => firstHop.with({ pop, cluster }), flows, drops };
}

function value(
  res: PanelsResponse,
  panel: string,
  group: Record<string, string>,
  ref: string,
): number | null {
  const p = res.panels.find((x: PanelData) => x.id === panel)!;
  const s = p.series.find((x) => x.ref === ref && Object.entries(group).every(([k, v]) => x.group[k] === v));
  if (s === undefined) throw new Error(`${panel}: no series ${JSON.stringify(group)} ${ref}`);
  return s.values.at(-1) ?? null;
}

describe("local aggregator over real HTTP", () => {
  const pop1 = relayRegistry("1");
  const pop2 = relayRegistry("2");
  const trx = new Registry();
  const setup = trx.histogram("gr_transceiver_setup_seconds", "setup", ["cluster", "region", "stage"]);
  const active = trx.gauge("gr_transceiver_calls_active", "active", ["cluster"]).with({ cluster: "1" });
  const servers: MetricsServer[] = [];
  let hung: ReturnType<typeof createServer>;
  let source: LocalSource;
  let http: DashboardServer;
  let base: string;

  beforeAll(async () => {
    servers.push(await serveRegistry(pop1.reg), await serveRegistry(pop2.reg), await serveRegistry(trx));
    servers.push(await serveRegistry(() => "oops", "/metrics", 500));
    hung = createServer(() => {}); // accepts, never answers
    await new Promise<void>((r) => hung.listen(0, "127.0.0.1", r));
    const dead = await freeTcpPort();
    const targets = parseTargets(
      [
        `relay-pop1{pop=1}=${servers[0]!.url}`,
        `relay-pop2{pop=2}=${servers[1]!.url}`,
        `transceiver-1{cluster=1}=${servers[2]!.url}`,
        `broken=${servers[3]!.url}`,
        `hung=http://127.0.0.1:${(hung.address() as AddressInfo).port}/metrics`,
        `dead=http://127.0.0.1:${dead}/metrics`,
      ].join(","),
    );
    source = new LocalSource({
      targets,
      scrapeIntervalMs: 1000,
      scrapeTimeoutMs: 400,
      windowS: 3600,
      retentionS: 600,
    });
    http = await startServer(source, { host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${http.address.port}`;
  });
  afterAll(async () => {
    await source?.close();
    await http?.close();
    for (const s of servers) await s.close();
    hung?.closeAllConnections();
    hung?.close();
  });

  it("turns observations made between two scrapes into the expected quantiles, rates and gauges", async () => {
    // Observations before the first scrape are the baseline and must not count.
    for (let i = 0; i < 20; i++) pop1.firstHop("1").observe(2);
    pop1.flows.set(3);
    await source.scrapeOnce();

    // POP 1 → cluster 1: 80 samples at 7 ms, 20 at 40 ms. POP 2: 10 samples at 90 ms.
    for (let i = 0; i < 80; i++) pop1.firstHop("1").observe(0.007);
    for (let i = 0; i < 20; i++) pop1.firstHop("1").observe(0.04);
    for (let i = 0; i < 10; i++) pop2.firstHop("1").observe(0.09);
    pop1.flows.set(12);
    pop2.flows.set(5);
    pop1.drops.with({ role: "pop", reason: "bad-mac" }).inc(30);
    pop2.drops.with({ role: "pop", reason: "bad-mac" }).inc(10);
    pop2.drops.with({ role: "pop", reason: "half-open-cap" }).inc(4);
    for (let i = 0; i < 4; i++)
      setup.with({ cluster: "1", region: "EU", stage: "answer_to_ice_connected" }).observe(0.12);
    for (let i = 0; i < 4; i++)
      setup.with({ cluster: "1", region: "NA", stage: "answer_to_ice_connected" }).observe(0.6);
    active.set(2);
    await source.scrapeOnce();

    const res = await getJson<PanelsResponse>(`${base}/api/panels?range=600`);
    expect(res.mode).toBe("local");
    // POP 1: p50 rank 50 of 100 in (5 ms, 10 ms] holding 80 → 5 + 5 * 50/80 ms.
    expect(value(res, "first_hop_rtt", { pop: "1" }, "p50")).toBeCloseTo(0.005 + 0.005 * (50 / 80), 12);
    // p95 rank 95: (25 ms, 50 ms] holds 20 from cumulative 80 → 25 + 25 * 15/20 ms.
    expect(value(res, "first_hop_rtt", { pop: "1" }, "p95")).toBeCloseTo(0.025 + 0.025 * (15 / 20), 12);
    expect(value(res, "first_hop_rtt", { pop: "1" }, "n")).toBe(100);
    expect(value(res, "first_hop_rtt", { pop: "2" }, "p99")).toBeCloseTo(0.075 + 0.025 * 0.99, 12);
    expect(value(res, "first_hop_rtt", { pop: "2" }, "n")).toBe(10);
    expect(value(res, "setup_ice", { region: "EU" }, "p50")).toBeCloseTo(0.1 + 0.05 * 0.5, 12);
    expect(value(res, "setup_ice", { region: "NA" }, "p50")).toBeCloseTo(0.5 + 0.25 * 0.5, 12);
    // Gauges sum by role across both POPs; drops are per-second rates by reason.
    expect(value(res, "flows_active", { role: "pop" }, "value")).toBe(17);
    expect(value(res, "calls_active", { cluster: "1" }, "value")).toBe(2);
    const panel = res.panels.find((p) => p.id === "relay_drops")!;
    const dt = (panel.timestamps.at(-1)! - panel.timestamps.at(-2)!) / 1000;
    expect(value(res, "relay_drops", { reason: "bad-mac" }, "value")).toBeCloseTo(40 / dt, 9);
    expect(value(res, "relay_drops", { reason: "half-open-cap" }, "value")).toBeCloseTo(4 / dt, 9);

    // The POP filter comes from the target labels for series that do not carry it themselves.
    const only2 = await getJson<PanelsResponse>(`${base}/api/panels?range=600&pop=2`);
    expect(value(only2, "flows_active", { role: "pop" }, "value")).toBe(5);
    expect(value(only2, "relay_drops", { reason: "bad-mac" }, "value")).toBeCloseTo(10 / dt, 9);
    expect(only2.panels.find((p) => p.id === "first_hop_rtt")!.series.every((s) => s.group.pop === "2")).toBe(
      true,
    );
    // Incremental: nothing newer than the newest point, then exactly the next scrape's point.
    const newest = res.panels[0]!.timestamps.at(-1)!;
    const none = await getJson<PanelsResponse>(`${base}/api/panels?range=600&since=${newest}`);
    expect(none.incremental).toBe(true);
    expect(none.panels.every((p) => p.timestamps.length === 0)).toBe(true);
    await source.scrapeOnce();
    const one = await getJson<PanelsResponse>(
      `${base}/api/panels?range=600&since=${newest}&panels=first_hop_rtt`,
    );
    expect(one.panels[0]!.timestamps).toHaveLength(1);
    expect(one.panels[0]!.timestamps[0]!).toBeGreaterThan(newest);
    expect(res.incremental).toBe(false);
    const eu = await getJson<PanelsResponse>(`${base}/api/panels?range=600&region=EU&panels=setup_ice`);
    expect(eu.panels.map((p) => p.id)).toEqual(["setup_ice"]);
    expect(new Set(eu.panels[0]!.series.map((s) => s.group.region))).toEqual(new Set(["EU"]));
  });

  it("reports every target's state, and broken targets do not stop the others", async () => {
    const meta = await getJson<DashboardMeta>(`${base}/api/meta`);
    const t = Object.fromEntries(meta.targets.map((x) => [x.name, x]));
    expect(t["relay-pop1"]!.up).toBe(true);
    expect(t["relay-pop1"]!.samples).toBeGreaterThan(20);
    expect(t.broken!.up).toBe(false);
    expect(t.broken!.lastError).toBe("HTTP 500");
    expect(t.hung!.lastError).toBe("timeout");
    expect(t.dead!.up).toBe(false);
    expect(meta.filterValues.pop).toEqual(["1", "2"]);
    expect(meta.filterValues.region).toEqual(["EU", "NA"]);
    expect(meta.filterValues.cluster).toEqual(["1"]);
    expect(meta.panels.length).toBeGreaterThan(20);
  });

  it("serves the page and uPlot from node_modules, and rejects bad requests", async () => {
    const page = await fetch(`${base}/`);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(await page.text()).toContain("/vendor/uPlot.iife.min.js");
    const lib = await fetch(`${base}/vendor/uPlot.iife.min.js`);
    expect(lib.status).toBe(200);
    expect(await lib.text()).toContain("uPlot");
    // Large API answers are gzipped for clients that accept it (fetch decompresses transparently).
    const big = await fetch(`${base}/api/panels?range=600`, { headers: { "accept-encoding": "gzip" } });
    expect(big.headers.get("content-encoding")).toBe("gzip");
    expect(((await big.json()) as PanelsResponse).panels.length).toBeGreaterThan(20);
    const rounded = await getJson<PanelsResponse>(
      `${base}/api/panels?range=600&digits=3&panels=first_hop_rtt`,
    );
    expect(rounded.panels[0]!.series.find((s) => s.group.pop === "1" && s.ref === "p50")!.values.at(-1)).toBe(
      0.00813,
    );
    expect((await fetch(`${base}/api/panels?digits=0`)).status).toBe(400);
    expect((await fetch(`${base}/api/panels?range=abc`)).status).toBe(400);
    expect((await fetch(`${base}/api/panels?panels=nope`)).status).toBe(400);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/api/meta`, { method: "POST" })).status).toBe(405);
  });
});

describe("scrape limits", () => {
  it("refuses a body over the cap, streamed or announced, and keeps the target's last good state out", async () => {
    const line = 'gr_x_total{a="b"} 1\n';
    const chunked = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" }); // no content-length: chunked
      for (let i = 0; i < 200; i++) res.write(line);
      res.end();
    });
    const small = await serveRegistry(() => line);
    await new Promise<void>((r) => chunked.listen(0, "127.0.0.1", r));
    const source = new LocalSource({
      targets: parseTargets(
        `big=http://127.0.0.1:${(chunked.address() as AddressInfo).port}/metrics,small=${small.url}`,
      ),
      scrapeIntervalMs: 1000,
      scrapeTimeoutMs: 2000,
      windowS: 60,
      retentionS: 60,
      maxBodyBytes: 1024,
    });
    try {
      await source.scrapeOnce();
      const t = Object.fromEntries((await source.meta()).targets.map((x) => [x.name, x]));
      expect(t.big).toMatchObject({ up: false, lastError: "body over 1024 bytes" });
      expect(t.small).toMatchObject({ up: true, samples: 1, lastError: null });
    } finally {
      await source.close();
      await small.close();
      chunked.closeAllConnections();
      chunked.close();
    }
  });
});

describe("configuration", () => {
  it("parses targets with labels and rejects bad ones naming the variable", () => {
    const t = parseTargets(
      "relay-pop{pop=1;cluster=2}=http://127.0.0.1:9301/metrics, edge=http://127.0.0.1:8787/internal/metrics",
    );
    expect(t).toEqual([
      {
        name: "relay-pop",
        url: "http://127.0.0.1:9301/metrics",
        labels: { job: "relay-pop", instance: "127.0.0.1:9301", pop: "1", cluster: "2" },
      },
      {
        name: "edge",
        url: "http://127.0.0.1:8787/internal/metrics",
        labels: { job: "edge", instance: "127.0.0.1:8787" },
      },
    ]);
    expect(parseTargets('x{pop="1",cluster="2"}=http://h:1/m')[0]!.labels).toMatchObject({
      pop: "1",
      cluster: "2",
    });
    expect(() => parseTargets("nourl")).toThrow(/DASHBOARD_TARGETS/);
    expect(() => parseTargets("a=ftp://x/")).toThrow(/http/);
    expect(() => parseTargets("a=http://x/,a=http://y/")).toThrow(/twice/);
    expect(() => parseTargets("a{9=1}=http://x/")).toThrow(/bad label/);
  });

  it("validates the environment", () => {
    expect(() => loadConfig({})).toThrow(/DASHBOARD_TARGETS/);
    expect(() => loadConfig({ PROMETHEUS_URL: "nope" })).toThrow(/PROMETHEUS_URL/);
    expect(() => loadConfig({ DASHBOARD_HTTP: "localhost:1", PROMETHEUS_URL: "http://p:9090" })).toThrow(
      /DASHBOARD_HTTP/,
    );
    expect(() => loadConfig({ DASHBOARD_TARGETS: "a=http://x/", DASHBOARD_SCRAPE_INTERVAL_MS: "5" })).toThrow(
      /DASHBOARD_SCRAPE_INTERVAL_MS/,
    );
    const c = loadConfig({ PROMETHEUS_URL: "http://127.0.0.1:9091/" });
    expect(c.prometheusUrl).toBe("http://127.0.0.1:9091");
    expect(c.http).toEqual({ host: "127.0.0.1", port: 9090 });
    expect(c.windowS).toBe(60);
  });
});

describe("entry point", () => {
  it("prints ready, scrapes on its interval, serves the API and stops on SIGTERM", async () => {
    const reg = new Registry();
    const h = reg
      .histogram("gr_transceiver_rtcp_rtt_seconds", "rtt", ["cluster", "region"])
      .with({ cluster: "1", region: "AS" });
    const server = await serveRegistry(reg);
    const child = await startProcess("regional/dashboard/main.ts", {
      DASHBOARD_HTTP: "127.0.0.1:0",
      DASHBOARD_TARGETS: `transceiver{cluster=1}=${server.url}`,
      DASHBOARD_SCRAPE_INTERVAL_MS: "200",
      DASHBOARD_WINDOW_S: "3600",
    });
    try {
      expect(child.ready.mode).toBe("local");
      const url = child.ready.url as string;
      await server.waitForHit(0);
      for (let i = 0; i < 10; i++) h.observe(0.18);
      const seen = server.hits;
      await server.waitForHit(seen); // a scrape after the observations
      let p95: number | null = null;
      for (let i = 0; i < 50 && p95 === null; i++) {
        const res = await getJson<PanelsResponse>(`${url}api/panels?panels=e2e_rtt`);
        p95 =
          res.panels[0]!.series.find((s) => s.ref === "p95" && s.group.region === "AS")?.values.at(-1) ??
          null;
        if (p95 === null) await server.waitForHit(server.hits);
      }
      expect(p95).toBeCloseTo(0.15 + 0.05 * 0.95, 12);
      child.proc.kill("SIGTERM");
      expect(await child.exited).toBe(0);
      expect(child.stderr()).toContain('"msg":"stopping"');
    } finally {
      child.proc.kill("SIGKILL");
      await server.close();
    }
  });

  it("refuses a bad configuration with an error naming the variable", async () => {
    await expect(startProcess("regional/dashboard/main.ts", { DASHBOARD_TARGETS: "" })).rejects.toThrow(
      /exited 2.*DASHBOARD_TARGETS/s,
    );
  });
});
