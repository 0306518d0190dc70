// A source's playout target: PLAYOUT_DELAY_MS while its hop does not lose; RTT + 20 ms + one frame
// (capped at PLAYOUT_MAX_MS) while it loses more than LOSSY_PER_MILLE over the last LOSS_WINDOW_S
// seconds and repairs (NACK): a first-try repair arrives one RTT plus the 20 ms that reveal the
// gap after the loss (docs/cascade.md, Measured), so it is played rather than concealed. Back to
// the default only once the loss is below half the threshold (no flapping). Pure: the jitter
// buffer's cumulative counters, the hop's RTT and `now` in, a target out.

import { PLAYOUT_DELAY_MS, PLAYOUT_MAX_MS } from "./jitter.ts";

const LOSS_WINDOW_S = 5;
const BUCKET_MS = 1000;
/** 0.5 %: raise above it; lower below half of it. */
const LOSSY_PER_MILLE = 5;
/** The gap shows on the next frame (20 ms) and the repaired frame must be there one frame ahead. */
const REPAIR_MARGIN_MS = 40;

export class PlayoutTarget {
  targetMs = PLAYOUT_DELAY_MS;
  lossy = false;
  readonly #frames = new Uint32Array(LOSS_WINDOW_S);
  readonly #gaps = new Uint32Array(LOSS_WINDOW_S);
  #i = 0;
  #bucketAt = Number.NEGATIVE_INFINITY;
  #lastFrames = 0;
  #lastGaps = 0;

  /**
   * `received`, `gaps`: the buffer's cumulative counters; `rttMs`: the hop's round trip when it
   * repairs by NACK, null when it does not (or is not known yet). Returns the target in ms.
   */
  update(now: number, received: number, gaps: number, rttMs: number | null): number {
    if (now - this.#bucketAt >= BUCKET_MS) {
      this.#bucketAt = now;
      this.#i = (this.#i + 1) % LOSS_WINDOW_S;
      this.#frames[this.#i] = 0;
      this.#gaps[this.#i] = 0;
    }
    this.#frames[this.#i]! += received - this.#lastFrames;
    this.#gaps[this.#i]! += gaps - this.#lastGaps;
    this.#lastFrames = received;
    this.#lastGaps = gaps;
    let f = 0;
    let g = 0;
    for (let k = 0; k < LOSS_WINDOW_S; k++) {
      f += this.#frames[k]!;
      g += this.#gaps[k]!;
    }
    // Twice gaps / (frames + gaps) in per mille, against twice the threshold (raise) or once (lower).
    const perMille2 = (2000 * g) / Math.max(1, f + g);
    if (this.lossy ? perMille2 < LOSSY_PER_MILLE : perMille2 > 2 * LOSSY_PER_MILLE) this.lossy = !this.lossy;
    this.targetMs =
      this.lossy && rttMs !== null
        ? Math.min(PLAYOUT_MAX_MS, Math.max(PLAYOUT_DELAY_MS, rttMs + REPAIR_MARGIN_MS))
        : PLAYOUT_DELAY_MS;
    return this.targetMs;
  }
}
