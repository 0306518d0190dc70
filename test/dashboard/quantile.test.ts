import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LATENCY_BUCKETS, Registry } from "../../regional/common/metrics.ts";
import { parseExposition } from "../../regional/dashboard/core/exposition.ts";
import { type Bucket, histogramQuantile, parseLe } from "../../regional/dashboard/core/quantile.ts";

const INF = Number.POSITIVE_INFINITY;
const b = (...pairs: [number, number][]): Bucket[] => pairs.map(([le, count]) => ({ le, count }));

describe("histogramQuantile (PromQL semantics)", () => {
  const h = b([1, 0], [2, 5], [4, 10], [INF, 10]);
  it.each([
    [0.25, 1.5],
    [0.5, 2],
    [0.75, 3],
    [0.9, 3.6],
    [1, 4],
  ])("interpolates linearly inside the bucket holding the rank: q=%s → %s", (q, want) => {
    expect(histogramQuantile(q, h)).toBeCloseTo(want, 12);
  });

  it("returns the second-highest bound when the rank falls in +Inf", () => {
    expect(histogramQuantile(0.9, b([1, 5], [2, 5], [INF, 10]))).toBe(2);
  });

  it("takes 0 as the lower bound of a positive first bucket, and returns a non-positive first bound as is", () => {
    expect(histogramQuantile(0.5, b([1, 10], [INF, 10]))).toBe(0.5);
    expect(histogramQuantile(0.5, b([-1, 10], [INF, 10]))).toBe(-1);
  });

  it("sorts, merges equal bounds and forces monotonic counts", () => {
    expect(histogramQuantile(0.75, b([4, 10], [INF, 10], [1, 0], [2, 5]))).toBeCloseTo(3, 12);
    // Two series summed into one group: the same bounds twice.
    expect(
      histogramQuantile(0.5, b([1, 0], [2, 2], [4, 5], [INF, 5], [1, 0], [2, 3], [4, 5], [INF, 5])),
    ).toBe(2);
    // 3 after 5 is an exporter bug; the envelope treats it as 5.
    expect(histogramQuantile(0.5, b([1, 5], [2, 3], [4, 10], [INF, 10]))).toBe(1);
  });

  it("returns NaN or ±Inf in PromQL's special cases", () => {
    expect(histogramQuantile(0.5, b([1, 1], [2, 2]))).toBeNaN(); // no +Inf bucket
    expect(histogramQuantile(0.5, b([1, 0], [INF, 0]))).toBeNaN(); // no observations
    expect(histogramQuantile(0.5, b([INF, 3]))).toBeNaN(); // fewer than two buckets
    expect(histogramQuantile(0.5, [])).toBeNaN();
    expect(histogramQuantile(Number.NaN, h)).toBeNaN();
    expect(histogramQuantile(-0.1, h)).toBe(Number.NEGATIVE_INFINITY);
    expect(histogramQuantile(1.1, h)).toBe(INF);
  });

  it("does not modify its input", () => {
    const input = b([2, 5], [1, 0], [INF, 10], [4, 10]);
    const copy = structuredClone(input);
    histogramQuantile(0.5, input);
    expect(input).toEqual(copy);
  });

  it("parses le labels", () => {
    expect(parseLe("+Inf")).toBe(INF);
    expect(parseLe("0.005")).toBe(0.005);
    expect(parseLe("1e-4")).toBe(0.0001);
    expect(parseLe("")).toBeNull();
    expect(parseLe("x")).toBeNull();
  });

  it("lands in the bucket that holds the true quantile of observations made through the real Registry (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.00001, max: 12, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.constantFrom(0.5, 0.9, 0.95, 0.99),
        (values, q) => {
          const reg = new Registry();
          const hist = reg.histogram("x_seconds", "x").with();
          for (const v of values) hist.observe(v);
          const buckets = parseExposition(reg.render())
            .samples.filter((s) => s.name === "x_seconds_bucket")
            .map((s) => ({ le: parseLe(s.labels.le!)!, count: s.value }));
          const got = histogramQuantile(q, buckets);
          // The rank-th smallest observation (PromQL's rank is q * count, 1-based ceiling here).
          const sorted = [...values].sort((x, y) => x - y);
          const truth = sorted[Math.max(0, Math.ceil(q * values.length) - 1)]!;
          const bounds = [0, ...LATENCY_BUCKETS];
          const hi = bounds.findIndex((x) => truth <= x);
          if (hi === -1) {
            expect(got).toBe(LATENCY_BUCKETS[LATENCY_BUCKETS.length - 1]); // in +Inf: highest finite bound
          } else {
            expect(got).toBeGreaterThanOrEqual(bounds[Math.max(0, hi - 1)]!);
            expect(got).toBeLessThanOrEqual(bounds[hi]!);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
