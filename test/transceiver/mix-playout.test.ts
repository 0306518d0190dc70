// The adaptive playout delay (core/mix/playout.ts and the jitter buffer's stall/shrink), on virtual
// time with real Opus: a source whose hop loses 5 % and repairs every loss one RTT + 20 ms later
// (as the conference repair does on its first try) is played with < 1 % concealed once its target
// rises to RTT + 40 ms; at the fixed 40 ms, about every lost frame is concealed (~5 %).
import { describe, expect, it } from "vitest";
import { AudioCodec } from "../../regional/transceiver/backend-protocol.ts";
import { MixEngine } from "../../regional/transceiver/core/mix/engine.ts";
import {
  JitterBuffer,
  PLAYOUT_DELAY_MS,
  PLAYOUT_MAX_MS,
  SHRINK_EVERY,
} from "../../regional/transceiver/core/mix/jitter.ts";
import { PlayoutTarget } from "../../regional/transceiver/core/mix/playout.ts";
import { MixCodecs } from "../../regional/transceiver/shell/opus-codecs.ts";
import { seededRandom as rng } from "../support/seeded-random.ts";
import { type Frame, ToneStream } from "./helpers/tone-streams.ts";

const RTT = 60;
const FRAMES = 1500;

/** Talk spurts of 3 s (150 frames) with 600 ms of DTX silence between them (seq contiguous). */
const SPURT = 150;
const SILENCE_MS = 600;
const dueAt = (k: number): number => k * 20 + Math.floor(k / SPURT) * SILENCE_MS;

/** Frame k due at dueAt(k) + jitter (0-4 ms); a lost one comes RTT + 20 ms later (its repair). */
function lossyArrivals(frames: Frame[], loss: number, seed: number) {
  const r = rng(seed);
  const out: { at: number; f: Frame }[] = [];
  let lost = 0;
  for (let k = 0; k < frames.length; k++) {
    const at = dueAt(k) + Math.floor(r() * 5);
    const dropped = k > 0 && k < frames.length - 1 && r() < loss;
    if (dropped) lost++;
    out.push({ at: dropped ? at + RTT + 20 : at, f: frames[k]! });
  }
  out.sort((a, b) => a.at - b.at);
  return { out, lost };
}

function play(arrivals: { at: number; f: Frame }[], rttMs: number | null) {
  const codecs = new MixCodecs(AudioCodec.opus);
  const engine = new MixEngine({ outCodec: AudioCodec.opus, codecs });
  let next = 0;
  const end = dueAt(FRAMES) + 600;
  let last = -1;
  for (let t = 0; t <= end; t++) {
    while (next < arrivals.length && arrivals[next]!.at <= t) {
      const a = arrivals[next++]!;
      engine.push(2, a.f.h, a.f.payload, t, rttMs);
    }
    if (t % 20 === 0 && engine.tick(t)) last = t;
  }
  const j = engine.jitterTotals();
  const c = engine.counters;
  codecs.close();
  return {
    j,
    // Ticks of this source that were concealed (PLC, silence; stalls included) per frame sent.
    concealedFraction: (c.concealed + c.silenced) / FRAMES,
    // The last frame's delay: its due time to its playout.
    delayMs: last - dueAt(FRAMES - 1),
    engine,
  };
}

describe("adaptive playout delay (real Opus, virtual time)", () => {
  const tone = new ToneStream(440);
  const frames: Frame[] = [];
  for (let k = 0; k < FRAMES; k++) frames.push(tone.frame(k));
  tone.close();

  it("plays repairs that arrive RTT + 20 ms late: < 1 % concealed adaptive, ~5 % at a fixed 40 ms", () => {
    const { out, lost } = lossyArrivals(frames, 0.05, 7);
    expect(lost / FRAMES).toBeGreaterThan(0.04);
    const fixed = play(out, null);
    const adaptive = play(out, RTT);
    // Fixed: a repair 80 ms after the loss is behind a 40 ms playout, every loss concealed.
    expect(fixed.concealedFraction).toBeGreaterThan(0.04);
    expect(fixed.j.repairedPlayed).toBeLessThan(lost * 0.1);
    // Adaptive: the target rose to RTT + 40 ms; the stalls that grew it are the only concealment.
    expect(adaptive.concealedFraction).toBeLessThan(0.01);
    expect(adaptive.j.repairedPlayed).toBeGreaterThanOrEqual(lost - 3);
    expect(adaptive.j.gaps).toBeGreaterThanOrEqual(lost);
    expect(adaptive.j.played).toBeGreaterThanOrEqual(FRAMES - 15);
    // Spurts after the first start at the raised target: a last frame 100 ms (+ a tick) late.
    expect(fixed.delayMs).toBeLessThanOrEqual(60);
    expect(adaptive.delayMs).toBeGreaterThanOrEqual(RTT + 40);
    expect(adaptive.delayMs).toBeLessThanOrEqual(RTT + 60);
    console.log(
      `5 % loss, RTT ${RTT} ms, ${FRAMES} frames: concealed fixed ${(fixed.concealedFraction * 100).toFixed(2)} %,` +
        ` adaptive ${(adaptive.concealedFraction * 100).toFixed(2)} % (repairedPlayed ${adaptive.j.repairedPlayed}/${lost},` +
        ` stalled ${adaptive.j.stalled}); last frame's delay fixed ${fixed.delayMs} ms, adaptive ${adaptive.delayMs} ms`,
    );
  });

  it("a clean source keeps today's 40 ms and never stalls, whatever its hop's RTT", () => {
    const { out } = lossyArrivals(frames.slice(0, 300), 0, 1);
    const codecs = new MixCodecs(AudioCodec.opus);
    const engine = new MixEngine({ outCodec: AudioCodec.opus, codecs });
    let next = 0;
    for (let t = 0; t <= 300 * 20 - 100; t++) {
      while (next < out.length && out[next]!.at <= t)
        engine.push(2, out[next]!.f.h, out[next++]!.f.payload, t, 200);
      if (t % 20 === 0) engine.tick(t);
    }
    expect(engine.sourceStats()).toEqual([
      { source: 2, targetMs: 40, repairedPlayed: 0, gaps: 0, stalled: 0 },
    ]);
    codecs.close();
  });
});

describe("PlayoutTarget", () => {
  it("rises to RTT + 40 ms while > 0.5 % is lost, capped; falls back once the loss is gone", () => {
    const p = new PlayoutTarget();
    let received = 0;
    let gaps = 0;
    let t = 0;
    // 100 clean frames at RTT 80: unchanged.
    for (; t < 2000; t += 20) expect(p.update(t, ++received, gaps, 80)).toBe(PLAYOUT_DELAY_MS);
    // 1 frame in 50 lost (2 %).
    for (; t < 6000; t += 20) {
      received++;
      if (t % 1000 === 0) gaps++;
      p.update(t, received, gaps, 80);
    }
    expect(p.targetMs).toBe(120);
    // Without repair (no RTT), waiting gains nothing.
    expect(p.update(t, received, gaps, null)).toBe(PLAYOUT_DELAY_MS);
    expect(p.update(t, received, gaps, 5000)).toBe(PLAYOUT_MAX_MS);
    // The loss stops: the window empties within its 5 s, then the default again.
    for (const end = t + 7000; t < end; t += 20) p.update(t, ++received, gaps, 80);
    expect(p.targetMs).toBe(PLAYOUT_DELAY_MS);
    expect(p.lossy).toBe(false);
  });
});

describe("the jitter buffer's raised delay", () => {
  const payload = new Uint8Array(100);
  it("grows at a hole by stalling, and trims the growth back one frame per SHRINK_EVERY pops", () => {
    const j = new JitterBuffer();
    let seq = 0;
    let t = 0;
    const step = (skip = false): string => {
      if (!skip) j.push(seq, 1, 0, payload, t);
      seq++;
      t += 20;
      return j.pop(t);
    };
    for (let k = 0; k < 20; k++) step();
    expect(j.size).toBeLessThanOrEqual(3);
    j.targetMs = 120; // 6 frames, raised in the middle of a talk spurt
    // A hole: the buffer waits at it until 6 frames are held (the delay grows), then the late
    // frame fills it and is played.
    step(true);
    const lostSeq = seq - 1;
    for (let k = 0; k < 4; k++) step();
    j.push(lostSeq, 1, 0, payload, t);
    for (let k = 0; k < 10; k++) step();
    expect(j.counters.missing).toBe(0);
    expect(j.counters.repairedPlayed).toBe(1);
    expect(j.counters.stalled).toBeGreaterThan(0);
    const held = j.size;
    expect(held).toBeGreaterThanOrEqual(5);
    // Back to 40 ms: at most one frame trimmed per SHRINK_EVERY pops, down to the target.
    j.targetMs = 40;
    for (let k = 0; k < SHRINK_EVERY - 1; k++) step();
    expect(j.counters.shrunk).toBeLessThanOrEqual(1);
    for (let k = 0; k < SHRINK_EVERY * 2; k++) step();
    expect(j.counters.shrunk).toBeLessThanOrEqual(3);
    for (let k = 0; k < SHRINK_EVERY * 10; k++) step();
    expect(j.counters.shrunk).toBeGreaterThanOrEqual(j.counters.stalled - 1);
    expect(j.counters.shrunk).toBeLessThanOrEqual(j.counters.stalled);
    expect(j.size).toBeLessThanOrEqual(3);
    expect(j.counters.missing).toBe(0);
    // A target past the cap is the cap.
    j.targetMs = 10_000;
    expect(j.targetMs).toBe(PLAYOUT_MAX_MS);
  });
});
