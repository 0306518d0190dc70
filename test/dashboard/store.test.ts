// The snapshot ring and panel evaluation on virtual time: no sockets, no clocks.
import { describe, expect, it } from "vitest";
import { Registry } from "../../regional/common/metrics.ts";
import { evaluatePanel, pointsFor, windowStart } from "../../regional/dashboard/core/evaluate.ts";
import { parseExposition } from "../../regional/dashboard/core/exposition.ts";
import type { PanelDef } from "../../regional/dashboard/core/panel-def.ts";
import { SnapshotStore } from "../../regional/dashboard/core/store.ts";
import { panelById } from "../../regional/dashboard/panels.ts";

const text = (lines: string[]) => parseExposition(`${lines.join("\n")}\n`);
const scrape = (target: string, lines: string[] | null, labels: Record<string, string> = {}) => ({
  target,
  labels: { job: target, ...labels },
  exposition: lines === null ? null : text(lines),
});

function rateOf(store: SnapshotStore, metric: string, windowMs: number, by: string[] = []) {
  const p: PanelDef = {
    id: "t",
    title: "t",
    section: "errors",
    kind: "rate",
    metric,
    by,
    filters: [],
    unit: "per_second",
    help: "",
  };
  return evaluatePanel(store, p, { from: 0, maxPoints: 1000, windowMs, filters: {} });
}

describe("SnapshotStore", () => {
  it("turns counter resets into increases, as PromQL increase() does", () => {
    const s = new SnapshotStore(16);
    const values = [10, 15, 3, 8]; // reset between 15 and 3
    values.forEach((v, i) => {
      s.append(i * 1000, [scrape("a", ["# TYPE c_total counter", `c_total ${v}`])]);
    });
    const d = rateOf(s, "c_total", 10_000);
    // Window covers all four samples from the first: 5 + 3 + 5 = 13 over 3 s.
    expect(d.series[0]!.values.at(-1)).toBeCloseTo(13 / 3, 12);
    expect(d.series[0]!.values[0]).toBeNull(); // nothing before the first snapshot
  });

  it("takes a target's first scrape as the baseline but counts a later-born series from zero", () => {
    const s = new SnapshotStore(16);
    s.append(0, [scrape("a", ["# TYPE c_total counter", 'c_total{r="x"} 100'])]);
    s.append(1000, [scrape("a", ["# TYPE c_total counter", 'c_total{r="x"} 100', 'c_total{r="y"} 4'])]);
    s.append(2000, [scrape("a", ["# TYPE c_total counter", 'c_total{r="x"} 101', 'c_total{r="y"} 4'])]);
    const d = rateOf(s, "c_total", 60_000, ["r"]);
    const byR = Object.fromEntries(d.series.map((x) => [x.group.r, x.values]));
    expect(byR.x).toEqual([null, 0, 0.5]); // 100 was the baseline
    expect(byR.y).toEqual([null, 4, 2]); // born at 4 after the baseline: all 4 are new
  });

  it("adds target labels without overriding the exporter's own (honor_labels)", () => {
    const s = new SnapshotStore(4);
    s.append(0, [scrape("relay", ['g{pop="7"} 1', "h 2"], { pop: "1", cluster: "3" })]);
    const [g] = [...s.byName("g")];
    const [h] = [...s.byName("h")];
    expect(g!.labels).toEqual({ job: "relay", pop: "7", cluster: "3" });
    expect(h!.labels).toEqual({ job: "relay", pop: "1", cluster: "3" });
  });

  it("shows gauges of a down target as unknown and carries counters across the gap", () => {
    const s = new SnapshotStore(16);
    const up = (v: number, c: number) =>
      scrape("a", ["# TYPE g gauge", `g ${v}`, "# TYPE c_total counter", `c_total ${c}`]);
    s.append(0, [up(5, 0)]);
    s.append(1000, [scrape("a", null)]);
    s.append(2000, [up(7, 6)]);
    expect(s.targetUp("a", 1)).toBe(false);
    expect(s.targetUp("a", 2)).toBe(true);
    const gauge: PanelDef = { ...panelById("calls_active")!, metric: "g", by: [], filters: [] };
    const g = evaluatePanel(s, gauge, { from: 0, maxPoints: 10, windowMs: 1000, filters: {} });
    expect(g.series[0]!.values).toEqual([5, null, 7]);
    const c = rateOf(s, "c_total", 1000);
    expect(c.series[0]!.values).toEqual([null, 0, 6]);
  });

  it("keeps a bounded ring and forgets series unseen for a whole ring", () => {
    const s = new SnapshotStore(4);
    s.append(0, [scrape("a", ["old 1", "keep 1"])]);
    for (let i = 1; i < 10; i++) s.append(i * 1000, [scrape("a", ["keep 1"])]);
    expect(s.start()).toBe(6);
    expect(s.end()).toBe(10);
    expect(s.time(6)).toBe(6000);
    expect([...s.byName("old")]).toEqual([]);
    expect([...s.byName("keep")]).toHaveLength(1);
    expect(s.seriesCount).toBe(1);
  });

  it("never lets time go backwards", () => {
    const s = new SnapshotStore(4);
    s.append(5000, []);
    s.append(4000, []);
    expect(s.time(1)).toBe(5000);
  });

  it("chooses the window start and thins points keeping the newest", () => {
    const s = new SnapshotStore(100);
    for (let i = 0; i < 50; i++) s.append(i * 2000, []);
    expect(windowStart(s, 49, 10_000)).toBe(44); // newest snapshot at least 10 s older
    expect(windowStart(s, 3, 10_000)).toBe(0); // not enough history: the oldest
    expect(windowStart(s, 0, 10_000)).toBe(-1);
    const pts = pointsFor(s, 0, 10);
    expect(pts.length).toBeLessThanOrEqual(10);
    expect(pts.at(-1)).toBe(49);
    expect(pointsFor(s, 90_000, 100)).toEqual([45, 46, 47, 48, 49]);
    // Buckets of 10 s: the newest snapshot of each, and only those after `since`.
    expect(pointsFor(s, 60_000, 5, Number.NEGATIVE_INFINITY, 10_000)).toEqual([34, 39, 44, 49]);
    expect(pointsFor(s, 60_000, 5, 80_000, 10_000)).toEqual([44, 49]);
    expect(pointsFor(s, 60_000, 100, 90_000, 10_000)).toEqual([46, 47, 48, 49]);
    expect(pointsFor(s, 0, 3, Number.NEGATIVE_INFINITY, 10_000)).toEqual([39, 44, 49]);
  });
});

describe("quantile panels over the ring", () => {
  it("computes per-group p50/p95/p99 and n from bucket increases only, with filters", () => {
    const regs = [1, 2].map(() => new Registry());
    const hs = regs.map((r, i) =>
      r
        .histogram("gr_relay_first_hop_rtt_seconds", "rtt", ["pop", "cluster"])
        .with({ pop: String(i + 1), cluster: "1" }),
    );
    const s = new SnapshotStore(32);
    const snap = (t: number) =>
      s.append(
        t,
        regs.map((r, i) => ({
          target: `pop${i + 1}`,
          labels: { job: `pop${i + 1}` },
          exposition: parseExposition(r.render()),
        })),
      );
    // Before the baseline: observations that must not count.
    for (let k = 0; k < 50; k++) hs[0]!.observe(5);
    snap(0);
    // Window 1: POP 1 sees 100 samples of 20 ms; POP 2 sees 90 of 4 ms and 10 of 300 ms.
    for (let k = 0; k < 100; k++) hs[0]!.observe(0.02);
    for (let k = 0; k < 90; k++) hs[1]!.observe(0.004);
    for (let k = 0; k < 10; k++) hs[1]!.observe(0.3);
    snap(10_000);
    const p = panelById("first_hop_rtt")!;
    const d = evaluatePanel(s, p, { from: 0, maxPoints: 100, windowMs: 60_000, filters: {} });
    const get = (pop: string, ref: string) =>
      d.series.find((x) => x.group.pop === pop && x.ref === ref)!.values.at(-1);
    // POP 1: all 100 in (0.01, 0.025] → linear interpolation inside that bucket.
    expect(get("1", "p50")).toBeCloseTo(0.01 + 0.015 * 0.5, 12);
    expect(get("1", "p95")).toBeCloseTo(0.01 + 0.015 * 0.95, 12);
    expect(get("1", "n")).toBe(100);
    // POP 2: p50 in (0.0025, 0.005]; p95 and p99 in (0.2, 0.3].
    expect(get("2", "p50")).toBeCloseTo(0.0025 + 0.0025 * (50 / 90), 12);
    expect(get("2", "p95")).toBeCloseTo(0.2 + 0.1 * (5 / 10), 12);
    expect(get("2", "p99")).toBeCloseTo(0.2 + 0.1 * (9 / 10), 12);
    const only2 = evaluatePanel(s, p, { from: 0, maxPoints: 100, windowMs: 60_000, filters: { pop: ["2"] } });
    expect(new Set(only2.series.map((x) => x.group.pop))).toEqual(new Set(["2"]));
    // A later window with no new observations has no quantile, and n = 0.
    snap(80_000);
    const later = evaluatePanel(s, p, { from: 70_000, maxPoints: 100, windowMs: 60_000, filters: {} });
    expect(later.series.find((x) => x.group.pop === "1" && x.ref === "p95")!.values).toEqual([null]);
    expect(later.series.find((x) => x.group.pop === "1" && x.ref === "n")!.values).toEqual([0]);
  });
});
