// The run's report as data, plus its plain-text table (pure). Expected figures come from the plan
// (the emulated links), measured ones from the clients, the transceivers and the POPs' metrics.
import type { ConferenceReport } from "./conference.ts";
import type { WorldPlan } from "./plan.ts";

export interface PathResult {
  /** Set when the call failed (then every figure is null in the JSON). */
  error?: string;
  /** Set when the first attempt failed and these figures are the second's. */
  retried?: { error: string; popDrops: Record<string, number> };
  connectMs: number;
  firstAudioMs: number;
  rttMs: number;
  jitterMs: number;
  lossPct: number;
  /** RTT the emulated links add up to (both directions), ms. */
  expectedRttMs: number;
  transceiver: unknown;
}

export interface SiteReport {
  name: string;
  pop: string;
  cluster: string;
  relay: PathResult;
  direct: PathResult;
}

export interface PopReport {
  name: string;
  sites: string[];
  expectedFirstHopMs: number | null;
  /** Median of the steady samples. */
  measuredFirstHopMs: number | null;
  samples: number;
  samplesMs: number[];
  match: boolean | null;
}

export interface FailoverReport {
  redis: boolean;
  site: string;
  from: string;
  to: string;
  gapMs: number;
  survived: boolean;
  /** Set when the first call never connected (so no route changed under it) and was made again. */
  retried?: string;
}

export interface LinkCounters {
  offered: number;
  delivered: number;
  lost: number;
  queueFull: number;
}

export interface WorldReport {
  sites: SiteReport[];
  pops: PopReport[];
  popRttMatch: boolean;
  failover: FailoverReport[];
  clusterDown: {
    cluster: string;
    allLanded: boolean;
    worstMs: number;
    deadlineMs: number;
    sites: { name: string; cluster: string | null; answeredMs: number }[];
  } | null;
  /** The conference across the clusters (`--conference`): absent without the option. */
  conference?: ConferenceReport;
  assumptions: WorldPlan["links"];
  /** What each emulated link did during the site calls: route name -> up/down counters. */
  links: Record<string, { up: LinkCounters; down: LinkCounters }>;
  durationS: number;
  /** The host's load while the run went: with load above the core count, delays stretch. */
  host: { cpus: number; loadAtStart: number; loadAtEnd: number };
}

/** Mean of a Prometheus histogram (seconds) over all its label sets, in ms; null without samples. */
export function histogramMeanMs(text: string, family: string): { meanMs: number | null; count: number } {
  let sum = 0;
  let count = 0;
  for (const line of text.split("\n")) {
    const m = /^(\w+?)(_sum|_count)(?:\{[^}]*\})? ([0-9.eE+-]+)$/.exec(line);
    if (!m || m[1] !== family) continue;
    if (m[2] === "_sum") sum += Number(m[3]);
    else count += Number(m[3]);
  }
  return { meanMs: count > 0 ? (sum / count) * 1000 : null, count };
}

/** Within ±20 % of the emulated RTT. */
export const rttMatches = (expected: number, measured: number): boolean =>
  Math.abs(measured - expected) <= 0.2 * expected;

const pad = (s: string, n: number): string => (s.length >= n ? s : s + " ".repeat(n - s.length));
const f = (x: number): string => (Number.isFinite(x) ? x.toFixed(x >= 100 ? 0 : 1) : "-");

export function summaryTable(r: WorldReport): string {
  const rows: string[][] = [
    ["site", "pop", "cluster", "path", "rtt exp", "rtt", "jitter", "loss %", "connect", "1st audio"],
  ];
  for (const s of r.sites) {
    for (const [name, p] of [
      ["relay", s.relay],
      ["direct", s.direct],
    ] as const) {
      if (p.error) {
        rows.push([
          name === "relay" ? s.name : "",
          name === "relay" ? s.pop : "",
          "",
          name,
          `FAILED: ${p.error}`,
        ]);
        continue;
      }
      rows.push([
        name === "relay" ? s.name : "",
        name === "relay" ? s.pop : "",
        name === "relay" ? s.cluster : "",
        p.retried ? `${name}*` : name,
        f(p.expectedRttMs),
        f(p.rttMs),
        f(p.jitterMs),
        f(p.lossPct),
        f(p.connectMs),
        f(p.firstAudioMs),
      ]);
    }
  }
  // A failed path's row ends in one long cell that spans the figures' columns.
  const full = rows.filter((row) => row.length === rows[0]!.length);
  const widths = rows[0]!.map((_, i) => Math.max(...full.map((row) => row[i]!.length)) + 2);
  const lines = rows.map((row) =>
    row
      .map((c, i) => (i < row.length - 1 ? pad(c, widths[i]!) : c))
      .join("")
      .trimEnd(),
  );
  lines.splice(1, 0, "-".repeat(lines[0]!.length));
  lines.push(
    "",
    "times in ms; rtt exp = what the emulated links add up to; rtt = median echo RTT at the client",
  );
  for (const x of r.sites)
    for (const [name, p] of [
      ["relay", x.relay],
      ["direct", x.direct],
    ] as const)
      if (p.retried)
        lines.push(
          `${x.name} ${name}*: first attempt failed and was made again: ${p.retried.error} (POP drops then: ${JSON.stringify(p.retried.popDrops)})`,
        );
  lines.push(
    `host: ${r.host.cpus} cores, load average ${r.host.loadAtStart.toFixed(1)} at start, ${r.host.loadAtEnd.toFixed(1)} at end${r.host.loadAtEnd > r.host.cpus ? " (above the core count: measured delays include the host's scheduling)" : ""}`,
  );
  lines.push(
    "",
    "POP first hop (transceiver Binding request -> client response, at the POP; median of steady samples):",
  );
  for (const p of r.pops)
    lines.push(
      `  ${pad(p.name, 12)} sites ${pad(p.sites.join(",") || "-", 24)} expected ${f(p.expectedFirstHopMs ?? Number.NaN)}  measured ${f(p.measuredFirstHopMs ?? Number.NaN)}  (samples ${p.samplesMs.join(", ") || "none"}) ${p.match === null ? "no traffic" : p.match ? "match" : "MISMATCH"}`,
    );
  lines.push(`  popRttMatch: ${r.popRttMatch}`);
  lines.push("", "emulated links during the site calls (realized loss, up / down):");
  const pct = (c: LinkCounters): string =>
    c.offered ? `${((100 * c.lost) / c.offered).toFixed(2)}% of ${c.offered}` : "-";
  for (const [name, l] of Object.entries(r.links))
    lines.push(`  ${pad(name, 24)} ${pad(pct(l.up), 18)} ${pct(l.down)}`);
  for (const x of r.failover)
    lines.push(
      `failover (${x.redis ? "with" : "without"} Redis): ${x.site} ${x.from} -> ${x.to}, media gap ${f(x.gapMs)} ms, ${x.survived ? "call survived" : "CALL LOST"}${x.retried ? ` (second call: the first never connected: ${x.retried})` : ""}`,
    );
  if (r.clusterDown)
    lines.push(
      `cluster ${r.clusterDown.cluster} down: ${r.clusterDown.allLanded ? "all sites landed on the other cluster" : "NOT all sites landed elsewhere"}, worst offer->answer ${f(r.clusterDown.worstMs)} ms (edge deadline ${r.clusterDown.deadlineMs} ms)`,
    );
  return lines.join("\n");
}

/** The routing plan alone (no namespaces, no root): where each site enters and what it should see. */
export function planTable(w: WorldPlan): string {
  const rows: string[][] = [
    [
      "site",
      "pop",
      "first hop",
      "next pop",
      ...w.clusters.map((c) => `via relay / direct to ${c.spec.name}`),
    ],
  ];
  for (const s of w.sites) {
    const pop = s.popOrder[0]!;
    const next = s.popOrder[1];
    rows.push([
      s.site.name,
      w.pops[pop]!.spec.name,
      f(s.popRttMs[pop]!),
      next === undefined ? "-" : `${w.pops[next]!.spec.name} (${f(s.popRttMs[next]!)})`,
      ...w.clusters.map(
        (c) => `${f(s.popRttMs[pop]! + c.backboneRttMs[pop]!)} / ${f(s.clusterRttMs[c.index]!)}`,
      ),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)) + 2);
  const lines = rows.map((row) =>
    row
      .map((c, i) => pad(c, widths[i]!))
      .join("")
      .trimEnd(),
  );
  lines.splice(1, 0, "-".repeat(lines[0]!.length));
  lines.push(
    "",
    "emulated RTTs in ms (public links from the RTT table, backbone x rttFactor); which cluster a",
  );
  lines.push("call lands on is the edge's steering decision, made in the full run");
  for (const n of w.notes) lines.push(`note: ${n}`);
  return lines.join("\n");
}
