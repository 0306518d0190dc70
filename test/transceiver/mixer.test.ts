// The Mixer shell: real Opus, the process's real 20 ms clock (waits are generous and only bound
// a hang; no timing is asserted), the shared clock's membership, input validation and close().
import { describe, expect, it } from "vitest";
import { AudioCodec } from "../../regional/transceiver/backend-protocol.ts";
import { MixClock, mixClock } from "../../regional/transceiver/shell/mix-clock.ts";
import { Mixer } from "../../regional/transceiver/shell/mixer.ts";
import { MixCodecs, opusHeapBytes } from "../../regional/transceiver/shell/opus-codecs.ts";
import { goertzel } from "../support/tone.ts";
import { until } from "../support/wait.ts";
import { Listener, ToneStream } from "./helpers/tone-streams.ts";

describe("Mixer on the shared clock", () => {
  it("plays two Opus tones pushed out of order, with a duplicate and a loss", async () => {
    const listener = new Listener();
    const mixer = new Mixer({ outCodec: AudioCodec.opus, fec: true, send: listener.send });
    const a = new ToneStream(440);
    const b = new ToneStream(880, AudioCodec.opus, 65530);
    const fa = Array.from({ length: 10 }, (_, k) => a.frame(k));
    const fb = Array.from({ length: 10 }, (_, k) => b.frame(k));
    // At most TRIM_ABOVE frames per source: the whole burst is held and played in order.
    const order = [0, 1, 3, 2, 4, 5, 6, 8, 9]; // 7 lost, 3 and 2 swapped
    for (const k of order) mixer.push(1, fa[k]!.h, fa[k]!.payload);
    for (let k = 0; k < 10; k++) {
      mixer.push(2, fb[k]!.h, fb[k]!.payload);
      if (k === 5) mixer.push(2, fb[k]!.h, fb[k]!.payload);
    }
    await until(
      () => mixer.stats().played >= 19,
      () => JSON.stringify(mixer.stats()),
    );
    await until(() => mixer.stats().silentTicks > 0, "the sources to run dry");
    const s = mixer.stats();
    expect(s).toMatchObject({ sources: 2, played: 19, duplicate: 1, late: 0, concealed: 1, trimmed: 0 });
    expect(listener.frames.length).toBe(10);
    expect(listener.frames[0]!.h.flags).toBe(1);
    const pcm = listener.pcm();
    expect(goertzel(pcm, 440, 48000, 1920, pcm.length - 960)).toBeGreaterThan(3000);
    expect(goertzel(pcm, 880, 48000, 1920, pcm.length - 960)).toBeGreaterThan(3000);
    mixer.close();
    a.close();
    b.close();
  });

  it("shares one clock between mixers and leaves it on close", () => {
    const before = mixClock.size;
    const m1 = new Mixer({ outCodec: AudioCodec.opus, send: () => {} });
    const m2 = new Mixer({ outCodec: AudioCodec.pcmu, send: () => {} });
    expect(mixClock.size).toBe(before + 2);
    m1.close();
    m2.close();
    m2.close();
    expect(mixClock.size).toBe(before);
  });
});

describe("MixClock", () => {
  it("catches up at most 5 missed ticks after a stall, then re-anchors", async () => {
    let t = 0;
    const clock = new MixClock(() => t);
    const seen: number[] = [];
    const client = { onTick: (now: number) => seen.push(now) };
    clock.add(client);
    clock.add(client);
    expect(clock.size).toBe(1);
    t = 1000; // the event loop was stuck for a second
    await until(() => clock.counters.ticks >= 5, "the catch-up ticks");
    clock.delete(client);
    expect(seen).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(clock.counters.skipped).toBe(45);
    expect(clock.size).toBe(0);
  });
});

describe("Opus codecs", () => {
  it("keep working when many coders make the WASM heap grow (opusscript's views would detach)", () => {
    const first = new MixCodecs(1);
    const heap = opusHeapBytes();
    const many = Array.from({ length: 300 }, () => new MixCodecs(1));
    expect(opusHeapBytes()).toBeGreaterThan(heap);
    const pcm = new Int16Array(960).fill(1000);
    const out = new Uint8Array(1500);
    const n = first.encode(pcm, out);
    expect(n).toBeGreaterThan(0);
    expect(first.decode(1, 1, out, n, new Int16Array(5760))).toBe(960);
    for (const c of many) c.close();
    first.close();
  });
});

describe("Mixer ticked by hand", () => {
  it("drops bad input by reason, survives a throwing send, stops after close", () => {
    let t = 0;
    let calls = 0;
    const mixer = new Mixer({
      outCodec: AudioCodec.pcmu,
      clock: null,
      now: () => t,
      send: () => {
        calls++;
        throw new Error("socket gone");
      },
    });
    const a = new ToneStream(440, AudioCodec.pcmu);
    const f = a.frame(0);
    mixer.push(3, { ...f.h, codec: 9 }, f.payload);
    mixer.push(3, f.h, new Uint8Array(0));
    mixer.push(70000, f.h, f.payload);
    for (let k = 0; k < 5; k++) {
      const g = a.frame(k);
      mixer.push(3, g.h, g.payload);
    }
    for (; t <= 200; t += 20) mixer.onTick(t);
    const s = mixer.stats();
    expect(s.dropped).toMatchObject({ bad_codec: 1, empty_payload: 1, bad_source: 1 });
    expect(s.played).toBe(5);
    expect(calls).toBe(5);
    expect(s.sendErrors).toBe(5);
    mixer.remove(3);
    expect(mixer.stats().sources).toBe(0);
    mixer.close();
    mixer.push(3, f.h, f.payload);
    mixer.onTick(t);
    expect(calls).toBe(5);
  });
});
