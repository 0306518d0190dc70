// The receiver's ordering and reassembly of one event stream (docs/wire-formats.md §8, kind 6):
// fragments are taken in seq order. One that arrives ahead of a gap is held (at most EVENT_HOLD,
// a copy) while the gap is repaired by NACK (the link's GapTracker asks); a gap still open after
// NACK_GIVE_UP_MS, or one the hold cannot bridge, is given up: the caller reports the seqs lost,
// the event they cut is dropped whole and taking goes on at the next event's first fragment.
// Streams start at seq 0, so a lost first event is seen too, and the sender's keepalive
// announces its next seq (`horizon`), so a lost last event is seen within a second. In order,
// the fragments of one event are joined in one buffer of EVENT_MAX_BYTES (created at the first
// event of several fragments); an event growing past it is dropped (`event_too_large`), a
// continuation without its first fragment (or a first fragment cutting an unfinished event) is
// garbage (`event_fragment`), a whole event that is not UTF-8 is `bad_event`: each counted by
// `drop`, none disturbing the next event. Pure: time comes in as `now` (ms).
import { EVENT_CONTINUATION, EVENT_HEADER_BYTES, EVENT_MAX_BYTES, EVENT_MORE, eventText } from "./event.ts";
import { NACK_GIVE_UP_MS } from "./gap-tracker.ts";

/**
 * Fragments held behind a gap per stream (a power of 2): the gap tracker's 256-seq window and the
 * sender's history of 256 fragments, four of the largest events. Held as copies, only while a
 * gap is open: at most 282 KB, and one EVENT_MAX_BYTES buffer for reassembly.
 */
export const EVENT_HOLD = 256;

export type EventDrop = "event_fragment" | "event_too_large" | "bad_event";
type Deliver = (text: string) => void;

const ahead = (a: number, b: number): number => (((a - b) << 16) >> 16) | 0; // signed 16-bit a - b

// Reassembly state, in seq order: between events, inside one, or dropping the rest of one
// (cut by a loss, or too large) until the next first fragment.
const IDLE = 0;
const JOINING = 1;
const SKIPPING = 2;

export class EventInbox {
  readonly #seqs = new Int32Array(EVENT_HOLD).fill(-1);
  readonly #held: (Uint8Array | undefined)[] = new Array(EVENT_HOLD).fill(undefined);
  readonly #drop: (reason: EventDrop) => void;
  #next = 0;
  // The seq after the last one the sender is known to have sent (held, or announced): a gap
  // is open while it is ahead of `next`, since `#since`.
  #known = 0;
  #since = 0;
  #state = IDLE;
  #joined: Uint8Array | undefined;
  #joinedLen = 0;
  /** Events delivered. */
  delivered = 0;
  /** Seqs given up. */
  lost = 0;

  constructor(drop: (reason: EventDrop) => void = () => {}) {
    this.#drop = drop;
  }

  /**
   * One arriving fragment (its seq; `buf[off..off+len]` is its whole payload, header included):
   * calls `deliver` for every event now complete in order and returns how many seqs were given
   * up to get there (0 normally).
   */
  push(seq: number, buf: Uint8Array, off: number, len: number, now: number, deliver: Deliver): number {
    const d = ahead(seq, this.#next);
    if (d < 0) return 0; // taken or given up already
    if (d === 0) {
      this.#take(buf, off, len, deliver);
      this.#drain(deliver);
      return 0;
    }
    if (d >= EVENT_HOLD) {
      // Beyond what can be held: give up what is missing before it.
      const lost = this.#skip((seq - EVENT_HOLD + 1) & 0xffff, deliver);
      return lost + this.push(seq, buf, off, len, now, deliver);
    }
    const i = seq & (EVENT_HOLD - 1);
    if (this.#seqs[i] === seq) return 0; // held already
    this.#seqs[i] = seq;
    this.#held[i] = buf.slice(off, off + len);
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
  tick(now: number, deliver: Deliver): number {
    if (this.#known === this.#next || now - this.#since < NACK_GIVE_UP_MS) return 0;
    let lost = 0;
    while (this.#next !== this.#known && this.#seqs[this.#next & (EVENT_HOLD - 1)] !== this.#next) {
      this.#next = (this.#next + 1) & 0xffff;
      lost++;
    }
    this.#gaveUp(lost);
    this.#drain(deliver);
    if (this.#known !== this.#next) this.#since = now; // the next gap's own time starts
    return lost;
  }

  /** Seqs given up: the event they cut is dropped, and so is the rest of it. */
  #gaveUp(lost: number): void {
    if (lost === 0) return;
    this.lost += lost;
    this.#state = SKIPPING;
  }

  /** The fragment at `next`: joined to its event, which is delivered when it is whole. */
  #take(buf: Uint8Array, off: number, len: number, deliver: Deliver): void {
    const caughtUp = this.#known === this.#next;
    this.#next = (this.#next + 1) & 0xffff;
    if (caughtUp) this.#known = this.#next;
    const flags = buf[off + 2]!;
    const more = (flags & EVENT_MORE) !== 0;
    const body = off + EVENT_HEADER_BYTES;
    const n = len - EVENT_HEADER_BYTES;
    if ((flags & EVENT_CONTINUATION) === 0) {
      if (this.#state === JOINING) this.#drop("event_fragment"); // the unfinished one is cut
      if (!more) {
        this.#state = IDLE;
        this.#deliver(buf.subarray(body, body + n), deliver); // whole in one: no copy
        return;
      }
      this.#state = JOINING;
      this.#joinedLen = 0;
    } else if (this.#state !== JOINING) {
      // The rest of an event given up or too large is expected; a stray one is garbage.
      if (this.#state === IDLE) this.#drop("event_fragment");
      else if (!more) this.#state = IDLE;
      return;
    }
    if (this.#joinedLen + n > EVENT_MAX_BYTES) {
      this.#drop("event_too_large");
      this.#state = more ? SKIPPING : IDLE;
      return;
    }
    this.#joined ??= new Uint8Array(EVENT_MAX_BYTES);
    this.#joined.set(buf.subarray(body, body + n), this.#joinedLen);
    this.#joinedLen += n;
    if (more) return;
    this.#state = IDLE;
    this.#deliver(this.#joined.subarray(0, this.#joinedLen), deliver);
  }

  #deliver(bytes: Uint8Array, deliver: Deliver): void {
    const text = eventText(bytes);
    if (text === undefined) {
      this.#drop("bad_event");
      return;
    }
    this.delivered++;
    deliver(text);
  }

  /** Takes the held fragments that are next in order. */
  #drain(deliver: Deliver): void {
    for (;;) {
      const i = this.#next & (EVENT_HOLD - 1);
      if (this.#seqs[i] !== this.#next) return;
      this.#takeHeld(i, deliver);
    }
  }

  #takeHeld(i: number, deliver: Deliver): void {
    const f = this.#held[i]!;
    this.#seqs[i] = -1;
    this.#held[i] = undefined;
    this.#take(f, 0, f.length, deliver);
  }

  /** Moves `next` to `to`, taking what is held on the way; returns the seqs skipped. */
  #skip(to: number, deliver: Deliver): number {
    let lost = 0;
    while (this.#next !== to) {
      const i = this.#next & (EVENT_HOLD - 1);
      if (this.#seqs[i] === this.#next) this.#takeHeld(i, deliver);
      else {
        this.#next = (this.#next + 1) & 0xffff;
        this.#gaveUp(1);
        lost++;
      }
    }
    if (ahead(this.#next, this.#known) > 0) this.#known = this.#next;
    this.#drain(deliver);
    return lost;
  }
}
