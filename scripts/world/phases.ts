// What one world run measures, phase by phase, on a running planet.
import { ADMIN_PORT } from "./core/plan.ts";
import {
  type FailoverReport,
  histogramMeanMs,
  type PathResult,
  type PopReport,
  rttMatches,
  type SiteReport,
  type WorldReport,
} from "./core/report.ts";
import type { CallEvent, RunningWorld } from "./runner.ts";

const num = (e: CallEvent, k: string): number => (typeof e[k] === "number" ? (e[k] as number) : Number.NaN);

/** A call that failed is reported as failed (its figures null), and the run goes on. */
const settle = (p: Promise<CallEvent>): Promise<CallEvent> =>
  p.catch((e: Error) => ({ event: "error", error: e.message.split("\n")[0] ?? "failed" }));

/** The POP's nonzero drop counters, for a failed call's report (what the relay refused, and why). */
const popDrops = (w: RunningWorld, pop: number): Record<string, number> => {
  const p = w.plan.pops[pop]!;
  const out: Record<string, number> = {};
  try {
    for (const m of w
      .scrape(p.ns, `http://${p.ip}:${ADMIN_PORT}/metrics`)
      .matchAll(/^gr_relay_drops_total\{[^}]*reason="([^"]+)"[^}]*\} (\d+)/gm))
      if (Number(m[2]) > 0) out[m[1]!] = Number(m[2]);
  } catch {}
  return out;
};

/**
 * A site call that fails is made once more, and the report says so (`retried` holds the first
 * attempt's error and the POP's drop counters at that moment). Setup under a heavily loaded host
 * can still fail for a reason not found yet (docs/world.md, "Reading a run").
 */
async function callWithRetry(
  w: RunningWorld,
  site: number,
  mode: "relay" | "direct",
  mediaMs: number,
  onEvent?: (e: CallEvent) => void,
): Promise<CallEvent> {
  const first = await settle(w.call(site, mode, mediaMs, onEvent));
  if (first.event !== "error") return first;
  const retried = { error: String(first.error), popDrops: popDrops(w, w.route[site]!) };
  const again = await settle(w.call(site, mode, mediaMs, onEvent));
  return { ...again, retried };
}

const path = (e: CallEvent, expectedRttMs: number): PathResult => ({
  ...(e.event === "error" ? { error: String(e.error) } : {}),
  ...(e.retried ? { retried: e.retried as PathResult["retried"] } : {}),
  connectMs: num(e, "connectMs"),
  firstAudioMs: num(e, "firstAudioMs"),
  rttMs: num(e, "rttMs"),
  jitterMs: num(e, "jitterMs"),
  lossPct: num(e, "lossPct"),
  expectedRttMs,
  transceiver: e.transceiver ?? null,
});

export interface FirstHop {
  sumMs: number;
  count: number;
}

/** Steady first-hop samples per POP, one value per poll interval that saw new ones. */
export type FirstHopSamples = number[][];

/** The histogram is polled this often, so each new consent check (every 4-6 s) is its own sample. */
const POLL_MS = 500;

const firstHopOf = (w: RunningWorld, pop: number): FirstHop => {
  const p = w.plan.pops[pop]!;
  const h = histogramMeanMs(
    w.scrape(p.ns, `http://${p.ip}:${ADMIN_PORT}/metrics`),
    "gr_relay_first_hop_rtt_seconds",
  );
  return { sumMs: (h.meanMs ?? 0) * h.count, count: h.count };
};

/** Sites start this far apart, so call setups (the CPU-heavy part) do not pile up. */
const STAGGER_MS = 2_500;

/**
 * Per site, a relay call and a direct call side by side; sites start STAGGER_MS apart and their
 * media overlaps. Each POP's first-hop samples are the steady consent checks (every 4-6 s), not
 * the setup burst with its retransmitted checks: from 1 s after the last of its sites connected to
 * the end of all calls, the POP's histogram is polled every POLL_MS, and each poll that saw new
 * samples gives one value (their mean), so a POP's figure can be a median, robust to one sample
 * the host's load delayed.
 */
export async function measureSites(
  w: RunningWorld,
  mediaMs: number,
  log: (l: string) => void,
): Promise<{ sites: SiteReport[]; firstHop: FirstHopSamples }> {
  const { plan } = w;
  const popOf = plan.sites.map((s) => w.route[s.index]!);
  const samples: FirstHopSamples = plan.pops.map(() => []);
  const last: (FirstHop | null)[] = plan.pops.map(() => null);
  const steady = plan.pops.map((p) => {
    const mine = plan.sites.filter((s) => popOf[s.index] === p.index);
    const waits = mine.map(() => Promise.withResolvers<void>());
    if (mine.length)
      void Promise.all(waits.map((x) => x.promise)).then(() => (last[p.index] = firstHopOf(w, p.index)));
    return { waits };
  });
  const poll = setInterval(() => {
    last.forEach((prev, pop) => {
      if (prev === null) return;
      const now = firstHopOf(w, pop);
      if (now.count > prev.count) samples[pop]!.push((now.sumMs - prev.sumMs) / (now.count - prev.count));
      last[pop] = now;
    });
  }, POLL_MS);
  const slot = (site: number): { resolve: () => void } => {
    const pop = popOf[site]!;
    const k = plan.sites.filter((s) => popOf[s.index] === pop).findIndex((s) => s.index === site);
    return steady[pop]!.waits[k]!;
  };
  const pairs = plan.sites.map(async (s) => {
    await new Promise((r) => setTimeout(r, s.index * STAGGER_MS));
    const pop = popOf[s.index]!;
    const [relay, direct] = await Promise.all([
      callWithRetry(w, s.index, "relay", mediaMs, (e) => {
        if (e.event === "connected") setTimeout(() => slot(s.index).resolve(), 1_000);
      }),
      callWithRetry(w, s.index, "direct", mediaMs),
    ]);
    slot(s.index).resolve(); // already resolved unless the call never connected
    const clusterName = String(relay.cluster ?? direct.cluster ?? "none");
    const c = plan.clusters.find((x) => x.spec.name === clusterName);
    const again = (e: CallEvent): string => (e.retried ? " (retried)" : "");
    log(
      `  ${s.site.name}: relay${again(relay)} rtt ${num(relay, "rttMs")} ms via ${plan.pops[pop]!.spec.name}, direct${again(direct)} ${num(direct, "rttMs")} ms, cluster ${clusterName}`,
    );
    return {
      name: s.site.name,
      pop: plan.pops[pop]!.spec.name,
      cluster: clusterName,
      relay: path(relay, c ? s.popRttMs[pop]! + c.backboneRttMs[pop]! : Number.NaN),
      direct: path(direct, c ? s.clusterRttMs[c.index]! : Number.NaN),
    } satisfies SiteReport;
  });
  const sites = await Promise.all(pairs).finally(() => clearInterval(poll));
  return { sites, firstHop: samples };
}

const median = (xs: number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Each POP's steady first-hop RTT (median) against the access links of the sites it served. */
export function popFirstHop(w: RunningWorld, sites: SiteReport[], firstHop: FirstHopSamples): PopReport[] {
  return w.plan.pops.map((p) => {
    const served = sites.filter((s) => s.pop === p.spec.name);
    const h = firstHop[p.index]!;
    const measured = median(h);
    const idx = served.map((s) => w.plan.sites.find((x) => x.site.name === s.name)!.index);
    const expected = idx.length
      ? idx.reduce((a, i) => a + w.plan.sites[i]!.popRttMs[p.index]!, 0) / idx.length
      : null;
    const r = (x: number | null): number | null => (x === null ? null : Math.round(x * 100) / 100);
    return {
      name: p.spec.name,
      sites: served.map((s) => s.name),
      expectedFirstHopMs: r(expected),
      measuredFirstHopMs: r(measured),
      samples: h.length,
      samplesMs: h.map((x) => Math.round(x * 10) / 10),
      match: expected === null || measured === null ? null : rttMatches(expected, measured),
    };
  });
}

/** A call from `site`; once media flows, its POP's anycast route is withdrawn; then restored. */
export async function failover(
  w: RunningWorld,
  site: number,
  redis: boolean,
  mediaMs: number,
): Promise<FailoverReport> {
  const pop = w.route[site]!;
  let moved: { to: number }[] = [];
  let done = false;
  const once = (): Promise<CallEvent> =>
    settle(
      w.call(site, "relay", mediaMs, (e) => {
        if (e.event === "connected")
          setTimeout(() => {
            if (!done) moved = w.withdraw(pop);
          }, 1_500);
      }),
    );
  let result = await once();
  // A call that never connected saw no route change: it says nothing about failover, so once more.
  let retried: string | undefined;
  if (result.event === "error" && moved.length === 0) {
    retried = String(result.error);
    result = await once();
  }
  done = true;
  w.restore(pop);
  const to = moved.find(() => true)?.to ?? pop;
  return {
    redis,
    site: w.plan.sites[site]!.site.name,
    from: w.plan.pops[pop]!.spec.name,
    to: w.plan.pops[to]!.spec.name,
    gapMs: num(result, "gapMs"),
    survived: result.event === "result" && num(result, "lastEchoAgoMs") < 500,
    ...(retried ? { retried } : {}),
  };
}

/** Stops every program of one cluster; every site then calls and must land on another cluster. */
export async function clusterDown(
  w: RunningWorld,
  cluster: number,
  deadlineMs: number,
): Promise<WorldReport["clusterDown"]> {
  const c = w.plan.clusters[cluster]!;
  for (const spec of w.world.clusterSpecs(c)) await w.world.kill(spec.name);
  const sites: { name: string; cluster: string | null; answeredMs: number }[] = [];
  for (const s of w.plan.sites) {
    const r = await w
      .call(s.index, "relay", 1_000)
      .catch((e: Error) => ({ event: "error", error: e.message }) as CallEvent);
    sites.push({
      name: s.site.name,
      cluster: typeof r.cluster === "string" ? r.cluster : null,
      answeredMs: num(r, "answeredMs"),
    });
  }
  const worst = Math.max(
    ...sites.map((s) => (Number.isNaN(s.answeredMs) ? Number.POSITIVE_INFINITY : s.answeredMs)),
  );
  return {
    cluster: c.spec.name,
    allLanded: sites.every((s) => s.cluster !== null && s.cluster !== c.spec.name),
    worstMs: Math.round(worst),
    deadlineMs,
    sites,
  };
}
