// The SRTP/SRTCP replay window of RFC 3711 3.3.2, one per SSRC at the receiver: the packet index
// (48-bit for SRTP, ROC * 2^16 + seq; 31-bit for SRTCP) is checked before the packet is
// authenticated and recorded only after, so a forged packet cannot move the window. 128 packets,
// libsrtp's default (the RFC asks for at least 64). Bits live in a ring indexed by the index's low
// bits (RFC 6479's scheme, as shared/conference/replay.ts): 256 bits, twice the window, so
// clearing the words ahead never touches a bit still inside it. Nothing allocates per packet.
//
// Indices are plain numbers (exact below 2^53); bitwise ops take them modulo 2^32, which keeps
// the low bits the ring needs.

export const SRTP_REPLAY_WINDOW = 128;
const RING_WORDS = 8;

/** check() verdicts. */
export const FRESH = 0;
/** The index was received already. */
export const DUPLICATE = 1;
/** The index is SRTP_REPLAY_WINDOW or more behind the highest received. */
export const TOO_OLD = 2;
export type ReplayVerdict = typeof FRESH | typeof DUPLICATE | typeof TOO_OLD;

export class ReplayWindow {
  readonly #ring = new Uint32Array(RING_WORDS);
  /** The highest index recorded; -1 before the first. */
  #highest = -1;

  get highest(): number {
    return this.#highest;
  }

  /** Before authentication: may a packet with `index` be accepted? Changes nothing. */
  check(index: number): ReplayVerdict {
    const h = this.#highest;
    if (index > h) return FRESH;
    if (h - index >= SRTP_REPLAY_WINDOW) return TOO_OLD;
    return (this.#ring[(index >>> 5) & (RING_WORDS - 1)]! & (1 << (index & 31))) !== 0 ? DUPLICATE : FRESH;
  }

  /** After the packet authenticated (and passed check): records `index`. */
  commit(index: number): void {
    const h = this.#highest;
    if (index > h) {
      if (h < 0) {
        this.#ring.fill(0);
      } else {
        // Word numbers as integers (an index may exceed 2^32): the words after the old top's up
        // to the new top's are stale, at most the whole ring.
        const from = Math.floor(h / 32);
        const steps = Math.min(Math.floor(index / 32) - from, RING_WORDS);
        for (let i = 1; i <= steps; i++) this.#ring[(from + i) & (RING_WORDS - 1)] = 0;
      }
      this.#highest = index;
    }
    this.#ring[(index >>> 5) & (RING_WORDS - 1)]! |= 1 << (index & 31);
  }
}
