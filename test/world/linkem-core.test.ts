// The link model on virtual time: delay, jitter bounds and FIFO order, Gilbert-Elliott loss rate
// and burstiness, the queue bound, and seeded determinism. No sockets, no clocks.
import { describe, expect, it } from "vitest";
import { FAR_FUTURE, Link, type LinkParams } from "../../scripts/world/linkem/core/link.ts";
import { burstyLoss, meanLoss, NO_LOSS } from "../../scripts/world/linkem/core/loss.ts";
import { parseLinkSpec } from "../../scripts/world/linkem/core/params.ts";
import { seededRandom } from "../../scripts/world/linkem/core/random.ts";

const params = (p: Partial<LinkParams>): LinkParams => ({
  delayMs: 10,
  jitterMs: 0,
  loss: NO_LOSS,
  queue: 100_000,
  ...p,
});

/** Offers n packets 1 ms apart; returns each delivered packet's (index, delay). */
function run(link: Link<number, number>, n: number, stepMs = 1): { i: number; delay: number }[] {
  const out: { i: number; delay: number }[] = [];
  const sentAt = new Map<number, number>();
  let now = 0;
  // Virtual time jumps to each release time up to `until`, so a delay is measured exactly.
  const drain = (until: number): void => {
    for (let at = link.nextAt(); at <= until; at = link.nextAt()) {
      for (let x = link.take(at); x !== undefined; x = link.take(at))
        out.push({ i: x, delay: at - sentAt.get(x)! });
    }
  };
  for (let i = 0; i < n; i++, now += stepMs) {
    drain(now);
    sentAt.set(i, now);
    link.offer(now, i, i);
  }
  drain(FAR_FUTURE - 1);
  return out;
}

describe("link model", () => {
  it("delays every packet by exactly the base delay when there is no jitter", () => {
    const link = new Link<number, number>(params({ delayMs: 37 }), seededRandom(1));
    const out = run(link, 1000, 0.5);
    expect(out).toHaveLength(1000);
    for (const o of out) expect(o.delay).toBeCloseTo(37, 6);
  });

  it("keeps jitter within its bounds, keeps FIFO order, and centres near the base delay", () => {
    const link = new Link<number, number>(params({ delayMs: 50, jitterMs: 5 }), seededRandom(7));
    // 20 ms spacing: wider than the jitter range, so FIFO never has to hold a packet back.
    const out = run(link, 5000, 20);
    expect(out.map((o) => o.i)).toEqual([...Array(5000).keys()]);
    for (const o of out) {
      expect(o.delay).toBeGreaterThanOrEqual(45);
      expect(o.delay).toBeLessThanOrEqual(55);
    }
    const mean = out.reduce((s, o) => s + o.delay, 0) / out.length;
    expect(Math.abs(mean - 50)).toBeLessThan(0.25);
  });

  it("never releases a packet before the one ahead of it when jitter exceeds the spacing", () => {
    const link = new Link<number, number>(params({ delayMs: 20, jitterMs: 15 }), seededRandom(3));
    const out = run(link, 3000, 1);
    expect(out.map((o) => o.i)).toEqual([...Array(3000).keys()]);
  });

  it("loses packets at the Gilbert-Elliott mean rate, in bursts of the configured mean length", () => {
    const loss = burstyLoss(5, 4);
    expect(meanLoss(loss)).toBeCloseTo(0.05, 9);
    const link = new Link<number, number>(params({ delayMs: 0, loss }), seededRandom(11));
    const n = 200_000;
    const delivered = new Set(run(link, n).map((o) => o.i));
    const lostRate = 1 - delivered.size / n;
    expect(lostRate).toBeGreaterThan(0.045);
    expect(lostRate).toBeLessThan(0.055);
    let bursts = 0;
    let lost = 0;
    for (let i = 0; i < n; i++) {
      if (delivered.has(i)) continue;
      lost++;
      if (i === 0 || delivered.has(i - 1)) bursts++;
    }
    const meanBurst = lost / bursts;
    expect(meanBurst).toBeGreaterThan(3.5);
    expect(meanBurst).toBeLessThan(4.5);
    expect(link.stats.lost).toBe(lost);
  });

  it("with burst length 1 loses independently (mean burst near 1/(1-rate))", () => {
    const link = new Link<number, number>(params({ delayMs: 0, loss: burstyLoss(10, 1) }), seededRandom(5));
    const delivered = new Set(run(link, 100_000).map((o) => o.i));
    let bursts = 0;
    let lost = 0;
    for (let i = 0; i < 100_000; i++) {
      if (delivered.has(i)) continue;
      lost++;
      if (i === 0 || delivered.has(i - 1)) bursts++;
    }
    expect(lost / bursts).toBeLessThan(1.2);
  });

  it("refuses packets beyond the queue bound and counts them", () => {
    const link = new Link<number, number>(params({ delayMs: 1000, queue: 8 }), seededRandom(1));
    const results = Array.from({ length: 12 }, (_, i) => link.offer(i, i, i));
    expect(results.filter((r) => r === "queued")).toHaveLength(8);
    expect(results.slice(8)).toEqual(["queue_full", "queue_full", "queue_full", "queue_full"]);
    expect(link.stats.queueFull).toBe(4);
    expect(link.size).toBe(8);
    // Once the head leaves, there is room again.
    expect(link.take(1000)).toBe(0);
    expect(link.offer(1001, 99, 99)).toBe("queued");
  });

  it("says 'nothing due' with a far-future time, not null", () => {
    const link = new Link<number, number>(params({}), seededRandom(1));
    expect(link.nextAt()).toBe(FAR_FUTURE);
    expect(link.take(1e12)).toBeUndefined();
  });

  it("is deterministic for a seed and differs across seeds", () => {
    const pattern = (seed: number): string =>
      run(new Link<number, number>(params({ jitterMs: 3, loss: burstyLoss(8, 3) }), seededRandom(seed)), 2000)
        .map((o) => `${o.i}@${o.delay.toFixed(3)}`)
        .join(",");
    expect(pattern(42)).toBe(pattern(42));
    expect(pattern(42)).not.toBe(pattern(43));
  });
});

describe("link spec", () => {
  it("fills defaults and converts loss to a Gilbert-Elliott chain", () => {
    const r = parseLinkSpec({ delayMs: 20, lossPct: 2, burst: 3 }, "up");
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.params.jitterMs).toBe(0);
      expect(r.params.queue).toBe(4096);
      expect(meanLoss(r.params.loss)).toBeCloseTo(0.02, 9);
    }
  });

  it.each([
    [null, "up: must be an object"],
    [{}, "up.delayMs: must be a number 0-10000, got undefined"],
    [{ delayMs: -1 }, "up.delayMs: must be a number 0-10000, got -1"],
    [{ delayMs: 5, lossPct: 100 }, "up.lossPct: 100 would cut the link"],
    [{ delayMs: 5, queue: 1.5 }, "up.queue: must be an integer"],
    [{ delayMs: 5, loss: 3 }, "up.loss: is not a known field"],
    [{ delayMs: "5" }, 'up.delayMs: must be a number 0-10000, got "5"'],
  ])("rejects %j naming the field", (raw, msg) => {
    const r = parseLinkSpec(raw, "up");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(msg);
  });
});
