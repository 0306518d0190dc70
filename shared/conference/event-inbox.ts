// The receiver's ordering of one event stream (docs/wire-formats.md §8, kind 6): events are
// delivered in seq order. One that arrives ahead of a gap is held (at most EVENT_HOLD) while the
// gap is repaired by NACK (the link's GapTracker asks); a gap still open after NACK_GIVE_UP_MS,
// or one the hold cannot bridge, is given up: the caller reports the events lost and delivery
// goes on after it. Streams start at seq 0, so a lost first event is seen too, and the sender's
// keepalive announces its next seq (`horizon`), so a lost last event is seen within a second.
// Pure: time comes in as `now` (ms).
import { NACK_GIVE_UP_MS } from "./gap-tracker.ts";

/** Events held behind a gap per stream. */
export const EVENT_HOLD = 32;

const ahead = (a: number, b: number): number => (((a - b) << 16) >> 16) | 0; // signed 16-bit a - b

export class EventInbox {
  readonly #seqs = new Int32Array(EVENT_HOLD).fill(-1);
  readonly #texts: (string | undefined)[] = new Array(EVENT_HOLD).fill(undefined);
  #next = 0;
  // The seq after the last one the sender is known to have sent (held, or announced): a gap
  // is open while it is ahead of `next`, since `#since`.
  #known = 0;
  #since = 0;
  delivered = 0;
  lost = 0;

  /**
   * One arriving event (its seq, its text): calls `deliver` for every event now in order and
   * returns how many seqs were given up to get there (0 normally).
   */
  push(seq: number, text: string, now: number, deliver: (text: string) => void): number {
    const d = ahead(seq, this.#next);
    if (d < 0) return 0; // delivered or given up already
    if (d === 0) {
      this.#emit(text, deliver);
      this.#drain(deliver);
      return 0;
    }
    if (d >= EVENT_HOLD) {
      // Beyond what can be held: give up what is missing before it.
      const lost = this.#skip((seq - EVENT_HOLD + 1) & 0xffff, deliver);
      return lost + this.push(seq, text, now, deliver);
    }
    const i = seq & (EVENT_HOLD - 1);
    if (this.#seqs[i] === seq) return 0; // held already
    this.#seqs[i] = seq;
    this.#texts[i] = text;
    this.horizon((seq + 1) & 0xffff, now);
    return 0;
  }

  /** The sender's next seq (its keepalive): anything before it not yet here is missing. */
  horizon(next: number, now: number): void {
    if (ahead(next, this.#known) <= 0) return;
    if (this.#known === this.#next) this.#since = now;
    this.#known = next & 0xffff;
  }

  /** Gives up a gap open too long; returns the seqs given up. */
  tick(now: number, deliver: (text: string) => void): number {
    if (this.#known === this.#next || now - this.#since < NACK_GIVE_UP_MS) return 0;
    let lost = 0;
    while (this.#next !== this.#known && this.#seqs[this.#next & (EVENT_HOLD - 1)] !== this.#next) {
      this.#next = (this.#next + 1) & 0xffff;
      lost++;
    }
    this.lost += lost;
    this.#drain(deliver);
    if (this.#known !== this.#next) this.#since = now; // the next gap's own time starts
    return lost;
  }

  #emit(text: string, deliver: (text: string) => void): void {
    const caughtUp = this.#known === this.#next;
    this.#next = (this.#next + 1) & 0xffff;
    if (caughtUp) this.#known = this.#next;
    this.delivered++;
    deliver(text);
  }

  /** Delivers the held events that are next in order. */
  #drain(deliver: (text: string) => void): void {
    for (;;) {
      const i = this.#next & (EVENT_HOLD - 1);
      if (this.#seqs[i] !== this.#next) return;
      const text = this.#texts[i]!;
      this.#seqs[i] = -1;
      this.#texts[i] = undefined;
      this.#emit(text, deliver);
    }
  }

  /** Moves `next` to `to`, delivering what is held on the way; returns the seqs skipped. */
  #skip(to: number, deliver: (text: string) => void): number {
    let lost = 0;
    while (this.#next !== to) {
      const i = this.#next & (EVENT_HOLD - 1);
      if (this.#seqs[i] === this.#next) {
        const text = this.#texts[i]!;
        this.#seqs[i] = -1;
        this.#texts[i] = undefined;
        this.#emit(text, deliver);
      } else {
        this.#next = (this.#next + 1) & 0xffff;
        lost++;
      }
    }
    if (ahead(this.#next, this.#known) > 0) this.#known = this.#next;
    this.lost += lost;
    this.#drain(deliver);
    return lost;
  }
}
