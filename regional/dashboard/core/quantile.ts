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
  const les: number[] = [];
  const counts: number[] = [];
  for (const x of sorted) {
    const n = les.length;
    if (n > 0 && les[n - 1] === x.le) counts[n - 1]! += x.count;
    else {
      les.push(x.le);
      counts.push(x.count);
    }
  }
  prepareCounts(counts, counts.length);
  return sortedQuantile(q, les, counts, les.length);
}

/**
 * Makes cumulative counts usable for the rank search, in place, as PromQL does: tiny float noise
 * (relative 1e-12) between neighbours is flattened, then counts are forced monotonic (the
 * envelope), which hides exporters whose buckets disagree.
 */
export function prepareCounts(counts: { [i: number]: number }, n: number): void {
  if (n === 0) return;
  let prev = counts[0]!;
  for (let i = 1; i < n; i++) {
    const cur = counts[i]!;
    const delta = Math.abs(cur - prev);
    if (delta === 0) continue;
    if (delta / cur <= 1e-12) counts[i] = prev;
    else prev = cur;
  }
  let max = counts[0]!;
  for (let i = 1; i < n; i++) {
    if (counts[i]! > max) max = counts[i]!;
    else counts[i] = max;
  }
}

/**
 * The quantile of `n` buckets with strictly increasing bounds (the last +Inf) and prepared counts
 * (prepareCounts). Allocation-free: the dashboard runs it for every point of every group.
 */
export function sortedQuantile(
  q: number,
  les: { readonly [i: number]: number },
  counts: { readonly [i: number]: number },
  n: number,
): number {
  if (Number.isNaN(q)) return Number.NaN;
  if (q < 0) return Number.NEGATIVE_INFINITY;
  if (q > 1) return Number.POSITIVE_INFINITY;
  if (n < 2 || les[n - 1] !== Number.POSITIVE_INFINITY) return Number.NaN;
  const observations = counts[n - 1]!;
  if (!(observations > 0)) return Number.NaN;
  let rank = q * observations;
  // First bucket (excluding +Inf) whose cumulative count reaches the rank.
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (counts[mid]! >= rank) hi = mid;
    else lo = mid + 1;
  }
  if (lo === n - 1) return les[n - 2]!;
  if (lo === 0 && les[0]! <= 0) return les[0]!;
  let start = 0;
  const end = les[lo]!;
  let count = counts[lo]!;
  if (lo > 0) {
    start = les[lo - 1]!;
    count -= counts[lo - 1]!;
    rank -= counts[lo - 1]!;
  }
  return start + (end - start) * (rank / count);
}
