// Flow table and timing wheel: model-checked against plain Maps on random operation sequences.
import { describe, expect, it } from "vitest";
import { FlowTable } from "../../regional/relay/core/flow-table.ts";
import { TimingWheel } from "../../regional/relay/core/timing-wheel.ts";
import { FlowState } from "../../regional/relay/core/types.ts";

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("FlowTable", () => {
  it("matches a Map model through random inserts and removals (backward-shift deletion)", () => {
    const t = new FlowTable({ maxFlows: 512, maxFlowsPerPrefix: 1e9, maxHalfOpenPerPrefix: 1e9 });
    const model = new Map<string, number>();
    const r = rng(42);
    for (let step = 0; step < 20_000; step++) {
      // Few prefixes and ports so probe chains collide and wrap.
      const ip = (0x0a000000 + Math.floor(r() * 8) * 256 + Math.floor(r() * 4)) >>> 0;
      const port = 1000 + Math.floor(r() * 64);
      const key = `${ip}:${port}`;
      const slot = t.find4(ip, port);
      expect(slot >= 0).toBe(model.has(key));
      if (slot >= 0) {
        expect(slot).toBe(model.get(key));
        if (r() < 0.5) {
          t.remove(slot);
          model.delete(key);
        }
      } else if (t.size < t.capacity) {
        const s = t.insert4(ip, port, "x", r() < 0.5 ? FlowState.halfOpen : FlowState.validated, step);
        expect(s).toBeGreaterThanOrEqual(0);
        model.set(key, s);
      }
      expect(t.size).toBe(model.size);
    }
    for (const [key, slot] of model) {
      const [ip, port] = key.split(":").map(Number) as [number, number];
      expect(t.find4(ip, port)).toBe(slot);
    }
  });

  it("enforces the total, per-prefix and half-open-per-prefix limits, and releases them on removal", () => {
    const t = new FlowTable({ maxFlows: 10, maxFlowsPerPrefix: 4, maxHalfOpenPerPrefix: 2 });
    const p = FlowTable.prefix4(0x0a000001);
    const a = t.insert4(0x0a000001, 1, "", FlowState.halfOpen, 0);
    t.insert4(0x0a000002, 1, "", FlowState.halfOpen, 0);
    expect(t.admit(p)).toBe("half-open-limit");
    t.markValidated(a);
    expect(t.admit(p)).toBe("ok");
    t.insert4(0x0a000003, 1, "", FlowState.halfOpen, 0);
    t.insert4(0x0a000004, 1, "", FlowState.validated, 0);
    expect(t.admit(p)).toBe("prefix-full");
    expect(t.admit(FlowTable.prefix4(0x0b000001))).toBe("ok");
    t.remove(a);
    expect(t.admit(p)).toBe("half-open-limit");
    expect(t.halfOpen).toBe(2);
    for (let i = 0; i < 7; i++) t.insert4(0x0c000000 + i * 256, 1, "", FlowState.validated, 0);
    expect(t.size).toBe(10);
    expect(t.admit(FlowTable.prefix4(0x0d000001))).toBe("table-full");
  });

  it("keeps IPv6 flows in their own index with /64 prefixes", () => {
    const t = new FlowTable({ maxFlows: 8, maxFlowsPerPrefix: 1, maxHalfOpenPerPrefix: 1 });
    const ip = new Uint8Array(16).fill(0x20);
    const s = t.insert6("k1", "6:2020202020202020", ip, 5, "2020::", FlowState.halfOpen, 0);
    expect(t.find6("k1")).toBe(s);
    expect(t.admit("6:2020202020202020")).toBe("prefix-full");
    expect(t.ip6(s)).toEqual(ip);
    t.remove(s);
    expect(t.find6("k1")).toBe(-1);
    expect(t.admit("6:2020202020202020")).toBe("ok");
  });
});

describe("TimingWheel", () => {
  it("visits every slot at its due tick, including ones beyond one revolution and after a long gap", () => {
    const w = new TimingWheel(100, 16, 0);
    const due = new Map<number, number>();
    const r = rng(7);
    for (let s = 0; s < 100; s++) {
      const d = 1 + Math.floor(r() * 200);
      due.set(s, d);
      w.schedule(s, d);
    }
    const fired = new Map<number, number>();
    const visit = (slot: number, tick: number): void => {
      const d = due.get(slot)!;
      if (d <= tick) fired.set(slot, tick);
      else w.schedule(slot, d);
    };
    for (let now = 1; now <= 120; now++) w.advance(now, visit);
    for (const [s, d] of due) if (d <= 120) expect(fired.get(s)).toBe(d);
    w.advance(10_000, visit); // a gap far longer than the wheel
    expect(fired.size).toBe(100);
  });

  it("unlinks and reschedules in O(1) without losing neighbours", () => {
    const w = new TimingWheel(10, 8, 0);
    for (let s = 0; s < 10; s++) w.schedule(s, 3);
    w.unlink(4);
    w.unlink(0);
    w.unlink(9);
    w.schedule(5, 6);
    const seen: number[] = [];
    w.advance(10, (s) => seen.push(s));
    expect(seen.sort((a, b) => a - b)).toEqual([1, 2, 3, 5, 6, 7, 8]);
    expect(w.isScheduled(5)).toBe(false);
  });
});
