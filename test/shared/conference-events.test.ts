// The pure parts of events and timing across the cascade (docs/wire-formats.md §8): the
// EventInbox's in-order delivery (held behind a gap, the gap given up after 500 ms or when the
// hold overflows, wraparound), its reassembly of fragmented events (test/shared/
// conference-event-fragments.test.ts has the garbage) and the keepalive timing echo's round
// trip (RttEstimator).
import { describe, expect, it } from "vitest";
import { encodeEvent } from "../../shared/conference/event.ts";
import { EVENT_HOLD, EventInbox } from "../../shared/conference/event-inbox.ts";
import { GapTracker, NACK_GIVE_UP_MS } from "../../shared/conference/gap-tracker.ts";
import { KEEPALIVE_TIMING_BYTES, RttEstimator } from "../../shared/conference/keepalive.ts";
import { EVENT_STREAM_FLAG, newNackEntries } from "../../shared/conference/payloads.ts";

function inbox() {
  const out: string[] = [];
  const ib = new EventInbox();
  const buf = new Uint8Array(64);
  const push = (seq: number, now = 0) => {
    const len = encodeEvent(buf, 0, seq, `e${seq}`);
    return ib.push(seq, buf, 0, len, now, (t) => out.push(t));
  };
  return { ib, out, push };
}

describe("EventInbox", () => {
  it("delivers in order, holding what comes after a gap until it is filled", () => {
    const { ib, out, push } = inbox();
    expect(push(0)).toBe(0);
    expect(push(2)).toBe(0);
    expect(push(3)).toBe(0);
    expect(out).toEqual(["e0"]);
    expect(push(1)).toBe(0); // the repair
    expect(out).toEqual(["e0", "e1", "e2", "e3"]);
    expect(push(2)).toBe(0); // a duplicate, already delivered
    expect(out).toHaveLength(4);
    expect(ib.lost).toBe(0);
  });

  it("gives a gap up after NACK_GIVE_UP_MS and goes on", () => {
    const { ib, out, push } = inbox();
    push(1, 100); // seq 0 never comes
    push(2, 110);
    expect(ib.tick(100 + NACK_GIVE_UP_MS - 1, (t) => out.push(t))).toBe(0);
    expect(ib.tick(100 + NACK_GIVE_UP_MS, (t) => out.push(t))).toBe(1);
    expect(out).toEqual(["e1", "e2"]);
    expect(push(0)).toBe(0); // too late: dropped
    expect(out).toEqual(["e1", "e2"]);
  });

  it("a jump past what it can hold gives up the oldest gap at once", () => {
    const { ib, out, push } = inbox();
    push(0);
    push(2);
    // seq 2 + EVENT_HOLD cannot be held behind the gap at 1: seq 1 is given up, 2 delivered, 34 held.
    expect(push(2 + EVENT_HOLD)).toBe(1);
    expect(out).toEqual(["e0", "e2"]);
    expect(ib.lost).toBe(1);
  });

  it("a horizon (the sender's next seq) opens a gap with nothing held: given up after the timeout", () => {
    const { ib, out, push } = inbox();
    push(0, 0);
    ib.horizon(3, 10); // seqs 1 and 2 were sent, never came
    expect(ib.tick(10 + NACK_GIVE_UP_MS - 1, (t) => out.push(t))).toBe(0);
    push(1, 20); // one repaired in time
    expect(out).toEqual(["e0", "e1"]);
    expect(ib.tick(10 + NACK_GIVE_UP_MS, (t) => out.push(t))).toBe(1);
    push(3, 600);
    expect(out).toEqual(["e0", "e1", "e3"]);
    ib.horizon(4, 700); // nothing new missing
    expect(ib.tick(5000, (t) => out.push(t))).toBe(0);
  });

  it("wraps around at 65535", () => {
    const { out, push } = inbox();
    for (let s = 0; s < 65536 + 3; s++) push(s & 0xffff);
    expect(out).toHaveLength(65536 + 3);
    expect(out.at(-1)).toBe("e2");
  });
});

describe("GapTracker.expectBefore (an event stream's announced next seq)", () => {
  it("makes the seqs that never came missing, NACKs them, and takes them as repairs", () => {
    const g = new GapTracker(EVENT_STREAM_FLAG | 2);
    g.expectBefore(0, 0); // nothing sent yet: nothing missing
    expect(g.missing).toBe(0);
    expect(g.onPacket(0, 0)).toBe("new");
    g.expectBefore(3, 10); // 1 and 2 sent, the last of a burst, never came
    expect(g.missing).toBe(2);
    const e = newNackEntries();
    expect(g.due(10, e, 0)).toBe(1);
    expect(e[0]).toEqual({ sourceSlot: EVENT_STREAM_FLAG | 2, firstSeq: 1, bitmask: 1 });
    expect(g.onPacket(2, 30)).toBe("repaired"); // the announced highest, not a duplicate
    expect(g.onPacket(2, 31)).toBe("duplicate");
    expect(g.onPacket(1, 32)).toBe("repaired");
    expect(g.missing).toBe(0);
    g.expectBefore(3, 40); // said again: nothing new
    expect(g.missing).toBe(0);
  });

  it("a stream whose first events never came starts missing from seq 0", () => {
    const g = new GapTracker(EVENT_STREAM_FLAG);
    g.expectBefore(2, 0);
    expect(g.missing).toBe(2);
    expect(g.onPacket(0, 1)).toBe("late"); // before any NACK went out
  });
});

describe("RttEstimator (keepalive timing echo)", () => {
  it("measures now - echo - held on each side with its own clock, smoothed", () => {
    const a = new RttEstimator();
    const b = new RttEstimator();
    const buf = new Uint8Array(KEEPALIVE_TIMING_BYTES);
    // b's clock is a's + 49,000 ms; one way takes 15 ms; b holds 200 ms, then a 70 ms.
    a.write(buf, 0, 1000);
    expect(b.read(buf, 0, 50_015)).toBe(-1); // nothing of b's echoed yet
    b.write(buf, 0, 50_215);
    expect(a.read(buf, 0, 1230)).toBeCloseTo(30, 2);
    expect(a.srttMs).toBeCloseTo(30, 2);
    a.write(buf, 0, 1300);
    expect(b.read(buf, 0, 50_315)).toBeCloseTo(30, 2);
    // A later sample of 70 ms (b held 85 ms): SRTT = 7/8 30 + 1/8 70.
    b.write(buf, 0, 50_400);
    expect(a.read(buf, 0, 1455)).toBeCloseTo(70, 2);
    expect(a.srttMs).toBeCloseTo(35, 2);
  });

  it("ignores an echo that would mean more than 10 s (stale or forged)", () => {
    const a = new RttEstimator();
    const buf = new Uint8Array(KEEPALIVE_TIMING_BYTES);
    a.write(buf, 0, 1000);
    const b = new RttEstimator();
    b.read(buf, 0, 0);
    b.write(buf, 0, 0);
    expect(a.read(buf, 0, 20_000)).toBe(-1);
    expect(a.srttMs).toBeUndefined();
  });
});
