// Gilbert-Elliott bursty loss: a two-state Markov chain (good, bad) stepped once per packet; a
// packet is lost with probability lossGood or lossBad depending on the state after the step.
// Public-internet loss comes in bursts, which is what hurts audio; a Bernoulli model would not show it.
import type { Random } from "./random.ts";

export interface LossParams {
  /** P(good -> bad) per packet. */
  p: number;
  /** P(bad -> good) per packet; 1/r is the mean burst length in packets. */
  r: number;
  lossGood: number;
  lossBad: number;
}

export const NO_LOSS: LossParams = { p: 0, r: 1, lossGood: 0, lossBad: 0 };

/**
 * The Gilbert model (lossBad 1, lossGood 0) for a mean loss rate and a mean burst length: the
 * stationary share of the bad state is p / (p + r), so p = rate * r / (1 - rate).
 */
export function burstyLoss(ratePct: number, meanBurstPackets: number): LossParams {
  const rate = ratePct / 100;
  if (rate <= 0) return NO_LOSS;
  const r = 1 / Math.max(1, meanBurstPackets);
  return { p: Math.min(1, (rate * r) / (1 - rate)), r, lossGood: 0, lossBad: 1 };
}

/** Long-run loss rate of the chain (0..1). */
export function meanLoss(l: LossParams): number {
  const sum = l.p + l.r;
  const bad = sum === 0 ? 0 : l.p / sum;
  return bad * l.lossBad + (1 - bad) * l.lossGood;
}

export class GilbertElliott {
  #bad = false;
  readonly #l: LossParams;
  readonly #rand: Random;
  constructor(l: LossParams, rand: Random) {
    this.#l = l;
    this.#rand = rand;
  }
  /** Steps the chain for one packet; true when that packet is lost. */
  lose(): boolean {
    const l = this.#l;
    if (l.p === 0 && l.lossGood === 0 && !this.#bad) return false;
    this.#bad = this.#bad ? this.#rand.next() >= l.r : this.#rand.next() < l.p;
    return this.#rand.next() < (this.#bad ? l.lossBad : l.lossGood);
  }
}
