// The dashboard page in headless Chromium, fed by the aggregator scraping real Registry exporters
// over loopback HTTP: the numbers rendered as text must be the known quantiles, the POP filter must
// change what is shown, and live updates must bring new numbers without a reload.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Registry } from "../../regional/common/metrics.ts";
import { parseTargets } from "../../regional/dashboard/config.ts";
import { LocalSource } from "../../regional/dashboard/local.ts";
import { type DashboardServer, startServer } from "../../regional/dashboard/server.ts";
import type { PanelsResponse } from "../../regional/dashboard/source.ts";
import { type BrowserHandle, launchChromium } from "../support/chromium.ts";
import { POLL, WAIT_MS } from "../support/wait.ts";
import { type MetricsServer, serveRegistry } from "./support.ts";

describe("dashboard page in headless Chromium", () => {
  const pops = ["1", "2"].map((pop) => {
    const reg = new Registry();
    return {
      reg,
      hop: reg
        .histogram("gr_relay_first_hop_rtt_seconds", "rtt", ["pop", "cluster"])
        .with({ pop, cluster: "1" }),
      flows: reg.gauge("gr_relay_flows_active", "flows", ["role"]).with({ role: "pop" }),
      drops: reg.counter("gr_relay_drops_total", "drops", ["role", "reason"]),
    };
  });
  const trx = new Registry();
  const loss = trx
    .histogram("gr_transceiver_packet_loss_ratio", "loss", ["cluster", "region"], [0, 0.01, 0.02, 0.05, 1])
    .with({ cluster: "1", region: "SA" });
  const servers: MetricsServer[] = [];
  let source: LocalSource;
  let http: DashboardServer;
  let browser: BrowserHandle;
  let page: Page;
  const errors: string[] = [];

  const cell = (panel: string, group: string, ref: string) =>
    page.locator(`td[data-panel="${panel}"][data-group="${group}"][data-ref="${ref}"]`);
  const renders = () => page.evaluate(() => Number(document.documentElement.dataset.renders ?? 0));
  const nextRender = async () => {
    const n = await renders();
    await page.waitForFunction((m) => Number(document.documentElement.dataset.renders ?? 0) > m, n, {
      timeout: WAIT_MS,
    });
  };

  beforeAll(async () => {
    for (const p of pops) servers.push(await serveRegistry(p.reg));
    servers.push(await serveRegistry(trx));
    source = new LocalSource({
      targets: parseTargets(
        `relay-pop-1{pop=1}=${servers[0]!.url},relay-pop-2{pop=2}=${servers[1]!.url},transceiver{cluster=1}=${servers[2]!.url}`,
      ),
      scrapeIntervalMs: 300,
      scrapeTimeoutMs: 1000,
      windowS: 3600,
      retentionS: 600,
    });
    await source.scrapeOnce(); // baseline
    // POP 1: 40 samples in (10, 25] ms and 10 in (50, 75] ms. POP 2: 20 in (100, 150] ms.
    for (let i = 0; i < 40; i++) pops[0]!.hop.observe(0.02);
    for (let i = 0; i < 10; i++) pops[0]!.hop.observe(0.06);
    for (let i = 0; i < 20; i++) pops[1]!.hop.observe(0.12);
    pops[0]!.flows.set(7);
    pops[1]!.flows.set(5);
    pops[1]!.drops.with({ role: "pop", reason: "bad_hint" }).inc(3);
    for (let i = 0; i < 8; i++) loss.observe(0);
    for (let i = 0; i < 2; i++) loss.observe(0.03);
    await source.scrapeOnce();
    http = await startServer(source, { host: "127.0.0.1", port: 0 });
    browser = await launchChromium();
    page = await browser.browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.goto(`http://127.0.0.1:${http.address.port}/?range=300`);
    await page.waitForFunction(() => Number(document.documentElement.dataset.renders ?? 0) >= 1, undefined, {
      timeout: WAIT_MS,
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await source?.close();
    await http?.close();
    for (const s of servers) await s.close();
  });

  it("renders the known quantiles as text", async () => {
    // POP 1 p50: rank 25 of 50 inside (10, 25] ms holding 40 → 10 + 15 * 25/40 = 19.375 → "19.4 ms".
    await expect.poll(() => cell("first_hop_rtt", "pop=1", "p50").textContent(), POLL).toBe("19.4 ms");
    // POP 1 p95: rank 47.5, 7.5 into (50, 75] ms holding 10 → 68.75 → "68.8 ms"; p99: 49.5 → 73.75 → "73.8 ms".
    expect(await cell("first_hop_rtt", "pop=1", "p95").textContent()).toBe("68.8 ms");
    expect(await cell("first_hop_rtt", "pop=1", "p99").textContent()).toBe("73.8 ms");
    expect(await cell("first_hop_rtt", "pop=1", "n").textContent()).toBe("50");
    // POP 2: all 20 in (100, 150] ms → p50 = 125 ms, p95 = 147.5 → "148 ms" (3 significant digits).
    expect(await cell("first_hop_rtt", "pop=2", "p50").textContent()).toBe("125 ms");
    expect(await cell("first_hop_rtt", "pop=2", "p95").textContent()).toBe("148 ms");
    // Loss: p50 in the le=0 bucket → 0; p95 rank 9.5 in (0.02, 0.05] holding 2 → 0.02 + 0.03 * 1.5/2 = 4.25 %.
    expect(await cell("loss", "region=SA", "p50").textContent()).toBe("0.00 %");
    expect(await cell("loss", "region=SA", "p95").textContent()).toBe("4.25 %");
    // Gauge summed by role over both POPs, and a labelled row with its swatch.
    expect(await cell("flows_active", "role=pop", "value").textContent()).toBe("12");
    await expect
      .poll(() => page.locator('tr[data-group="pop=1"]').first().textContent(), POLL)
      .toContain("POP 1");
    // Charts are drawn where there is data; empty panels say so.
    expect(await page.locator('article[data-panel="first_hop_rtt"] canvas').count()).toBeGreaterThan(0);
    expect(await page.locator('article[data-panel="backend_errors"] .empty').textContent()).toBe(
      "no data yet",
    );
    // Every target shows as up.
    expect(await page.locator('#targets [data-up="true"]').count()).toBe(3);
    expect(errors).toEqual([]);
  }, 90_000);

  it("filters by POP", async () => {
    await expect.poll(() => page.locator('#f-pop option[value="2"]').count(), POLL).toBe(1);
    await page.selectOption("#f-pop", "2");
    await expect.poll(() => cell("flows_active", "role=pop", "value").textContent(), POLL).toBe("5");
    expect(await cell("first_hop_rtt", "pop=1", "p50").count()).toBe(0);
    expect(await cell("first_hop_rtt", "pop=2", "p50").textContent()).toBe("125 ms");
    // Panels whose series cannot carry a POP say the filter does not apply to them.
    expect(await page.locator('article[data-panel="loss"] .na').textContent()).toBe("(pop filter n/a)");
    expect(page.url()).toContain("pop=2");
    await page.selectOption("#f-pop", "");
    await expect.poll(() => cell("flows_active", "role=pop", "value").textContent(), POLL).toBe("12");
  }, 90_000);

  it("updates live as new scrapes arrive", async () => {
    for (let i = 0; i < 50; i++) pops[0]!.hop.observe(0.004); // 50 fast samples in (2.5, 5] ms
    pops[0]!.flows.set(30);
    source.start(); // scrape on the interval from now on, like main.ts
    await nextRender();
    await expect.poll(() => cell("flows_active", "role=pop", "value").textContent(), POLL).toBe("35");
    // POP 1 now has 100 samples: p50 rank 50 = the top of (2.5, 5] ms → "5.00 ms".
    await expect.poll(() => cell("first_hop_rtt", "pop=1", "p50").textContent(), POLL).toBe("5.00 ms");
    expect(await cell("first_hop_rtt", "pop=1", "n").textContent()).toBe("100");
    // The page merged incremental answers: it holds the same points a full answer would give.
    await nextRender();
    await nextRender();
    const card = page.locator('article[data-panel="first_hop_rtt"]');
    const newest = Number(await card.getAttribute("data-newest"));
    const points = Number(await card.getAttribute("data-points"));
    const full = (await (
      await fetch(
        `http://127.0.0.1:${http.address.port}/api/panels?range=300&points=350&panels=first_hop_rtt`,
      )
    ).json()) as PanelsResponse;
    const upTo = full.panels[0]!.timestamps.filter((t) => t <= newest);
    expect(points).toBe(upTo.length);
    expect(points).toBeGreaterThan(3);
    expect(errors).toEqual([]);
  }, 90_000);
});

describe("dashboard page: live merging when points are thinned into time buckets", () => {
  it("holds exactly the points a full answer gives, after many incremental refreshes", async () => {
    const reg = new Registry();
    const gauge = reg.gauge("gr_transceiver_calls_active", "active", ["cluster"]).with({ cluster: "1" });
    const server = await serveRegistry(reg);
    let now = Date.now() - 400_000;
    const source = new LocalSource({
      targets: parseTargets(`transceiver{cluster=1}=${server.url}`),
      scrapeIntervalMs: 2000,
      scrapeTimeoutMs: 2000,
      windowS: 30,
      retentionS: 900,
      refreshMs: 100,
      clock: () => now,
    });
    const scrape = async () => {
      gauge.set(Math.round(now / 2000) % 97);
      await source.scrapeOnce();
      now += 2000;
    };
    for (let i = 0; i < 200; i++) await scrape(); // 400 s of history: more than 60 points in 300 s
    const http = await startServer(source, { host: "127.0.0.1", port: 0 });
    const browser = await launchChromium();
    try {
      // 240 px wide: the page asks for 60 points, so 150 snapshots are thinned into 6 s buckets.
      const page = await browser.browser.newPage({ viewport: { width: 240, height: 800 } });
      const renders = () => page.evaluate(() => Number(document.documentElement.dataset.renders ?? 0));
      await page.goto(`http://127.0.0.1:${http.address.port}/?range=300`);
      await page.waitForFunction(
        () => Number(document.documentElement.dataset.renders ?? 0) >= 1,
        undefined,
        {
          timeout: WAIT_MS,
        },
      );
      for (let i = 0; i < 14; i++) {
        await scrape();
        const n = await renders();
        await page.waitForFunction((m) => Number(document.documentElement.dataset.renders ?? 0) > m, n, {
          timeout: WAIT_MS,
        });
      }
      const card = page.locator('article[data-panel="calls_active"]');
      const newest = Number(await card.getAttribute("data-newest"));
      const full = (await (
        await fetch(
          `http://127.0.0.1:${http.address.port}/api/panels?range=300&points=60&panels=calls_active`,
        )
      ).json()) as PanelsResponse;
      expect(full.stepMs).toBe(6000);
      const want = full.panels[0]!.timestamps.filter((t) => t <= newest);
      expect(Number(await card.getAttribute("data-points"))).toBe(want.length);
      // And the number shown is the newest value.
      const value = await page.locator('td[data-panel="calls_active"][data-ref="value"]').textContent();
      expect(value).toBe(String(full.panels[0]!.series[0]!.values[want.length - 1]));
    } finally {
      await browser.close();
      await http.close();
      await source.close();
      await server.close();
    }
  }, 90_000);
});
