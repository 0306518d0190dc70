// Conference replay window and per-hop repair (docs/wire-formats.md §8), all on virtual time:
// the window's properties against a model, the gap tracker's rules (NACK at once, retries, give
// up, wraparound), the history's budget, and a lossy link where repair brings 5 % loss under 1 %.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newNackEntries } from "../../shared/conference/payloads.ts";
import { GapTracker, NACK_GIVE_UP_MS, nackSeqs, SendHistory } from "../../shared/conference/repair.ts";
import { REPLAY_WINDOW, ReplayWindow } from "../../shared/conference/replay.ts";
import { seededRandom as rng } from "../support/seeded-random.ts";

describe("ReplayWindow", () => {
  it("accepts each counter once, up to 1023 behind the highest", () => {
    const w = new ReplayWindow();
    expect(w.accept(5000)).toBe(true);
    expect(w.accept(5000)).toBe(false);
    expect(w.accept(5000 - (REPLAY_WINDOW - 1))).toBe(true);
    expect(w.accept(5000 - REPLAY_WINDOW)).toBe(false);
    expect(w.accept(4990)).toBe(true);
    expect(w.accept(4990)).toBe(false);
    expect(w.accept(6000)).toBe(true);
    expect(w.accept(4990)).toBe(false); // now too old
    expect(w.replays).toBe(4);
  });

  it("runs across the u32 wraparound", () => {
    const w = new ReplayWindow();
    for (const c of [0xfffffffd, 0xffffffff, 0, 2]) expect(w.accept(c)).toBe(true);
    expect(w.highest).toBe(2);
    expect(w.accept(0xffffffff)).toBe(false);
    expect(w.accept(0xfffffffe)).toBe(true);
    expect(w.accept(1)).toBe(true);
    expect(w.accept(0)).toBe(false);
  });

  it("agrees with a set-based model on random streams (wraparound included)", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 0xffffffff }),
        fc.array(fc.integer({ min: -1500, max: 400 }), { maxLength: 400 }),
        (base, steps) => {
          const w = new ReplayWindow();
          const seen = new Set<number>();
          let highest: number | undefined;
          let c = base;
          for (const s of steps) {
            c = (c + s) >>> 0;
            let want: boolean;
            if (highest === undefined) want = true;
            else {
              const ahead = (c - highest) | 0;
              want = ahead > 0 || (ahead < 0 && -ahead < REPLAY_WINDOW && !seen.has(c));
            }
            expect(w.accept(c)).toBe(want);
            if (want) {
              seen.add(c);
              if (highest === undefined || ((c - highest) | 0) > 0) highest = c;
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("GapTracker", () => {
  it("NACKs a gap at once, across the 16-bit wraparound, and counts repairs", () => {
    const g = new GapTracker(7);
    const out = newNackEntries();
    for (const s of [65533, 65534, 65535]) expect(g.onPacket(s, 0)).toBe("new");
    expect(g.onPacket(2, 60)).toBe("new");
    expect(g.missing).toBe(2);
    expect(g.due(60, out, 0)).toBe(1);
    expect(out[0]).toEqual({ sourceSlot: 7, firstSeq: 0, bitmask: 1 });
    expect(g.due(61, out, 0)).toBe(0); // not again before the retry interval
    expect(g.onPacket(0, 100)).toBe("repaired");
    expect(g.onPacket(1, 101)).toBe("repaired");
    expect(g.onPacket(1, 102)).toBe("duplicate");
    expect(g.onPacket(2, 103)).toBe("duplicate");
    expect({ received: g.received, repaired: g.repaired, duplicates: g.duplicates, lost: g.lost }).toEqual({
      received: 6,
      repaired: 2,
      duplicates: 2,
      lost: 0,
    });
  });

  it("retries after max(2 x RTT, 20 ms) twice, then gives up at 500 ms", () => {
    const g = new GapTracker(1);
    const out = newNackEntries();
    g.setRtt(5);
    g.onPacket(10, 0);
    g.onPacket(12, 0);
    expect(g.nextDueAt()).toBe(0);
    expect(g.due(0, out, 0)).toBe(1);
    expect(g.nextDueAt()).toBe(20);
    expect(g.due(19, out, 0)).toBe(0);
    expect(g.due(20, out, 0)).toBe(1);
    expect(g.due(40, out, 0)).toBe(1);
    expect(g.due(60, out, 0)).toBe(0); // 1 + 2 retries sent
    expect(g.nacked).toBe(3);
    expect(g.nextDueAt()).toBe(NACK_GIVE_UP_MS);
    expect(g.due(NACK_GIVE_UP_MS - 1, out, 0)).toBe(0);
    expect(g.lost).toBe(0);
    g.due(NACK_GIVE_UP_MS, out, 0);
    expect(g.lost).toBe(1);
    expect(g.missing).toBe(0);
    expect(g.onPacket(11, 600)).toBe("late");
    g.setRtt(100);
    g.onPacket(14, 600);
    g.due(600, out, 0);
    expect(g.due(799, out, 0)).toBe(0);
    expect(g.due(800, out, 0)).toBe(1);
  });

  it("packs up to 17 seqs per entry and at most 16 entries per call", () => {
    const g = new GapTracker(3);
    const out = newNackEntries();
    g.onPacket(0, 0);
    g.onPacket(20, 0); // 1..19 missing: entries 1 (+2..17) and 18 (+19)
    expect(g.due(0, out, 0)).toBe(2);
    expect(out[0]).toEqual({ sourceSlot: 3, firstSeq: 1, bitmask: 0xffff });
    expect(out[1]).toEqual({ sourceSlot: 3, firstSeq: 18, bitmask: 1 });
    const seqs = new Uint16Array(17);
    expect(nackSeqs(out[0]!, seqs)).toBe(17);
    const h = new GapTracker(4);
    for (let k = 0; k < 8; k++) h.onPacket(k * 18, 0); // 7 gaps of 17 seqs: one entry each
    expect(h.due(0, out, 14)).toBe(16); // two more entries fit after 14 taken by another stream
    expect(h.due(0, out, 0)).toBe(5);
    expect(h.due(0, out, 0)).toBe(0);
  });

  it("reordering before the NACK is late; the window and a restart are handled", () => {
    const g = new GapTracker(2);
    const out = newNackEntries();
    g.onPacket(100, 0);
    g.onPacket(102, 0);
    expect(g.onPacket(101, 1)).toBe("late"); // arrived before due() ran
    expect(g.due(1, out, 0)).toBe(0);
    g.onPacket(104, 2); // 103 missing
    g.onPacket(104 + 256, 3); // 103 is now 257 behind
    expect(g.lost).toBe(1 + 255 - 128); // 103, and the gap's part past the 128 tracked
    expect(g.missing).toBe(128);
    const before = g.lost;
    g.onPacket(30000, 4);
    expect(g.resyncs).toBe(1);
    expect(g.lost).toBe(before + 128); // the pending ones fell out of the window
    expect(g.missing).toBe(0);
  });

  it("with NACK off counts losses and never asks", () => {
    const g = new GapTracker(2, false);
    const out = newNackEntries();
    g.onPacket(1, 0);
    g.onPacket(5, 0);
    expect(g.due(0, out, 0)).toBe(0);
    g.due(NACK_GIVE_UP_MS, out, 0);
    expect(g.lost).toBe(3);
  });
});

describe("SendHistory", () => {
  it("finds each of the last 128 frames of interleaved sources and copies them exactly", () => {
    const hist = new SendHistory(128, 64);
    const payload = (s: number, q: number) =>
      Uint8Array.from({ length: 12 + (q % 40) }, (_, i) => (s * 31 + q + i) & 255);
    for (let q = 0; q < 300; q++)
      for (const s of [0, 1, 5]) hist.record(s, 9, (60000 + q) & 0xffff, payload(s, q), 0, 12 + (q % 40));
    const dst = new Uint8Array(100);
    let found = 0;
    for (let q = 300 - 42; q < 300; q++)
      for (const s of [0, 1, 5]) {
        const i = hist.retransmit(s, (60000 + q) & 0xffff);
        expect(i).toBeGreaterThanOrEqual(0);
        expect(hist.destinationOf(i)).toBe(9);
        const len = hist.copyPayload(i, dst, 3);
        expect(Array.from(dst.subarray(3, 3 + len))).toEqual(Array.from(payload(s, q)));
        found++;
      }
    expect(found).toBe(126);
    expect(hist.retransmit(0, (60000 + 100) & 0xffff)).toBe(-1); // long gone
    expect(hist.missing).toBe(1);
  });

  it("a NACK flood gets at most 2 retransmissions per frame", () => {
    const hist = new SendHistory();
    const out = newNackEntries();
    for (let q = 0; q < 20; q++) hist.record(2, 0, q, new Uint8Array(20), 0, 20);
    const seqs = new Uint16Array(17);
    let sent = 0;
    for (let k = 0; k < 1000; k++) {
      out[0] = { sourceSlot: 2, firstSeq: 0, bitmask: 0xffff };
      const n = nackSeqs(out[0], seqs);
      for (let j = 0; j < n; j++) if (hist.retransmit(2, seqs[j]!) >= 0) sent++;
    }
    expect(sent).toBe(17 * 2);
    expect(hist.overBudget).toBe(1000 * 17 - 34);
  });
});

/** A link of one-way delay `owd` ms with random loss both ways; returns the residual loss. */
function lossyLink(opts: { loss: number; nack: boolean; seed: number; frames: number; owd: number }) {
  const random = rng(opts.seed);
  const hist = new SendHistory();
  const track = new GapTracker(2, opts.nack);
  track.setRtt(2 * opts.owd);
  const events: { at: number; kind: "media" | "nack"; seq: number; first?: number; mask?: number }[] = [];
  // The first and last frames always arrive: a loss there is invisible to any receiver.
  const send = (e: (typeof events)[number], reliable = false) => {
    if (reliable || random() >= opts.loss) events.push(e);
  };
  const received = new Set<number>();
  const nacks = newNackEntries();
  const seqs = new Uint16Array(17);
  const frame = new Uint8Array(40);
  const base = 65000; // the run crosses the seq wraparound
  let retransmissions = 0;
  const end = opts.frames * 20 + 1000;
  for (let now = 0; now <= end; now += 5) {
    if (now % 20 === 0 && now / 20 < opts.frames) {
      const seq = (base + now / 20) & 0xffff;
      frame[4] = seq >> 8;
      frame[5] = seq & 255;
      hist.record(2, 0, seq, frame, 0, frame.length);
      send({ at: now + opts.owd, kind: "media", seq }, now === 0 || now / 20 === opts.frames - 1);
    }
    events.sort((a, b) => a.at - b.at);
    while (events.length > 0 && events[0]!.at <= now) {
      const e = events.shift()!;
      if (e.kind === "media") {
        received.add(e.seq);
        track.onPacket(e.seq, now);
      } else {
        const n = nackSeqs({ sourceSlot: 2, firstSeq: e.first!, bitmask: e.mask! }, seqs);
        for (let j = 0; j < n; j++)
          if (hist.retransmit(2, seqs[j]!) >= 0) {
            retransmissions++;
            send({ at: now + opts.owd, kind: "media", seq: seqs[j]! });
          }
      }
    }
    const n = track.due(now, nacks, 0);
    for (let i = 0; i < n; i++)
      send({ at: now + opts.owd, kind: "nack", seq: 0, first: nacks[i]!.firstSeq, mask: nacks[i]!.bitmask });
  }
  return { residual: 1 - received.size / opts.frames, track, retransmissions, hist };
}

describe("repair on a lossy link (virtual time)", () => {
  it("5 % random loss each way: under 1 % after repair, and the counters agree", () => {
    for (const seed of [1, 2, 3]) {
      const r = lossyLink({ loss: 0.05, nack: true, seed, frames: 5000, owd: 20 });
      expect(r.residual).toBeLessThan(0.01);
      expect(r.track.lost).toBe(Math.round(r.residual * 5000));
      expect(r.track.repaired).toBeGreaterThan(150);
      expect(r.retransmissions).toBeLessThanOrEqual(2 * 5000);
    }
  });

  it("without NACK the loss stays near 5 %", () => {
    const r = lossyLink({ loss: 0.05, nack: false, seed: 1, frames: 5000, owd: 20 });
    expect(r.residual).toBeGreaterThan(0.03);
    expect(r.track.lost).toBe(Math.round(r.residual * 5000));
    expect(r.retransmissions).toBe(0);
  });
});
