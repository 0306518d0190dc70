// Evaluates dashboard panels over the snapshot ring with the semantics of the PromQL in panels.ts:
//   quantile: histogram_quantile(q, sum by (le, <by>) (rate(<metric>_bucket{<sel>}[W])))
//   rate:     sum by (<by>) (rate(<metric>{<sel>}[W]))
//   gauge:    sum by (<by>) (<metric>{<sel>})
// The window at snapshot i starts at the newest snapshot at least W older than i (or the oldest
// retained one). Pure.

import { upsert } from "./map.ts";
import { type FilterLabel, type PanelDef, QUANTILES, quantileRef } from "./panel-def.ts";
import { parseLe, prepareCounts, sortedQuantile } from "./quantile.ts";
import type { Series, SnapshotStore } from "./store.ts";

export type Filters = Partial<Record<FilterLabel, readonly string[]>>;

export interface SeriesData {
  /** Group label values, e.g. { region: "EU" }. */
  group: Record<string, string>;
  /** "p50" | "p95" | "p99" | "n" for quantile panels; "value" otherwise. */
  ref: string;
  values: (number | null)[];
}

export interface PanelData {
  id: string;
  timestamps: number[];
  series: SeriesData[];
}

export interface RangeRequest {
  /** Evaluate snapshots with time >= from (ms). */
  from: number;
  /** At most this many points (thinned to the newest snapshot per time bucket). */
  maxPoints: number;
  /** rate()/increase() window in ms. */
  windowMs: number;
  filters: Filters;
  /** Only points newer than this (ms): live pages fetch just what they lack. */
  since?: number;
  /**
   * Bucket width (ms) for thinning; the same for every refresh of one range, so points fetched
   * earlier stay valid. Default: derived from the range and maxPoints.
   */
  stepMs?: number;
}

function matches(s: Series, p: PanelDef, filters: Filters): boolean {
  for (const [k, v] of Object.entries(p.match ?? {})) if ((s.labels[k] ?? "") !== v) return false;
  for (const f of p.filters) {
    const allowed = filters[f];
    if (allowed !== undefined && allowed.length > 0 && !allowed.includes(s.labels[f] ?? "")) return false;
  }
  return true;
}

function groupOf(s: Series, by: readonly string[]): [string, Record<string, string>] {
  const g: Record<string, string> = {};
  let key = "";
  for (const l of by) {
    const v = s.labels[l] ?? "";
    g[l] = v;
    key += `${v}\u0000`;
  }
  return [key, g];
}

/** A bucket width that gives at most about maxPoints points over rangeMs. */
export function stepFor(rangeMs: number, maxPoints: number): number {
  return Math.max(1, Math.ceil(rangeMs / Math.max(1, maxPoints - 1)));
}

/**
 * Sequence numbers to evaluate, oldest first, only those newer than `since`: every snapshot from
 * `from` on when they are at most maxPoints, else the newest snapshot of each time bucket
 * (floor(time / stepMs)), at most maxPoints.
 */
export function pointsFor(
  store: SnapshotStore,
  from: number,
  maxPoints: number,
  since = Number.NEGATIVE_INFINITY,
  stepMs?: number,
): number[] {
  const seqs: number[] = [];
  for (let s = store.end() - 1; s >= store.start() && store.time(s) >= from; s--) seqs.push(s);
  let out: number[];
  if (seqs.length <= maxPoints) out = seqs;
  else {
    const step = stepMs ?? stepFor(store.time(seqs[0] ?? 0) - from, maxPoints);
    out = [];
    let last = Number.NaN;
    for (const s of seqs) {
      const b = Math.floor(store.time(s) / step);
      if (b !== last) out.push(s);
      last = b;
    }
  }
  if (out.length > maxPoints) out.length = maxPoints;
  return out.filter((s) => store.time(s) > since).reverse();
}

/** The snapshot a window ending at `seq` starts from, or -1 when there is none before it. */
export function windowStart(store: SnapshotStore, seq: number, windowMs: number): number {
  const limit = store.time(seq) - windowMs;
  let j = seq - 1;
  while (j > store.start() && store.time(j) > limit) j--;
  return j >= store.start() ? j : -1;
}

function increase(store: SnapshotStore, s: Series, i: number, j: number): number {
  const a = store.value(s, i);
  if (Number.isNaN(a)) return 0;
  const b = store.value(s, j);
  return a - (Number.isNaN(b) ? 0 : b);
}

interface Group<T> {
  labels: Record<string, string>;
  members: T;
}

export function evaluatePanel(store: SnapshotStore, p: PanelDef, req: RangeRequest): PanelData {
  const seqs = pointsFor(store, req.from, req.maxPoints, req.since, req.stepMs);
  const data: PanelData = { id: p.id, timestamps: seqs.map((s) => store.time(s)), series: [] };
  if (p.kind === "quantile") evaluateQuantile(store, p, req, seqs, data);
  else evaluateSum(store, p, req, seqs, data);
  return data;
}

function evaluateSum(store: SnapshotStore, p: PanelDef, req: RangeRequest, seqs: number[], out: PanelData) {
  const groups = new Map<string, Group<Series[]>>();
  for (const s of store.byName(p.metric)) {
    if (!matches(s, p, req.filters)) continue;
    const [key, labels] = groupOf(s, p.by);
    upsert(groups, key, () => ({ labels, members: [] as Series[] })).members.push(s);
  }
  for (const g of sortGroups(groups)) {
    const values = seqs.map((i): number | null => {
      if (p.kind === "gauge") {
        let sum = 0;
        let any = false;
        for (const s of g.members) {
          const v = store.value(s, i);
          if (!Number.isNaN(v)) {
            sum += v;
            any = true;
          }
        }
        return any ? sum : null;
      }
      const j = windowStart(store, i, req.windowMs);
      if (j < 0) return null;
      const dt = (store.time(i) - store.time(j)) / 1000;
      if (!(dt > 0)) return null;
      let sum = 0;
      for (const s of g.members) sum += increase(store, s, i, j);
      return sum / dt;
    });
    out.series.push({ group: g.labels, ref: "value", values });
  }
}

function evaluateQuantile(
  store: SnapshotStore,
  p: PanelDef,
  req: RangeRequest,
  seqs: number[],
  out: PanelData,
) {
  const groups = new Map<string, Group<{ buckets: { le: number; s: Series }[]; counts: Series[] }>>();
  const group = (s: Series) => {
    const [key, labels] = groupOf(s, p.by);
    return upsert(groups, key, () => ({ labels, members: { buckets: [], counts: [] } }));
  };
  for (const s of store.byName(`${p.metric}_bucket`)) {
    if (!matches(s, p, req.filters)) continue;
    const le = parseLe(s.labels.le ?? "");
    if (le !== null) group(s).members.buckets.push({ le, s });
  }
  for (const s of store.byName(`${p.metric}_count`))
    if (matches(s, p, req.filters)) group(s).members.counts.push(s);

  for (const g of sortGroups(groups)) {
    // Bounds sorted and merged once per group; per point only the counts change.
    const members = g.members.buckets.sort((a, b) => a.le - b.le);
    const les: number[] = [];
    const slot = new Int32Array(members.length);
    members.forEach((m, i) => {
      if (les.length === 0 || les[les.length - 1] !== m.le) les.push(m.le);
      slot[i] = les.length - 1;
    });
    const counts = new Float64Array(les.length);
    const rows = QUANTILES.map((q) => ({ q, values: [] as (number | null)[] }));
    const n: (number | null)[] = [];
    for (const i of seqs) {
      const j = windowStart(store, i, req.windowMs);
      if (j < 0) {
        for (const r of rows) r.values.push(null);
        n.push(null);
        continue;
      }
      counts.fill(0);
      for (let k = 0; k < members.length; k++) counts[slot[k]!]! += increase(store, members[k]!.s, i, j);
      prepareCounts(counts, les.length);
      for (const r of rows) {
        const v = sortedQuantile(r.q, les, counts, les.length);
        r.values.push(Number.isFinite(v) ? v : null);
      }
      let count = 0;
      for (const s of g.members.counts) count += increase(store, s, i, j);
      n.push(g.members.counts.length ? count : null);
    }
    for (const r of rows) out.series.push({ group: g.labels, ref: quantileRef(r.q), values: r.values });
    out.series.push({ group: g.labels, ref: "n", values: n });
  }
}

function sortGroups<T>(groups: Map<string, Group<T>>): Group<T>[] {
  return [...groups.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((e) => e[1]);
}
