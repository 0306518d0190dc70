// The mixer's pure core: G.711, resampling, saturation, the jitter buffer, and the mix engine on
// virtual time with real Opus (the shell's codec adapter) and real PCMU: two tones in, both tones
// heard in the decoded output, with reordering, a duplicate and a loss on the way.
import { describe, expect, it } from "vitest";
import {
  AUDIO_FRAME_MAX_PAYLOAD,
  AudioCodec,
  AudioFlags,
  newAudioFrameHeader,
} from "../../regional/transceiver/backend-protocol.ts";
import {
  MIX_FLAG_MARKER,
  MIX_FRAME_SAMPLES,
  MIX_MAX_PAYLOAD,
  MixCodec,
  type MixFrameHeader,
} from "../../regional/transceiver/core/mix/codecs.ts";
import { MixEngine, SOURCE_IDLE_MS } from "../../regional/transceiver/core/mix/engine.ts";
import { muLawDecode, muLawEncode } from "../../regional/transceiver/core/mix/g711.ts";
import { JITTER_FRAMES, JitterBuffer, TRIM_ABOVE } from "../../regional/transceiver/core/mix/jitter.ts";
import { addToMix, clearMix, saturate } from "../../regional/transceiver/core/mix/pcm.ts";
import { Downsampler, Upsampler } from "../../regional/transceiver/core/mix/resample.ts";
import { MixCodecs } from "../../regional/transceiver/shell/opus-codecs.ts";
import { goertzel, rms, toneFrame } from "../support/tone.ts";
import { type Frame, Listener, ToneStream } from "./helpers/tone-streams.ts";

describe("the core's restated backend-protocol values", () => {
  it("agree with backend-protocol.ts", () => {
    expect(MixCodec).toEqual(AudioCodec);
    expect(MIX_FLAG_MARKER).toBe(AudioFlags.marker);
    expect(MIX_MAX_PAYLOAD).toBe(AUDIO_FRAME_MAX_PAYLOAD);
    const h: MixFrameHeader = newAudioFrameHeader();
    // The mixer reads these four; the audio frame header may carry more (the participant slot).
    expect(Object.keys(h)).toEqual(expect.arrayContaining(["codec", "flags", "sequenceNumber", "timestamp"]));
  });
});

describe("G.711 mu-law", () => {
  it("matches the standard's reference points and round-trips within its step", () => {
    expect(muLawEncode(0)).toBe(0xff);
    expect(muLawDecode(0xff)).toBe(0);
    expect(muLawDecode(0x80)).toBe(32124);
    expect(muLawDecode(0x00)).toBe(-32124);
    expect(muLawEncode(32767)).toBe(0x80);
    expect(muLawEncode(-32768)).toBe(0x00);
    for (let s = -32768; s < 32768; s += 97) {
      const back = muLawDecode(muLawEncode(s));
      // mu-law keeps about 1/16 relative precision (plus a small absolute step near zero).
      expect(Math.abs(back - Math.max(-32124, Math.min(32124, s)))).toBeLessThanOrEqual(Math.abs(s) / 16 + 8);
    }
    for (let b = 0; b < 256; b++) if (b !== 0x7f) expect(muLawEncode(muLawDecode(b))).toBe(b);
  });
});

describe("8k <-> 48k resampling", () => {
  it("keeps a 1 kHz tone's level both ways and rejects what would alias", () => {
    const up = new Upsampler();
    const out = new Int16Array(960);
    const heard: number[] = [];
    for (let k = 0; k < 5; k++) {
      up.process(toneFrame(1000, 8000, k * 160, 160), 160, out);
      if (k >= 2) heard.push(goertzel(out, 1000, 48000));
    }
    for (const a of heard) expect(a).toBeGreaterThan(7000);
    const down = new Downsampler();
    const narrow = new Int16Array(160);
    const aliasing = new Downsampler();
    const aliased = new Int16Array(160);
    for (let k = 0; k < 5; k++) {
      down.process(toneFrame(1000, 48000, k * 960, 960), 960, narrow);
      aliasing.process(toneFrame(6000, 48000, k * 960, 960), 960, aliased);
    }
    expect(goertzel(narrow, 1000, 8000)).toBeGreaterThan(7000);
    // 6 kHz would fold to 2 kHz: at least 40 dB down.
    expect(rms(aliased)).toBeLessThan(80);
  });
});

describe("mixing", () => {
  it("sums and saturates instead of wrapping", () => {
    const acc = new Int32Array(3);
    const out = new Int16Array(3);
    clearMix(acc, 3);
    addToMix(acc, Int16Array.of(30000, -30000, 100), 3);
    addToMix(acc, Int16Array.of(30000, -30000, -50), 3);
    expect(saturate(acc, out, 3)).toBe(2);
    expect([...out]).toEqual([32767, -32768, 50]);
  });
});

const P = Uint8Array.of(0xf8, 1, 2);

describe("jitter buffer", () => {
  it("waits the playout delay, then plays in seq order across the 16-bit wrap", () => {
    const j = new JitterBuffer();
    const seqs = [65534, 0, 65535, 1];
    for (const s of seqs) j.push(s, 1, 0, P, 0);
    const out: number[] = [];
    expect(j.pop(10)).toBe("frame"); // 4 frames held >= prefill: no need to wait
    out.push(65534);
    for (let i = 0; i < 3; i++) expect(j.pop(20)).toBe("frame");
    expect(j.pop(40)).toBe("empty");
    expect(j.counters).toMatchObject({ played: 4, late: 0, missing: 0 });
    const k = new JitterBuffer();
    k.push(7, 1, 0, P, 100);
    expect(k.pop(120)).toBe("waiting");
    expect(k.pop(140)).toBe("frame");
  });

  it("counts duplicates and late frames, marks a hole missing, restarts after a silence gap", () => {
    const j = new JitterBuffer();
    for (const s of [10, 11, 11, 13]) j.push(s, 1, 0, P, 0);
    expect(j.counters.duplicate).toBe(1);
    expect(j.pop(40)).toBe("frame");
    expect(j.pop(60)).toBe("frame");
    expect(j.pop(80)).toBe("missing");
    j.push(12, 1, 0, P, 85); // too late: 12 was concealed already
    j.push(10, 1, 0, P, 85);
    expect(j.counters.late).toBe(2);
    expect(j.pop(100)).toBe("frame");
    expect(j.pop(120)).toBe("empty");
    // DTX: seq continues, timestamp jumped; a new spurt waits the playout delay again.
    j.push(14, 1, 1, P, 5000);
    expect(j.pop(5020)).toBe("waiting");
    expect(j.pop(5040)).toBe("frame");
    expect(j.flags).toBe(1);
    // A restarted stream (seq far away) is taken as new, not as late.
    j.push(40000, 1, 0, P, 6000);
    expect(j.counters.resets).toBe(1);
    expect(j.pop(6040)).toBe("frame");
  });

  it("after a seq jump past the window plays the new frame next, not a run of missing ones", () => {
    const j = new JitterBuffer();
    for (const s of [100, 101, 102]) j.push(s, 1, 0, P, 0);
    expect(j.pop(40)).toBe("frame");
    // 101 and 102 still held, then the source's seq jumps by 38 (still the same stream).
    j.push(140, 1, 0, P, 45);
    expect(j.pop(60)).toBe("frame");
    expect(j.counters).toMatchObject({ missing: 0, overflow: 2, resets: 0 });
    j.push(141, 1, 0, P, 65);
    expect(j.pop(80)).toBe("frame");
  });

  it("trims a burst back down to TRIM_ABOVE frames, one extra frame per pop", () => {
    const j = new JitterBuffer();
    for (let s = 0; s < 14; s++) j.push(s, 1, 0, P, 0);
    let played = 0;
    while (j.pop(100) === "frame") played++;
    // Each pop over the mark drops one and plays one: 14 -> 12 -> 10 held after two pops.
    expect(j.counters.trimmed).toBe((14 - TRIM_ABOVE) / 2);
    expect(played).toBe(14 - (14 - TRIM_ABOVE) / 2);
  });

  it("stays bounded under a flood from one source", () => {
    const j = new JitterBuffer();
    for (let s = 0; s < 10_000; s++) j.push(s & 0xffff, 1, 0, P, 0);
    expect(j.size).toBeLessThanOrEqual(JITTER_FRAMES);
    expect(j.counters.overflow).toBe(10_000 - JITTER_FRAMES);
    let played = 0;
    while (j.pop(100) === "frame") played++;
    expect(played + j.counters.trimmed).toBe(JITTER_FRAMES);
  });
});

/** Runs `ms` of virtual time: frames arrive at their times, the engine ticks every 20 ms. */
function run(
  engine: MixEngine,
  arrivals: { at: number; source: number; f: Frame }[],
  ms: number,
  listener: Listener,
): void {
  arrivals.sort((a, b) => a.at - b.at);
  let next = 0;
  for (let t = 0; t <= ms; t++) {
    while (next < arrivals.length && arrivals[next]!.at <= t) {
      const a = arrivals[next++]!;
      engine.push(a.source, a.f.h, a.f.payload, t);
    }
    if (t % 20 === 0 && engine.tick(t))
      listener.send(engine.header, engine.payload.subarray(0, engine.length));
  }
}

function streamArrivals(s: ToneStream, source: number, frames: number, offset = 0) {
  const out: { at: number; source: number; f: Frame }[] = [];
  for (let k = 0; k < frames; k++) out.push({ at: offset + k * 20 + ((k * 7) % 5), source, f: s.frame(k) });
  return out;
}

// Each tone is sent at amplitude 6000; the mix keeps nearly all of it (about 5900-6000 measured).
const HEARD = 4000;
const QUIET = 300;

describe("mix engine (real Opus, virtual time)", () => {
  it("mixes a 440 Hz and an 880 Hz source through reordering, a duplicate and a loss", () => {
    const codecs = new MixCodecs(AudioCodec.opus);
    const engine = new MixEngine({
      outCodec: AudioCodec.opus,
      codecs,
      initialSeq: 65530,
      initialTimestamp: 5,
    });
    const a = new ToneStream(440);
    const b = new ToneStream(880, AudioCodec.opus, 65500);
    const arrivals = [...streamArrivals(a, 1, 50), ...streamArrivals(b, 2, 50, 3)];
    // Source 1: frame 6 before frame 5; frame 20 lost. Source 2: frame 8 twice.
    const s1 = arrivals.filter((x) => x.source === 1);
    [s1[5]!.at, s1[6]!.at] = [s1[6]!.at, s1[5]!.at - 1];
    arrivals.splice(arrivals.indexOf(s1[20]!), 1);
    const dup = arrivals.find((x) => x.source === 2 && x.f.h.sequenceNumber === ((65500 + 8) & 0xffff))!;
    arrivals.push({ ...dup, at: dup.at + 2 });
    const listener = new Listener();
    run(engine, arrivals, 1200, listener);

    const t = engine.jitterTotals();
    expect(t).toMatchObject({ duplicate: 1, late: 0, missing: 1, played: 99 });
    expect(engine.counters.concealed).toBe(1);
    const frames = listener.frames;
    expect(frames.length).toBeGreaterThanOrEqual(50);
    expect(frames[0]!.h.flags).toBe(1);
    for (let i = 1; i < frames.length; i++) {
      expect(frames[i]!.h.sequenceNumber).toBe((frames[i - 1]!.h.sequenceNumber + 1) & 0xffff);
      expect(frames[i]!.h.timestamp).toBe((frames[i - 1]!.h.timestamp + 960) >>> 0);
      expect(frames[i]!.h.flags).toBe(0);
    }
    const pcm = listener.pcm();
    // 100 ms .. 900 ms of the output: both tones, nothing at 660 Hz.
    const from = 4800;
    const to = 43200;
    expect(goertzel(pcm, 440, 48000, from, to)).toBeGreaterThan(HEARD);
    expect(goertzel(pcm, 880, 48000, from, to)).toBeGreaterThan(HEARD);
    expect(goertzel(pcm, 660, 48000, from, to)).toBeLessThan(QUIET);

    // Both sources go idle and are removed after 1 s; silent ticks send nothing.
    const sent = engine.counters.sent;
    for (let t = 1220; t <= 1200 + SOURCE_IDLE_MS + 200; t += 20) expect(engine.tick(t)).toBe(false);
    expect(engine.counters.sent).toBe(sent);
    expect(engine.sourceCount).toBe(0);
    expect(engine.counters.idleRemoved).toBe(2);
    a.close();
    b.close();
    codecs.close();
  });

  it("sends nothing through a DTX gap, keeps its clock, and marks the next talk spurt", () => {
    const codecs = new MixCodecs(AudioCodec.opus);
    const engine = new MixEngine({ outCodec: AudioCodec.opus, codecs, initialTimestamp: 0xffffff00 });
    const a = new ToneStream(440);
    const arrivals = streamArrivals(a, 1, 20);
    // Frames 10.. come 500 ms later (the sender's DTX: seq continues, its timestamp jumps).
    for (const x of arrivals.slice(10)) {
      x.at += 500;
      x.f.h.timestamp += 500 * 48;
    }
    const listener = new Listener();
    run(engine, arrivals, 1200, listener);
    const f = listener.frames;
    expect(f.length).toBe(20);
    expect(f.map((x) => x.h.flags)).toEqual([1, ...Array(9).fill(0), 1, ...Array(9).fill(0)]);
    for (let i = 1; i < f.length; i++)
      expect(f[i]!.h.sequenceNumber).toBe((f[i - 1]!.h.sequenceNumber + 1) & 0xffff);
    const gap = (f[10]!.h.timestamp - f[9]!.h.timestamp) >>> 0;
    expect(gap % 960).toBe(0);
    expect(gap / 960).toBeGreaterThanOrEqual(25); // 500 ms of silent ticks, minus nothing
    expect(engine.counters.silentTicks).toBeGreaterThanOrEqual(24);
    expect(engine.jitterTotals()).toMatchObject({ played: 20, missing: 0, late: 0 });
    a.close();
    codecs.close();
  });

  it("mixes a PCMU source into an Opus output, and an Opus source into a PCMU output", () => {
    for (const [inCodec, outCodec] of [
      [AudioCodec.pcmu, AudioCodec.opus],
      [AudioCodec.opus, AudioCodec.pcmu],
    ] as const) {
      const codecs = new MixCodecs(outCodec);
      const engine = new MixEngine({ outCodec, codecs });
      const a = new ToneStream(440, inCodec);
      const b = new ToneStream(880, AudioCodec.opus, 3);
      const listener = new Listener();
      run(engine, [...streamArrivals(a, 0, 40), ...streamArrivals(b, 2, 40)], 900, listener);
      expect(listener.frames.every((f) => f.h.codec === outCodec)).toBe(true);
      if (outCodec === AudioCodec.pcmu) expect(listener.frames[1]!.payload.length).toBe(160);
      const pcm = listener.pcm();
      expect(goertzel(pcm, 440, 48000, 4800, 33600)).toBeGreaterThan(HEARD);
      expect(goertzel(pcm, 880, 48000, 4800, 33600)).toBeGreaterThan(HEARD);
      a.close();
      b.close();
      codecs.close();
    }
  });

  it("stops hearing a removed source, and keeps a flooding source bounded", () => {
    const codecs = new MixCodecs(AudioCodec.opus);
    const engine = new MixEngine({ outCodec: AudioCodec.opus, codecs });
    const a = new ToneStream(440);
    const b = new ToneStream(880);
    const listener = new Listener();
    const arrivals = [...streamArrivals(a, 1, 50), ...streamArrivals(b, 2, 50)];
    run(
      engine,
      arrivals.filter((x) => x.at < 500),
      500,
      listener,
    );
    engine.remove(2);
    const before = listener.frames.length;
    run(
      engine,
      arrivals.filter((x) => x.at >= 500 && x.source === 1).map((x) => ({ ...x, at: x.at - 500 })),
      400,
      listener,
    );
    const pcm = listener.pcm();
    const cut = before * MIX_FRAME_SAMPLES;
    expect(goertzel(pcm, 880, 48000, 4800, cut - 1920)).toBeGreaterThan(HEARD);
    expect(goertzel(pcm, 880, 48000, cut + 1920, pcm.length - 1920)).toBeLessThan(QUIET);
    expect(goertzel(pcm, 440, 48000, cut + 1920, pcm.length - 1920)).toBeGreaterThan(HEARD);

    // A flood: 5000 frames of one source at once; the engine holds at most JITTER_FRAMES.
    const flood = new ToneStream(300);
    const f = flood.frame(0);
    for (let k = 0; k < 5000; k++) engine.push(9, { ...f.h, sequenceNumber: k & 0xffff }, f.payload, 1000);
    const totals = engine.jitterTotals();
    expect(totals.overflow).toBeGreaterThanOrEqual(5000 - JITTER_FRAMES);
    // Bad input is dropped and counted, never thrown.
    engine.push(9, { ...f.h, codec: 7 }, f.payload, 1000);
    engine.push(9, f.h, new Uint8Array(0), 1000);
    engine.push(9, f.h, new Uint8Array(1501), 1000);
    engine.push(-1, f.h, f.payload, 1000);
    expect(engine.counters.dropped).toMatchObject({
      bad_codec: 1,
      empty_payload: 1,
      too_large: 1,
      bad_source: 1,
    });
    // A garbage Opus payload decodes to nothing: silence, counted.
    engine.push(10, f.h, Uint8Array.of(0xff, 0xff, 0xff, 0xff), 1000);
    for (let t = 1000; t < 1100; t += 20) engine.tick(t);
    expect(engine.counters.undecodable).toBeGreaterThanOrEqual(1);
    a.close();
    b.close();
    flood.close();
    codecs.close();
  });
});
