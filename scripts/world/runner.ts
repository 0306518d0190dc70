// Brings the planet up and down: plans it, builds its namespaces, starts a cleanup watchdog that
// outlives this process, starts every program in its namespace, and offers the operations a run
// needs (a call from a site, an anycast route change, scraping an admin endpoint). stop() is
// idempotent and leaves no namespace, process or temporary file behind.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Topology } from "../../shared/topology/schema.ts";
import { launchChromium } from "../lib/chromium.ts";
import { which } from "../lib/system-deps.ts";
import { newSecrets, ROOT, World } from "./components.ts";
import { netBatches } from "./core/net.ts";
import {
  type ConferenceOptions,
  DASHBOARD,
  EDGE,
  planWorld,
  VIP,
  VIP_PORT,
  type WorldPlan,
} from "./core/plan.ts";
import type { LinkCounters } from "./core/report.ts";
import type { SitesFile } from "./core/sites.ts";
import { GatewayWatch } from "./gateway-watch.ts";
import { buildNetwork, nsExec, removeRun, removeStale, routeVip } from "./netns.ts";
import type { ParticipantClient } from "./participant.ts";
import { spawnParticipant } from "./participant.ts";
import { groupMembers } from "./stopped.ts";

export interface WorldOptions {
  topology: Topology;
  sites: SitesFile;
  transceivers?: number;
  /** POP relays mirror flows to a shared Redis from the start. */
  redis: boolean;
  /** Transceivers take part in conferences, the clusters linked by the link emulator (--conference). */
  conference?: ConferenceOptions | null;
  /** Also run the dashboard (in the fabric namespace). */
  dashboard?: boolean;
  log: (line: string) => void;
  onChildLine?: (name: string, line: string) => void;
}

export type CallEvent = Record<string, unknown> & { event: string };

export interface RunningWorld {
  plan: WorldPlan;
  world: World;
  /** Which POP each site's VIP route points at now. */
  route: number[];
  redisAvailable: boolean;
  call(
    site: number,
    mode: "relay" | "direct",
    mediaMs: number,
    onEvent?: (e: CallEvent) => void,
  ): Promise<CallEvent>;
  /** Withdraws a POP's anycast route: its sites move to their next nearest POP. Returns the moves. */
  withdraw(pop: number): { site: number; from: number; to: number }[];
  restore(pop: number): void;
  scrape(ns: string, url: string): string;
  restartPops(redis: boolean): Promise<void>;
  /** A conference participant at a site (`extra` completes its config: callId, freq, farFreq). */
  participant(site: number, extra: Record<string, unknown>): ParticipantClient;
  /** Restarts every transceiver with CONFERENCE_NACK on or off. */
  restartTransceivers(nack: boolean): Promise<void>;
  /** Screenshot of the dashboard (needs `dashboard`), taken by Chromium inside the fabric namespace. */
  dashboardShot(file: string): Promise<void>;
  /** Every link emulator's counters (each prints them on SIGUSR2). */
  linkStats(): Promise<Record<string, { up: LinkCounters; down: LinkCounters }>>;
  stop(): Promise<void>;
}

export async function startWorld(o: WorldOptions): Promise<RunningWorld> {
  const stale = removeStale();
  if (stale.length) o.log(`removed ${stale.length} namespaces left by a killed run`);
  const tag = `grw${process.pid}x`;
  removeRun(tag);
  const plan = planWorld(tag, o.topology, o.sites, o.transceivers ?? 2, o.conference ?? null);
  const dir = mkdtempSync(join(tmpdir(), "gr-world-"));
  const watchdog = spawn(
    process.execPath,
    [join(ROOT, "scripts/world/watchdog.ts"), String(process.pid), tag],
    {
      detached: true,
      stdio: "ignore",
    },
  );
  watchdog.unref();
  const linkLines = new Map<string, string>();
  const gateways = new GatewayWatch();
  const world = new World(plan, dir, newSecrets(), (name, line) => {
    if (name.startsWith("linkem-") && line.includes('"msg":"stats"')) linkLines.set(name, line);
    gateways.line(name, line);
    o.onChildLine?.(name, line);
  });
  const clients = new Set<ChildProcess>();
  const withdrawn = new Set<number>();
  const route = plan.sites.map((s) => s.popOrder[0]!);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const c of clients) c.kill("SIGKILL");
    await world.stop().catch(() => {});
    removeRun(tag);
    try {
      watchdog.kill("SIGTERM");
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    o.log(`building ${netBatches(plan).namespaces.length} namespaces (${tag}*)`);
    buildNetwork(netBatches(plan));
    const redisSpec = world.redisSpec();
    o.log("starting link emulators, Redis and the edge");
    await Promise.all([
      ...world.linkemSpecs().map((s) => world.run(s)),
      ...(redisSpec ? [world.run(redisSpec)] : []),
      world.run(world.edgeSpec()),
    ]);
    if (o.redis && !redisSpec) throw new Error("--redis needs redis-server (apt-get install redis-server)");
    o.log(`starting ${plan.clusters.length} clusters and ${plan.pops.length} POPs`);
    await Promise.all(plan.clusters.flatMap((c) => world.clusterSpecs(c).map((s) => world.run(s))));
    await Promise.all(plan.pops.map((p) => world.run(world.popSpec(p, o.redis))));
    if (o.dashboard) await world.run(world.dashboardSpec());
    // A gateway polled before its transceiver was ready marks it down until its next poll.
    await gateways.settled();
  } catch (e) {
    await stop();
    throw e;
  }

  /** What every client process is told: the edge, the key, its address, its place (request.cf). */
  const clientBase = (site: number): Record<string, unknown> => {
    const s = plan.sites[site]!;
    return {
      edge: `http://${EDGE.host}:${EDGE.port}`,
      apiKey: world.secrets.apiKey,
      ip: s.ip,
      vip: `${VIP}:${VIP_PORT}`,
      cf: {
        latitude: String(s.site.latitude),
        longitude: String(s.site.longitude),
        country: s.site.country,
        continent: s.site.continent,
        colo: s.site.colo,
        city: s.site.name,
      },
    };
  };

  const nextPop = (site: number): number => {
    const order = plan.sites[site]!.popOrder.filter((j) => !withdrawn.has(j));
    if (order.length === 0) throw new Error(`site ${plan.sites[site]!.site.name} would have no POP left`);
    return order[0]!;
  };

  return {
    plan,
    world,
    route,
    redisAvailable: redisSpec_(world),
    call(site, mode, mediaMs, onEvent) {
      const s = plan.sites[site]!;
      const cfg = { ...clientBase(site), mode, mediaMs };
      const child = spawn(
        "ip",
        ["netns", "exec", s.ns, process.execPath, join(ROOT, "scripts/world/client.ts")],
        {
          env: { ...process.env, WORLD_CLIENT: JSON.stringify(cfg) },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      clients.add(child);
      const tail: string[] = [];
      return new Promise<CallEvent>((resolve, reject) => {
        let result: CallEvent | null = null;
        createInterface({ input: child.stderr! }).on("line", (l) => {
          tail.push(l);
          if (tail.length > 20) tail.shift();
        });
        createInterface({ input: child.stdout! }).on("line", (l) => {
          let e: CallEvent;
          try {
            e = JSON.parse(l) as CallEvent;
          } catch {
            return;
          }
          if (typeof e.event !== "string") return;
          onEvent?.(e);
          if (e.event === "result" || e.event === "error") result = e;
        });
        child.once("exit", (code) => {
          clients.delete(child);
          if (result?.event === "result") resolve(result);
          else
            reject(
              new Error(
                `call from ${s.site.name} (${mode}) failed: ${result ? JSON.stringify(result) : `exit ${code}`}\n${tail.join("\n")}`,
              ),
            );
        });
      });
    },
    withdraw(pop) {
      withdrawn.add(pop);
      const moves: { site: number; from: number; to: number }[] = [];
      plan.sites.forEach((_, i) => {
        if (route[i] !== pop) return;
        const to = nextPop(i);
        routeVip(plan, i, to);
        moves.push({ site: i, from: pop, to });
        route[i] = to;
      });
      return moves;
    },
    restore(pop) {
      withdrawn.delete(pop);
      plan.sites.forEach((_, i) => {
        const to = nextPop(i);
        if (route[i] !== to) {
          routeVip(plan, i, to);
          route[i] = to;
        }
      });
    },
    scrape(ns, url) {
      return nsExec(ns, ["curl", "-sS", "--max-time", "3", url]);
    },
    async dashboardShot(file) {
      const wrapper = join(dir, "chromium-in-fabric");
      const bin = which("chromium");
      if (!bin) throw new Error("--dashboard-shot needs chromium (apt-get install chromium)");
      writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec ${plan.netNs} ${bin} "$@"\n`, {
        mode: 0o755,
      });
      const b = await launchChromium([], wrapper);
      try {
        const page = await b.browser.newPage({
          viewport: { width: 1500, height: 1000 },
          deviceScaleFactor: 1,
        });
        await page.goto(`http://${DASHBOARD.host}:${DASHBOARD.port}/?range=300`);
        await page.waitForFunction(
          () => Number(document.documentElement.dataset.renders ?? 0) >= 1,
          undefined,
          {
            timeout: 15_000,
          },
        );
        await page.screenshot({ path: file });
      } finally {
        await b.close();
      }
    },
    async linkStats() {
      linkLines.clear();
      const ems = world.sup.running.filter((r) => r.name.startsWith("linkem-"));
      // To the emulator itself: its supervisor-side parent is a wrapper (`ip netns exec` under
      // run-watched) that forwards only INT/TERM/HUP and that SIGUSR2 would terminate.
      for (const r of ems)
        for (const pid of groupMembers(r.child.pid ?? -1, "scripts/world/linkem/main.ts"))
          process.kill(pid, "SIGUSR2");
      for (let i = 0; i < 40 && linkLines.size < ems.length; i++) await new Promise((r) => setTimeout(r, 50));
      const out: Record<string, { up: LinkCounters; down: LinkCounters }> = {};
      for (const line of linkLines.values()) {
        const routes = (
          JSON.parse(line) as { routes: Record<string, { up: LinkCounters; down: LinkCounters }> }
        ).routes;
        for (const [k, v] of Object.entries(routes)) if (v.up.offered + v.down.offered > 0) out[k] = v;
      }
      return out;
    },
    participant(site, extra) {
      const s = plan.sites[site]!;
      return spawnParticipant(s.ns, s.site.name, { ...clientBase(site), ...extra }, clients);
    },
    async restartTransceivers(nack) {
      world.conferenceNack = nack;
      const specs = plan.clusters.flatMap((c) =>
        world.clusterSpecs(c).filter((x) => x.name.includes("-transceiver-")),
      );
      await Promise.all(specs.map((x) => world.kill(x.name)));
      await Promise.all(specs.map((x) => world.run(x)));
      // Until each gateway has seen its transceiver again, the edge would steer calls elsewhere.
      await gateways.settled();
    },
    async restartPops(redis) {
      // Each old relay must have let go of its ports before its replacement binds them.
      await Promise.all(plan.pops.map((p) => world.kill(p.spec.name, p.ns, world.popPorts(p))));
      await Promise.all(plan.pops.map((p) => world.run(world.popSpec(p, redis))));
    },
    stop,
  };
}

const redisSpec_ = (w: World): boolean => w.sup.running.some((r) => r.name === "redis");
