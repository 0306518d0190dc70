// PCM mixing on 48 kHz mono Int16 frames: an Int32 accumulator per output, summed sources, then
// saturated to Int16. Saturation (not soft clip): with voice at conversational levels the sum of
// a few talkers rarely reaches full scale, and clipping only on those peaks keeps the common case
// bit-exact for a single talker.

/** Zeroes the first n samples of acc. */
export function clearMix(acc: Int32Array, n: number): void {
  acc.fill(0, 0, n);
}

/** acc[i] += src[i] for i < n. */
export function addToMix(acc: Int32Array, src: Int16Array, n: number): void {
  for (let i = 0; i < n; i++) acc[i]! += src[i]!;
}

/** out[i] = acc[i] saturated to Int16; returns how many samples clipped. */
export function saturate(acc: Int32Array, out: Int16Array, n: number): number {
  let clipped = 0;
  for (let i = 0; i < n; i++) {
    const v = acc[i]!;
    if (v > 32767) {
      out[i] = 32767;
      clipped++;
    } else if (v < -32768) {
      out[i] = -32768;
      clipped++;
    } else out[i] = v;
  }
  return clipped;
}
