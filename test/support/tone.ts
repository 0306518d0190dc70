// Pure tones for audio tests: generate one, and measure how much of a given frequency a block of
// samples holds (Goertzel, one frequency at a time, Hann-windowed so a strong tone does not leak
// into a neighbour 440 Hz away). Pure and DOM-free: the Chromium tone page bundles this same file
// (test/cascade/page/tone-page.ts), so browser and Node tests measure with one detector.

/** The two tones the cascade tests use: the owner's and the joiner's. */
export const TONE_A_HZ = 440;
export const TONE_B_HZ = 880;

/**
 * Amplitude (0..1 for a full-scale sine) of `freq` in `x`: the Goertzel recurrence over a
 * Hann-windowed block, scaled by the window's coherent gain (0.5) so a pure sine of amplitude a
 * reads about a, whatever the block length (given a few periods in the block).
 */
export function toneAmplitude(x: ArrayLike<number>, sampleRate: number, freq: number): number {
  const n = x.length;
  if (n < 2) return 0;
  const w = (2 * Math.PI * freq) / sampleRate;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  const hann = (2 * Math.PI) / (n - 1);
  for (let i = 0; i < n; i++) {
    const s0 = x[i]! * (0.5 - 0.5 * Math.cos(hann * i)) + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return (2 * Math.sqrt(Math.max(0, power))) / (n * 0.5);
}

/** Root mean square of a block (overall level, whatever its frequencies). */
export function rms(x: ArrayLike<number>): number {
  let e = 0;
  for (let i = 0; i < x.length; i++) e += x[i]! * x[i]!;
  return x.length === 0 ? 0 : Math.sqrt(e / x.length);
}

/** `n` samples of a sine of `freq` Hz at `amplitude`, starting at sample `offset` (phase continues). */
export function sine(freq: number, sampleRate: number, n: number, amplitude = 0.3, offset = 0): Float32Array {
  const out = new Float32Array(n);
  const w = (2 * Math.PI * freq) / sampleRate;
  for (let i = 0; i < n; i++) out[i] = amplitude * Math.sin(w * (offset + i));
  return out;
}

/** The same as 16-bit PCM (what the backend protocol's pcm16 frames carry). */
export function sinePcm16(
  freq: number,
  sampleRate: number,
  n: number,
  amplitude = 0.3,
  offset = 0,
): Int16Array {
  const f = sine(freq, sampleRate, n, amplitude, offset);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(f[i]! * 32767);
  return out;
}

/** 16-bit PCM to floats in -1..1 (to measure PCM with toneAmplitude). */
export function pcm16ToFloat(x: Int16Array): Float32Array {
  const out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i]! / 32768;
  return out;
}

export interface ToneLevels {
  /** Amplitude per frequency asked for, by frequency. */
  levels: Record<number, number>;
  rms: number;
}

export function toneLevels(x: ArrayLike<number>, sampleRate: number, freqs: readonly number[]): ToneLevels {
  const levels: Record<number, number> = {};
  for (const f of freqs) levels[f] = toneAmplitude(x, sampleRate, f);
  return { levels, rms: rms(x) };
}

/** Median of a list (0 when empty): a few silent or glitched blocks do not move it. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * A tone counts as heard at this amplitude or more (the cascade tests send 0.3 full scale; Opus and
 * a mixer keep most of it), and as absent below this share of the loudest tone heard: a 440 Hz
 * tone's own harmonic at 880 Hz after Opus is far below it.
 */
export const HEARD = 0.05;
export const ABSENT_SHARE = 0.1;
