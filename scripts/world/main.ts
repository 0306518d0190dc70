// `npm run world -- [--report FILE] [--topology FILE] [--sites FILE] [--redis] [--plot FILE]
// [--dashboard-shot FILE] [--media-ms N] [--transceivers N] [--plan-only] [--verbose]
// [--conference [--conference-loss 0.05] [--conference-sites OWNER,JOINER] [--conference-ms N]]`: builds the emulated planet, measures every site's call through the Global Relay
// and straight to its cluster, checks each POP's first-hop RTT, withdraws a POP mid-call (without
// and with Redis), takes a cluster down, prints a summary table and writes the report. Removes
// everything it made on every exit path (a watchdog covers SIGKILL).
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseTopology } from "../../shared/topology/schema.ts";
import { conferenceScenario } from "./conference-phase.ts";
import { conferenceLine } from "./core/conference.ts";
import { planWorld } from "./core/plan.ts";
import { planTable, summaryTable, type WorldReport } from "./core/report.ts";
import { parseSites } from "./core/sites.ts";
import { clusterDown, failover, measureSites, popFirstHop } from "./phases.ts";
import { renderPlot } from "./plot.ts";
import { type RunningWorld, startWorld } from "./runner.ts";

const here = import.meta.dirname;
const { values: a } = parseArgs({
  options: {
    report: { type: "string" },
    topology: { type: "string", default: resolve(here, "topology.json") },
    sites: { type: "string", default: resolve(here, "sites.json") },
    redis: { type: "boolean", default: false },
    plot: { type: "string" },
    "dashboard-shot": { type: "string" },
    "media-ms": { type: "string", default: "14000" },
    verbose: { type: "boolean", default: false },
    "plan-only": { type: "boolean", default: false },
    transceivers: { type: "string", default: "2" },
    conference: { type: "boolean", default: false },
    "conference-loss": { type: "string" },
    "conference-sites": { type: "string", default: "frankfurt,sydney" },
    "conference-ms": { type: "string", default: "10000" },
  },
});
const log = (l: string): void => console.log(l);
const started = Date.now();
const loadAtStart = loadavg()[0]!;
const topology = parseTopology(readFileSync(a.topology!, "utf8"), a.topology!);
const sitesParsed = parseSites(JSON.parse(readFileSync(a.sites!, "utf8")));
if (!sitesParsed.ok) {
  console.error(`${a.sites}:\n  ${sitesParsed.errors.join("\n  ")}`);
  process.exit(2);
}
const mediaMs = Number(a["media-ms"]);
const transceivers = Number(a.transceivers);
const confLoss = a["conference-loss"] === undefined ? null : Number(a["conference-loss"]);
if (confLoss !== null && !(confLoss >= 0 && confLoss < 1)) {
  console.error("--conference-loss: a fraction 0-1, e.g. 0.05");
  process.exit(2);
}
const confSites = (a["conference-sites"] ?? "")
  .split(",")
  .map((n) => sitesParsed.file.sites.findIndex((s) => s.name === n));
if (
  a.conference &&
  (confSites.length !== 2 || confSites.some((i) => i < 0) || confSites[0] === confSites[1])
) {
  console.error(`--conference-sites: two different site names of ${a.sites}, owner first`);
  process.exit(2);
}
const conference = a.conference ? { lossPct: confLoss === null ? null : confLoss * 100 } : null;
if (a["plan-only"]) {
  console.log(planTable(planWorld("grw0x", topology, sitesParsed.file, transceivers)));
  process.exit(0);
}
// A hard bound on the whole run, whatever hangs (the conference's two passes add about a minute).
const boundMin = conference ? 7 : 5;
const bound = setTimeout(() => {
  console.error(`world: the run took over ${boundMin} minutes; stopping`);
  void finish(1);
}, boundMin * 60_000);

let w: RunningWorld | null = null;
let finishing = false;
async function finish(code: number): Promise<never> {
  if (!finishing) {
    finishing = true;
    await w?.stop();
  }
  clearTimeout(bound);
  process.exit(code);
}
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, () => void finish(130));

try {
  w = await startWorld({
    topology,
    sites: sitesParsed.file,
    redis: a.redis!,
    transceivers,
    conference,
    dashboard: a["dashboard-shot"] !== undefined,
    log,
    ...(a.verbose ? { onChildLine: (n: string, l: string) => console.log(`[${n}] ${l}`) } : {}),
  });
  log(`world up in ${((Date.now() - started) / 1000).toFixed(1)} s; VIP routes:`);
  for (const s of w.plan.sites)
    log(
      `  ${s.site.name} -> ${w.plan.pops[w.route[s.index]!]!.spec.name} (${s.popRttMs[w.route[s.index]!]} ms)`,
    );
  log("calls, relay and direct, per site:");
  const { sites, firstHop } = await measureSites(w, mediaMs, log);
  const pops = popFirstHop(w, sites, firstHop);
  const links = await w.linkStats();
  const fails = [];
  const movable = w.plan.sites.findIndex((s) => s.popOrder.length > 1);
  if (movable >= 0) {
    log("anycast route change mid-call:");
    fails.push(await failover(w, movable, a.redis!, 10_000));
    if (w.redisAvailable) {
      await w.restartPops(!a.redis);
      fails.push(await failover(w, movable, !a.redis, 10_000));
    }
  }
  let conf: WorldReport["conference"];
  if (conference) {
    log("a conference across the clusters:");
    conf = await conferenceScenario(w, confSites[0]!, confSites[1]!, Number(a["conference-ms"]), log);
  }
  let down: WorldReport["clusterDown"] = null;
  if (w.plan.clusters.length > 1) {
    log("one cluster down:");
    const busiest = w.plan.clusters.findIndex((c) => sites.some((s) => s.cluster === c.spec.name));
    down = await clusterDown(w, Math.max(0, busiest), 6_000);
  }
  const report: WorldReport = {
    sites,
    pops,
    popRttMatch: pops.every((p) => p.match !== false) && pops.some((p) => p.match === true),
    failover: fails.sort((x, y) => Number(x.redis) - Number(y.redis)),
    clusterDown: down,
    ...(conf ? { conference: conf } : {}),
    assumptions: w.plan.links,
    links,
    durationS: Math.round((Date.now() - started) / 1000),
    host: { cpus: availableParallelism(), loadAtStart, loadAtEnd: loadavg()[0]! },
  };
  console.log(`\n${summaryTable(report)}\n`);
  if (conf) {
    console.log(`conference (backbone loss ${conf.backboneLossPct} % each way):`);
    for (const p of conf.passes)
      console.log(`  NACK ${p.nack ? "on " : "off"}: ${p.error ?? conferenceLine(p)}`);
  }
  if (a.report) writeFileSync(a.report, `${JSON.stringify(report, null, 2)}\n`);
  if (a.plot) await renderPlot(report, a.plot);
  if (a["dashboard-shot"]) await w.dashboardShot(a["dashboard-shot"]);
  log(`done in ${report.durationS} s${a.report ? `; report: ${a.report}` : ""}`);
  await finish(0);
} catch (e) {
  console.error(`world: ${(e as Error).message}`);
  await finish(1);
}
