// The receiver's half of per-hop repair (docs/wire-formats.md §8): one tracker per source stream
// arriving on a link. Gaps in the 16-bit sequence number (the source's audio seq, wraparound
// included) become missing entries; `due` says which to NACK now: at once for a new gap, then
// after max(2 x RTT, 20 ms) up to 2 retries. An entry is given up (lost) after 500 ms or when it
// falls 256 or more seqs behind the highest. Pure: time comes in as `now` (ms).
import type { NackEntry } from "./payloads.ts";
import { NACK_MAX_ENTRIES } from "./payloads.ts";

export const NACK_RETRIES = 2;
export const NACK_MIN_RETRY_MS = 20;
export const NACK_GIVE_UP_MS = 500;
export const SEQ_WINDOW = 256;
/** Missing entries per stream (the sender's history is 128 frames: more could not be repaired). */
export const MAX_MISSING = 128;
/** Before the first setRtt. */
export const DEFAULT_RTT_MS = 50;

export type PacketVerdict = "new" | "duplicate" | "late" | "repaired";

export class GapTracker {
  readonly sourceSlot: number;
  /** false (CONFERENCE_NACK=0): gaps are still counted as lost, but nothing is ever due. */
  readonly nack: boolean;
  readonly #seq = new Uint16Array(MAX_MISSING);
  readonly #created = new Float64Array(MAX_MISSING);
  readonly #lastSent = new Float64Array(MAX_MISSING);
  readonly #sends = new Uint8Array(MAX_MISSING);
  #n = 0;
  readonly #seen = new Uint32Array(SEQ_WINDOW / 32); // received bits, by seq & 255
  #highest = 0;
  #started = false;
  #rtt = DEFAULT_RTT_MS;
  received = 0;
  lost = 0;
  repaired = 0;
  duplicates = 0;
  /** Out-of-order arrivals not yet NACKed, and arrivals after their entry was given up. */
  late = 0;
  /** Seqs requested, retries included. */
  nacked = 0;
  /** Forward jumps over the window: taken as a restarted source, not as loss. */
  resyncs = 0;

  constructor(sourceSlot: number, nack = true) {
    this.sourceSlot = sourceSlot & 0xffff;
    this.nack = nack;
  }

  get missing(): number {
    return this.#n;
  }

  setRtt(ms: number): void {
    if (Number.isFinite(ms) && ms >= 0) this.#rtt = ms;
  }

  #retryMs(): number {
    return Math.max(2 * this.#rtt, NACK_MIN_RETRY_MS);
  }

  #seenBit(seq: number): boolean {
    return (this.#seen[(seq & 255) >>> 5]! & (1 << (seq & 31))) !== 0;
  }
  #mark(seq: number, on: boolean): void {
    const w = (seq & 255) >>> 5;
    if (on) this.#seen[w]! |= 1 << (seq & 31);
    else this.#seen[w]! &= ~(1 << (seq & 31));
  }

  #remove(i: number): void {
    for (let k = i + 1; k < this.#n; k++) {
      this.#seq[k - 1] = this.#seq[k]!;
      this.#created[k - 1] = this.#created[k]!;
      this.#lastSent[k - 1] = this.#lastSent[k]!;
      this.#sends[k - 1] = this.#sends[k]!;
    }
    this.#n--;
  }

  #add(seq: number, now: number): void {
    if (this.#n === MAX_MISSING) {
      this.lost++;
      this.#remove(0);
    }
    const i = this.#n++;
    this.#seq[i] = seq;
    this.#created[i] = now;
    this.#lastSent[i] = 0;
    this.#sends[i] = 0;
  }

  /** Classifies one arriving media frame of this stream by its seq. */
  onPacket(seq: number, now: number): PacketVerdict {
    const s = seq & 0xffff;
    if (!this.#started) {
      this.#started = true;
      this.#highest = s;
      this.#seen.fill(0);
      this.#mark(s, true);
      this.received++;
      return "new";
    }
    const d = ((s - this.#highest) << 16) >> 16; // signed 16-bit distance
    // The highest is normally a seq received; after expectBefore it may be one still missing.
    if (d === 0 && this.#seenBit(s)) {
      this.duplicates++;
      return "duplicate";
    }
    if (d > 0) {
      const gap = d - 1;
      if (d >= SEQ_WINDOW) {
        this.#seen.fill(0);
        this.lost += this.#n; // everything pending is now out of the window
        this.#n = 0;
        if (gap >= SEQ_WINDOW) this.resyncs++;
      } else for (let k = 1; k <= d; k++) this.#mark(this.#highest + k, false);
      if (gap > 0 && gap < SEQ_WINDOW) {
        const tracked = Math.min(gap, MAX_MISSING);
        this.lost += gap - tracked;
        for (let k = gap - tracked + 1; k <= gap; k++) this.#add((this.#highest + k) & 0xffff, now);
      }
      this.#highest = s;
      this.#mark(s, true);
      // Entries now 256 or more behind fall out of the window.
      while (this.#n > 0 && ((s - this.#seq[0]!) & 0xffff) >= SEQ_WINDOW) {
        this.lost++;
        this.#remove(0);
      }
      this.received++;
      return "new";
    }
    if (-d < SEQ_WINDOW && this.#seenBit(s)) {
      this.duplicates++;
      return "duplicate";
    }
    if (-d < SEQ_WINDOW) this.#mark(s, true);
    this.received++;
    for (let i = 0; i < this.#n; i++) {
      if (this.#seq[i] !== s) continue;
      const nacked = this.#sends[i]! > 0;
      this.#remove(i);
      if (nacked) {
        this.repaired++;
        return "repaired";
      }
      this.late++;
      return "late";
    }
    this.late++;
    return "late";
  }

  /**
   * The sender says `next` is the seq it will send next: seqs after the highest up to next - 1
   * never came (lost at the end of a burst, with nothing after them to reveal the gap). They
   * become missing entries, NACKed as any gap. A stream not started counts as at `next - 1`'s
   * predecessor of 0 (streams that announce this start at seq 0).
   */
  expectBefore(next: number, now: number): void {
    const last = (next - 1) & 0xffff;
    if (!this.#started) {
      if (next === 0) return;
      this.#started = true;
      this.#highest = 0xffff; // before seq 0
      this.#seen.fill(0);
    }
    const d = ((last - this.#highest) << 16) >> 16;
    if (d <= 0 || d >= SEQ_WINDOW) return;
    for (let k = 1; k <= d; k++) {
      const s = (this.#highest + k) & 0xffff;
      this.#mark(s, false);
      this.#add(s, now);
    }
    this.#highest = last;
  }

  /**
   * Gives up expired entries, then writes the NACK entries due now into `out[start..]` (at most
   * 16 entries in all) and returns the new count. Each entry written counts as sent.
   */
  due(now: number, out: NackEntry[], start: number): number {
    for (let i = 0; i < this.#n; ) {
      if (now - this.#created[i]! >= NACK_GIVE_UP_MS) {
        this.lost++;
        this.#remove(i);
      } else i++;
    }
    if (!this.nack) return start;
    const limit = Math.min(out.length, NACK_MAX_ENTRIES);
    const retry = this.#retryMs();
    let count = start;
    let cur: NackEntry | undefined;
    for (let i = 0; i < this.#n; i++) {
      const sends = this.#sends[i]!;
      if (sends > NACK_RETRIES || (sends > 0 && now - this.#lastSent[i]! < retry)) continue;
      const seq = this.#seq[i]!;
      const off = cur === undefined ? 0 : (seq - cur.firstSeq) & 0xffff;
      if (cur !== undefined && off >= 1 && off <= 16) cur.bitmask |= 1 << (off - 1);
      else {
        if (count >= limit) break;
        cur = out[count++]!;
        cur.sourceSlot = this.sourceSlot;
        cur.firstSeq = seq;
        cur.bitmask = 0;
      }
      this.#sends[i] = sends + 1;
      this.#lastSent[i] = now;
      this.nacked++;
    }
    return count;
  }

  /** When `due` next has work (a NACK or a give-up); Infinity if nothing is missing. */
  nextDueAt(): number {
    let t = Number.POSITIVE_INFINITY;
    const retry = this.#retryMs();
    for (let i = 0; i < this.#n; i++) {
      t = Math.min(t, this.#created[i]! + NACK_GIVE_UP_MS);
      if (!this.nack) continue;
      const sends = this.#sends[i]!;
      if (sends === 0) return this.#created[i]!;
      if (sends <= NACK_RETRIES) t = Math.min(t, this.#lastSent[i]! + retry);
    }
    return t;
  }
}
