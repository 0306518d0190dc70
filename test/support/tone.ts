// Tones for audio tests: a sine generator with continuous phase across frames, and a Goertzel
// filter that measures how much of one frequency a block of samples holds. Used by the mixer
// tests, and meant for any test that must tell which streams a client heard (Chromium included:
// feed it the samples of a recorded track).

/** Fills `out` with amplitude * sin(2 pi f t), t counted from sample `start` (phase continues). */
export function tone(
  out: Int16Array,
  freq: number,
  rate: number,
  start: number,
  amplitude = 8000,
): Int16Array {
  for (let i = 0; i < out.length; i++)
    out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * freq * (start + i)) / rate));
  return out;
}

/** A new frame of `samples` samples of the tone, starting at sample `start`. */
export function toneFrame(
  freq: number,
  rate: number,
  start: number,
  samples: number,
  amplitude = 8000,
): Int16Array {
  return tone(new Int16Array(samples), freq, rate, start, amplitude);
}

/**
 * The amplitude of `freq` in samples[from..to) (Goertzel, one DFT bin): a pure sine of
 * amplitude A gives about A when the block holds a whole number of its periods, far less for
 * other frequencies.
 */
export function goertzel(
  samples: ArrayLike<number>,
  freq: number,
  rate: number,
  from = 0,
  to = samples.length,
): number {
  const n = to - from;
  if (n <= 0) return 0;
  const w = (2 * Math.PI * freq) / rate;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (let i = from; i < to; i++) {
    const s0 = samples[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return (2 * Math.sqrt(Math.max(0, power))) / n;
}

/** Root mean square of samples[from..to). */
export function rms(samples: ArrayLike<number>, from = 0, to = samples.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i]! * samples[i]!;
  return to > from ? Math.sqrt(sum / (to - from)) : 0;
}

/** Per frequency, the amplitude found (see goertzel). */
export function toneLevels(
  samples: ArrayLike<number>,
  freqs: number[],
  rate: number,
): Record<number, number> {
  const out: Record<number, number> = {};
  for (const f of freqs) out[f] = goertzel(samples, f, rate);
  return out;
}
