// The receiver's ordering of one event stream (docs/wire-formats.md §8, kind 6): events are
// delivered in seq order. One that arrives ahead of a gap is held (at most EVENT_HOLD) while
// the gap is repaired by NACK (the link's GapTracker asks); a gap still open after
// NACK_GIVE_UP_MS, or one the hold cannot bridge, is given up: the caller reports the events
// lost and delivery goes on after it. Streams start at seq 0, so a lost first event is seen too.
// Pure: time comes in as `now` (ms).
import { NACK_GIVE_UP_MS } from "./gap-tracker.ts";

/** Events held behind a gap per stream. */
export const EVENT_HOLD = 32;

export class EventInbox {
  readonly #seqs = new Int32Array(EVENT_HOLD).fill(-1);
  readonly #texts: (string | undefined)[] = new Array(EVENT_HOLD).fill(undefined);
  #next = 0;
  #held = 0;
  #heldSince = 0;
  delivered = 0;
  lost = 0;

  /**
   * One arriving event (its seq, its text): calls `deliver` for every event now in order and
   * returns how many seqs were given up to get there (0 normally).
   */
  push(seq: number, text: string, now: number, deliver: (text: string) => void): number {
    const d = (((seq - this.#next) << 16) >> 16) | 0; // signed 16-bit distance
    if (d < 0) return 0; // delivered or given up already
    if (d === 0) {
      this.#emit(text, deliver);
      return this.#drain(deliver);
    }
    if (d >= EVENT_HOLD) {
      // Beyond what can be held: give up everything before it.
      const lost = this.#skipTo((seq - EVENT_HOLD + 1) & 0xffff, deliver);
      return lost + this.push(seq, text, now, deliver);
    }
    const i = seq & (EVENT_HOLD - 1);
    if (this.#seqs[i] === seq) return 0; // held already
    this.#seqs[i] = seq;
    this.#texts[i] = text;
    if (this.#held++ === 0) this.#heldSince = now;
    return 0;
  }

  /** Gives up a gap held open too long; returns the seqs given up. */
  tick(now: number, deliver: (text: string) => void): number {
    if (this.#held === 0 || now - this.#heldSince < NACK_GIVE_UP_MS) return 0;
    let lost = 0;
    while (this.#seqs[this.#next & (EVENT_HOLD - 1)] !== this.#next) {
      this.#next = (this.#next + 1) & 0xffff;
      lost++;
    }
    this.lost += lost;
    const more = this.#drain(deliver);
    if (this.#held > 0) this.#heldSince = now;
    return lost + more;
  }

  #emit(text: string, deliver: (text: string) => void): void {
    this.#next = (this.#next + 1) & 0xffff;
    this.delivered++;
    deliver(text);
  }

  /** Delivers the held events that are next in order; 0 (nothing given up). */
  #drain(deliver: (text: string) => void): number {
    for (;;) {
      const i = this.#next & (EVENT_HOLD - 1);
      if (this.#seqs[i] !== this.#next) return 0;
      const text = this.#texts[i]!;
      this.#seqs[i] = -1;
      this.#texts[i] = undefined;
      this.#held--;
      this.#emit(text, deliver);
    }
  }

  /** Moves `next` to `to`, delivering what is held on the way; returns the seqs skipped. */
  #skipTo(to: number, deliver: (text: string) => void): number {
    let lost = 0;
    while (this.#next !== to) {
      const i = this.#next & (EVENT_HOLD - 1);
      if (this.#seqs[i] === this.#next) {
        const text = this.#texts[i]!;
        this.#seqs[i] = -1;
        this.#texts[i] = undefined;
        this.#held--;
        this.#emit(text, deliver);
      } else {
        this.#next = (this.#next + 1) & 0xffff;
        lost++;
      }
    }
    this.lost += lost;
    this.#drain(deliver);
    return lost;
  }
}
