// STUN transaction matching for the two latency histograms the relay can see without decrypting:
// backbone RTT (client Binding request -> transceiver's response, measured at the POP) and first-hop
// RTT (transceiver's Binding request -> client's response). A direct-mapped cache keyed by the
// transaction id: bounded, no allocation; a collision just loses a sample.

export const RttKind = { backbone: 0, firstHop: 1 } as const;

const MAX_AGE_MS = 10_000;

export class TransactionMatcher {
  readonly #mask: number;
  readonly #w0: Int32Array;
  readonly #w1: Int32Array;
  readonly #w2: Int32Array;
  readonly #slot: Int32Array;
  readonly #kind: Int8Array;
  readonly #at: Float64Array;

  constructor(entries = 4096) {
    let n = 1;
    while (n < entries) n <<= 1;
    this.#mask = n - 1;
    this.#w0 = new Int32Array(n);
    this.#w1 = new Int32Array(n);
    this.#w2 = new Int32Array(n);
    this.#slot = new Int32Array(n).fill(-1);
    this.#kind = new Int8Array(n).fill(-1);
    this.#at = new Float64Array(n);
  }

  static #word(b: Uint8Array, i: number): number {
    return (b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!;
  }

  #pos(w0: number, w1: number, w2: number): number {
    const h = Math.imul(w0 ^ Math.imul(w1, 0x85ebca6b) ^ Math.imul(w2, 0xc2b2ae35), 0x9e3779b1);
    return (h ^ (h >>> 16)) & this.#mask;
  }

  /** Remembers a request whose 12-byte transaction id is at `buf[off..]`. */
  start(kind: number, buf: Uint8Array, off: number, flowSlot: number, now: number): void {
    const w0 = TransactionMatcher.#word(buf, off);
    const w1 = TransactionMatcher.#word(buf, off + 4);
    const w2 = TransactionMatcher.#word(buf, off + 8);
    const p = this.#pos(w0, w1, w2);
    this.#w0[p] = w0;
    this.#w1[p] = w1;
    this.#w2[p] = w2;
    this.#slot[p] = flowSlot;
    this.#kind[p] = kind;
    this.#at[p] = now;
  }

  /** Matches a response; returns the RTT in ms, or -1. A match is consumed. */
  finish(kind: number, buf: Uint8Array, off: number, flowSlot: number, now: number): number {
    const w0 = TransactionMatcher.#word(buf, off);
    const w1 = TransactionMatcher.#word(buf, off + 4);
    const w2 = TransactionMatcher.#word(buf, off + 8);
    const p = this.#pos(w0, w1, w2);
    if (
      this.#kind[p] !== kind ||
      this.#slot[p] !== flowSlot ||
      this.#w0[p] !== w0 ||
      this.#w1[p] !== w1 ||
      this.#w2[p] !== w2
    ) {
      return -1;
    }
    this.#kind[p] = -1;
    const rtt = now - this.#at[p]!;
    return rtt >= 0 && rtt <= MAX_AGE_MS ? rtt : -1;
  }
}
