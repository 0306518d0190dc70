// Saves docs/dashboard.png: the dashboard page with 15 minutes of synthetic traffic.
// Starts synthetic exporters (real Registry over real HTTP), the aggregator with a virtual clock
// (450 real scrapes, 2 s apart in virtual time, so the charts have history without waiting), the
// dashboard server, and headless Chromium (the tests' launcher: scripts/ never imports test/).
// Usage: npx node test/screenshots/dashboard.ts [out.png]
import { parseTargets } from "../../regional/dashboard/config.ts";
import { LocalSource } from "../../regional/dashboard/local.ts";
import { startServer } from "../../regional/dashboard/server.ts";
import { SyntheticSystem, serveSynthetic } from "../../regional/dashboard/synthetic.ts";
import { launchChromium } from "../support/chromium.ts";

const out = process.argv[2] ?? new URL("../../docs/dashboard.png", import.meta.url).pathname;
const INTERVAL_MS = 2000;
const MINUTES = 15;

const system = new SyntheticSystem(7);
const exporters = await serveSynthetic(system);
let now = Date.now() - MINUTES * 60_000;
const source = new LocalSource({
  targets: parseTargets(system.targets(exporters.base)),
  scrapeIntervalMs: INTERVAL_MS,
  scrapeTimeoutMs: 5000,
  windowS: 30,
  retentionS: MINUTES * 60 + 60,
  clock: () => now,
});
const started = performance.now();
for (let i = 0; i <= (MINUTES * 60_000) / INTERVAL_MS; i++) {
  system.step(INTERVAL_MS / 1000);
  await source.scrapeOnce();
  now += INTERVAL_MS;
}
now -= INTERVAL_MS;
console.error(
  `[screenshot] ${source.rounds} scrapes of ${source.store.targetNames().length} targets, ${source.store.seriesCount} series in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
const http = await startServer(source, { host: "127.0.0.1", port: 0 });
const browser = await launchChromium();
try {
  const page = await browser.browser.newPage({
    viewport: { width: 1500, height: 1000 },
    deviceScaleFactor: 1,
  });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`http://127.0.0.1:${http.address.port}/?range=900`);
  await page.waitForFunction(() => Number(document.documentElement.dataset.renders ?? 0) >= 1, undefined, {
    timeout: 15_000,
  });
  if (errors.length) throw new Error(`page errors: ${errors.join("; ")}`);
  await page.screenshot({ path: out, fullPage: true });
  console.log(JSON.stringify({ msg: "screenshot saved", path: out }));
} finally {
  await browser.close();
  await http.close();
  await source.close();
  await exporters.close();
}
