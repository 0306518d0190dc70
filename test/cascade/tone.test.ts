// The windowed tone detector the cascade's browser test relies on (test/support/tone.ts): a pure
// sine reads its amplitude at its own frequency and next to nothing at the other tone's, whatever
// the block length; a mix reads both, silence reads neither.
import { describe, expect, it } from "vitest";
import { median, TONE_A_HZ, TONE_B_HZ, toneAmplitude, toneFrame } from "../support/tone.ts";

const SR = 48_000;
/** A float sine (-1..1) from the shared PCM generator. */
const sine = (freq: number, n: number, amplitude: number, start = 0): Float32Array =>
  Float32Array.from(toneFrame(freq, SR, start, n, amplitude * 32767), (v) => v / 32767);

describe("windowed tone detector", () => {
  it("reads a sine's amplitude at its frequency and almost nothing at the other tone's", () => {
    for (const n of [2048, 4096, 4000]) {
      const a = sine(TONE_A_HZ, n, 0.3);
      expect(toneAmplitude(a, SR, TONE_A_HZ)).toBeCloseTo(0.3, 1);
      expect(toneAmplitude(a, SR, TONE_B_HZ)).toBeLessThan(0.003);
      const b = sine(TONE_B_HZ, n, 0.2, 123);
      expect(toneAmplitude(b, SR, TONE_B_HZ)).toBeCloseTo(0.2, 1);
      expect(toneAmplitude(b, SR, TONE_A_HZ)).toBeLessThan(0.003);
    }
  });

  it("reads both tones in a mix, neither in silence", () => {
    const a = sine(TONE_A_HZ, 4096, 0.3);
    const b = sine(TONE_B_HZ, 4096, 0.1);
    const mix = a.map((v, i) => v + b[i]!);
    expect(toneAmplitude(mix, SR, TONE_A_HZ)).toBeCloseTo(0.3, 1);
    expect(toneAmplitude(mix, SR, TONE_B_HZ)).toBeCloseTo(0.1, 1);
    expect(toneAmplitude(new Float32Array(4096), SR, TONE_A_HZ)).toBe(0);
  });

  it("the median ignores a few outliers", () => {
    expect(median([0.3, 0, 0.31, 0.29, 0.3])).toBe(0.3);
    expect(median([])).toBe(0);
    expect(median([1, 3])).toBe(2);
  });
});
