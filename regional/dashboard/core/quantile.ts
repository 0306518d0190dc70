// histogram_quantile for classic (`le`-bucketed) histograms, with PromQL's exact semantics so the
// built-in dashboard and Grafana show the same number for the same data: buckets sorted by upper
// bound, equal bounds merged, counts forced monotonic, linear interpolation inside the bucket that
// holds the rank, a lower bound of 0 for the first bucket, and the second-highest bound when the rank
// falls in the +Inf bucket. Pure.

export interface Bucket {
  /** The `le` bound (may be +Inf). */
  le: number;
  /** Cumulative count (or its rate/increase) of observations <= le. */
  count: number;
}

/** Parses an `le` label value ("0.005", "+Inf"); null when it is not a number. */
export function parseLe(text: string): number | null {
  if (text === "+Inf" || text === "Inf" || text === "+inf" || text === "inf") return Number.POSITIVE_INFINITY;
  const v = Number(text);
  return text.trim() !== "" && !Number.isNaN(v) ? v : null;
}

/**
 * The q-quantile of a classic histogram. Returns NaN for no observations, fewer than two buckets
 * or a histogram without a +Inf bucket; -Inf/+Inf for q outside [0, 1], like PromQL. Does not
 * modify its input.
 */
export function histogramQuantile(q: number, input: readonly Bucket[]): number {
  if (Number.isNaN(q)) return Number.NaN;
  if (q < 0) return Number.NEGATIVE_INFINITY;
  if (q > 1) return Number.POSITIVE_INFINITY;
  if (input.length === 0) return Number.NaN;
  const sorted = [...input].sort((a, b) => a.le - b.le);
  if (sorted[sorted.length - 1]!.le !== Number.POSITIVE_INFINITY) return Number.NaN;

  // Merge equal bounds (several series summed into one group can repeat a bound).
  const b: Bucket[] = [];
  for (const x of sorted) {
    const last = b[b.length - 1];
    if (last !== undefined && last.le === x.le) last.count += x.count;
    else b.push({ le: x.le, count: x.count });
  }
  // Tiny float noise from summed rates must not break the monotonic search below.
  let prev = b[0]!.count;
  for (let i = 1; i < b.length; i++) {
    const cur = b[i]!.count;
    const delta = Math.abs(cur - prev);
    if (delta === 0) continue;
    if (delta / cur <= 1e-12) b[i]!.count = prev;
    else prev = cur;
  }
  // Force monotonic counts (the envelope), as PromQL does for inconsistent exporters.
  let max = b[0]!.count;
  for (let i = 1; i < b.length; i++) {
    if (b[i]!.count > max) max = b[i]!.count;
    else b[i]!.count = max;
  }
  if (b.length < 2) return Number.NaN;
  const observations = b[b.length - 1]!.count;
  if (!(observations > 0)) return Number.NaN;

  let rank = q * observations;
  // First bucket (excluding +Inf) whose cumulative count reaches the rank.
  let lo = 0;
  let hi = b.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (b[mid]!.count >= rank) hi = mid;
    else lo = mid + 1;
  }
  const idx = lo;
  if (idx === b.length - 1) return b[b.length - 2]!.le;
  if (idx === 0 && b[0]!.le <= 0) return b[0]!.le;
  let start = 0;
  const end = b[idx]!.le;
  let count = b[idx]!.count;
  if (idx > 0) {
    start = b[idx - 1]!.le;
    count -= b[idx - 1]!.count;
    rank -= b[idx - 1]!.count;
  }
  return start + (end - start) * (rank / count);
}
