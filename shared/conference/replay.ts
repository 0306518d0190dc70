// Replay window over a conference frame's u32 counter (docs/wire-formats.md §8), one per
// (conference, sender) stream at the receiver. The scheme of RFC 6479: a ring of bits indexed by
// the counter's low bits, whole words cleared as the window moves, so a check is O(1) and
// allocates nothing. The ring has 2048 bits, twice the window, so clearing a word ahead never
// touches a bit still inside the 1024-frame window.
//
// Wraparound: counters compare in serial-number arithmetic (RFC 1982) on 32 bits, so a sender
// that passes 0xffffffff goes on at 0 without a break. A frame counts as newer when it is ahead
// by 1..2^31-1. Senders start a conference at counter 0 (never reused: a new conference has a new
// id); at 50 frames/s a wrap takes 2.7 years.

export const REPLAY_WINDOW = 1024;
const RING_BITS = 2048;
const RING_WORDS = RING_BITS / 32;

export class ReplayWindow {
  readonly #ring = new Uint32Array(RING_WORDS);
  #highest = 0;
  #started = false;
  /** Frames dropped as replays (a repeat, or older than the window). */
  replays = 0;

  /** The highest counter accepted so far (meaningful once one frame was accepted). */
  get highest(): number {
    return this.#highest;
  }

  /**
   * Accepts `counter` (a MAC-valid frame's) and records it, or returns false for a repeat or a
   * frame 1024 or more behind the highest. Call only after the MAC is checked.
   */
  accept(counter: number): boolean {
    const c = counter >>> 0;
    if (!this.#started) {
      this.#started = true;
      this.#highest = c;
      this.#ring.fill(0);
      this.#set(c);
      return true;
    }
    const ahead = (c - this.#highest) | 0; // signed 32-bit distance
    if (ahead > 0) {
      this.#advance(c);
      this.#set(c);
      return true;
    }
    if (-ahead >= REPLAY_WINDOW || ahead === 0 || this.#has(c)) {
      this.replays++;
      return false;
    }
    this.#set(c);
    return true;
  }

  /** Forgets everything (a new sender, e.g. a participant that rejoined under a new conference). */
  reset(): void {
    this.#started = false;
    this.#highest = 0;
    this.#ring.fill(0);
  }

  #advance(c: number): void {
    const oldWord = this.#highest >>> 5;
    const newWord = c >>> 5;
    // Words strictly after the old top word up to the new one are stale: clear them (at most all).
    let steps = (newWord - oldWord) & 0x7ffffff; // word numbers are 27 bits
    if (steps > RING_WORDS) steps = RING_WORDS;
    for (let i = 1; i <= steps; i++) this.#ring[(oldWord + i) & (RING_WORDS - 1)] = 0;
    this.#highest = c;
  }

  #set(c: number): void {
    this.#ring[(c >>> 5) & (RING_WORDS - 1)]! |= 1 << (c & 31);
  }

  #has(c: number): boolean {
    return (this.#ring[(c >>> 5) & (RING_WORDS - 1)]! & (1 << (c & 31))) !== 0;
  }
}
