// The tone detector the cascade's browser test relies on (test/support/tone.ts): a pure sine
// reads its amplitude at its own frequency and next to nothing at the other tone's, a mix reads
// both, silence reads neither.
import { describe, expect, it } from "vitest";
import {
  median,
  pcm16ToFloat,
  rms,
  sine,
  sinePcm16,
  TONE_A_HZ,
  TONE_B_HZ,
  toneAmplitude,
} from "../support/tone.ts";

const SR = 48_000;

describe("tone detector", () => {
  it("reads a sine's amplitude at its frequency and almost nothing at the other tone's", () => {
    for (const n of [2048, 4096, 4000]) {
      const a = sine(TONE_A_HZ, SR, n, 0.3);
      expect(toneAmplitude(a, SR, TONE_A_HZ)).toBeCloseTo(0.3, 1);
      expect(toneAmplitude(a, SR, TONE_B_HZ)).toBeLessThan(0.003);
      const b = sine(TONE_B_HZ, SR, n, 0.2, 123);
      expect(toneAmplitude(b, SR, TONE_B_HZ)).toBeCloseTo(0.2, 1);
      expect(toneAmplitude(b, SR, TONE_A_HZ)).toBeLessThan(0.003);
    }
  });

  it("reads both tones in a mix, neither in silence", () => {
    const a = sine(TONE_A_HZ, SR, 4096, 0.3);
    const b = sine(TONE_B_HZ, SR, 4096, 0.1);
    const mix = a.map((v, i) => v + b[i]!);
    expect(toneAmplitude(mix, SR, TONE_A_HZ)).toBeCloseTo(0.3, 1);
    expect(toneAmplitude(mix, SR, TONE_B_HZ)).toBeCloseTo(0.1, 1);
    const zero = new Float32Array(4096);
    expect(toneAmplitude(zero, SR, TONE_A_HZ)).toBe(0);
    expect(rms(zero)).toBe(0);
    expect(rms(a)).toBeCloseTo(0.3 / Math.SQRT2, 2);
  });

  it("PCM16 round-trips, and the median ignores a few outliers", () => {
    const p = pcm16ToFloat(sinePcm16(TONE_B_HZ, 16_000, 1600, 0.3));
    expect(toneAmplitude(p, 16_000, TONE_B_HZ)).toBeCloseTo(0.3, 1);
    expect(median([0.3, 0, 0.31, 0.29, 0.3])).toBe(0.3);
    expect(median([])).toBe(0);
    expect(median([1, 3])).toBe(2);
  });
});
