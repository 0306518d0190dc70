// 8 kHz <-> 48 kHz resampling for PCMU sources and outputs. One windowed-sinc low-pass (96 taps at
// 48 kHz, Hamming window, cutoff 3.8 kHz: flat to ~3 kHz, -6 dB at 3.8 kHz, about -50 dB from
// 4.6 kHz, so what aliases lands above the 3.4 kHz telephone band) serves both ways: polyphase
// interpolation by 6 (16 taps per output sample) and decimation by 6 (96 taps per output sample).
// Delay: 48 samples at 48 kHz = 1 ms each way. Streams are stateful (filter history carries over
// frames), so one resampler per source or output.

export const RESAMPLE_TAPS = 96;
const FACTOR = 6;
const PHASE_TAPS = RESAMPLE_TAPS / FACTOR;
const CUTOFF_HZ = 3800;
/** Longest input frame accepted: 120 ms (the longest Opus packet) at 48 kHz. */
export const RESAMPLE_MAX_IN_48K = 5760;

const H = ((): Float64Array => {
  const h = new Float64Array(RESAMPLE_TAPS);
  const fc = CUTOFF_HZ / 48000;
  const mid = (RESAMPLE_TAPS - 1) / 2;
  let sum = 0;
  for (let i = 0; i < RESAMPLE_TAPS; i++) {
    const t = i - mid;
    const sinc = t === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * t) / (Math.PI * t);
    const w = 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (RESAMPLE_TAPS - 1));
    h[i] = sinc * w;
    sum += h[i]!;
  }
  for (let i = 0; i < RESAMPLE_TAPS; i++) h[i]! /= sum; // unity gain at DC
  return h;
})();

function clamp16(v: number): number {
  const r = Math.round(v);
  return Math.min(32767, Math.max(-32768, r));
}

/** 8 kHz -> 48 kHz. */
export class Upsampler {
  // [history (PHASE_TAPS - 1) | this frame's input]
  readonly #ext = new Float64Array(PHASE_TAPS - 1 + RESAMPLE_MAX_IN_48K / FACTOR);

  /** Resamples n (<= 960) 8 kHz samples into 6n samples of out; returns 6n. */
  process(src: Int16Array, n: number, out: Int16Array): number {
    const ext = this.#ext;
    const hist = PHASE_TAPS - 1;
    for (let i = 0; i < n; i++) ext[hist + i] = src[i]!;
    for (let i = 0; i < n; i++) {
      const at = hist + i;
      for (let k = 0; k < FACTOR; k++) {
        let acc = 0;
        for (let j = 0; j < PHASE_TAPS; j++) acc += H[j * FACTOR + k]! * ext[at - j]!;
        out[i * FACTOR + k] = clamp16(acc * FACTOR);
      }
    }
    ext.copyWithin(0, n, n + hist);
    return n * FACTOR;
  }

  reset(): void {
    this.#ext.fill(0);
  }
}

/** 48 kHz -> 8 kHz. */
export class Downsampler {
  readonly #ext = new Float64Array(RESAMPLE_TAPS - 1 + RESAMPLE_MAX_IN_48K);

  /** Resamples n (a multiple of 6, <= 5760) 48 kHz samples into n / 6 samples of out. */
  process(src: Int16Array, n: number, out: Int16Array): number {
    const ext = this.#ext;
    const hist = RESAMPLE_TAPS - 1;
    for (let i = 0; i < n; i++) ext[hist + i] = src[i]!;
    const m = Math.floor(n / FACTOR);
    for (let o = 0; o < m; o++) {
      const at = hist + o * FACTOR + FACTOR - 1;
      let acc = 0;
      for (let i = 0; i < RESAMPLE_TAPS; i++) acc += H[i]! * ext[at - i]!;
      out[o] = clamp16(acc);
    }
    ext.copyWithin(0, n, n + hist);
    return m;
  }

  reset(): void {
    this.#ext.fill(0);
  }
}
