// The sender's half of per-hop repair (docs/wire-formats.md §8): the last media frames sent on one
// outgoing link (hub -> leaf, or leaf -> hub), kept so a NACK can be answered. Payloads are copied
// into one preallocated slab, never allocated per frame. A retransmission is the stored payload in
// a NEW conference frame (a fresh counter: the same bytes again would be dropped by the peer's
// replay window), so the history keeps payloads and their slots, not whole frames.
import { CONFERENCE_MAX_PAYLOAD } from "./frame.ts";
import type { NackEntry } from "./payloads.ts";

export const SEND_HISTORY_FRAMES = 128;
/** Each frame is retransmitted at most this often, whatever the NACKs say: no amplification. */
export const RETRANSMIT_BUDGET = 2;
const PROBES = 8;

export class SendHistory {
  readonly capacity: number;
  readonly maxBytes: number;
  readonly #slab: Uint8Array;
  readonly #keys: Uint32Array; // sourceSlot << 16 | seq
  readonly #lens: Uint16Array; // 0 = empty
  readonly #dest: Uint16Array;
  readonly #sent: Uint8Array;
  // Open-addressed index key -> ring position, probed over PROBES buckets with no early stop, so
  // clearing a bucket when its ring entry is overwritten never breaks another key's probe.
  readonly #index: Int16Array;
  readonly #shift: number;
  #next = 0;
  recorded = 0;
  retransmitted = 0;
  /** NACKed seqs not (or no longer) in the history. */
  missing = 0;
  /** NACKed seqs refused because their budget was spent. */
  overBudget = 0;

  constructor(capacity = SEND_HISTORY_FRAMES, maxBytes = CONFERENCE_MAX_PAYLOAD) {
    if (!(capacity >= 1 && capacity <= 8192 && maxBytes >= 1 && maxBytes <= 65535))
      throw new RangeError("SendHistory: capacity 1..8192, maxBytes 1..65535");
    this.capacity = capacity;
    this.maxBytes = maxBytes;
    this.#slab = new Uint8Array(capacity * maxBytes);
    this.#keys = new Uint32Array(capacity);
    this.#lens = new Uint16Array(capacity);
    this.#dest = new Uint16Array(capacity);
    this.#sent = new Uint8Array(capacity);
    let bits = 1;
    while (1 << bits < capacity * 4) bits++;
    this.#index = new Int16Array(1 << bits).fill(-1);
    this.#shift = 32 - bits;
  }

  #bucket(key: number, probe: number): number {
    return ((Math.imul(key, 0x9e3779b1) >>> this.#shift) + probe) & (this.#index.length - 1);
  }

  /** Copies a sent media payload (`src[off..off+len]`); false if it is empty or over maxBytes. */
  record(
    sourceSlot: number,
    destinationSlot: number,
    seq: number,
    src: Uint8Array,
    off: number,
    len: number,
  ): boolean {
    if (!(len >= 1 && len <= this.maxBytes) || !(off >= 0) || off + len > src.length) return false;
    const i = this.#next;
    this.#next = (i + 1) % this.capacity;
    if (this.#lens[i] !== 0) this.#unindex(this.#keys[i]!, i);
    const key = (((sourceSlot & 0xffff) << 16) | (seq & 0xffff)) >>> 0;
    this.#keys[i] = key;
    this.#lens[i] = len;
    this.#dest[i] = destinationSlot;
    this.#sent[i] = 0;
    const slab = this.#slab;
    const base = i * this.maxBytes;
    for (let k = 0; k < len; k++) slab[base + k] = src[off + k]!; // no view object per frame
    let free = this.#bucket(key, 0);
    for (let p = 0; p < PROBES; p++) {
      const b = this.#bucket(key, p);
      if (this.#index[b] === -1) {
        free = b;
        break;
      }
    }
    if (this.#index[free] !== -1) this.#lens[this.#index[free]!] = 0; // displaced: forget it whole
    this.#index[free] = i;
    this.recorded++;
    return true;
  }

  #unindex(key: number, i: number): void {
    for (let p = 0; p < PROBES; p++) {
      const b = this.#bucket(key, p);
      if (this.#index[b] === i) this.#index[b] = -1;
    }
  }

  #find(key: number): number {
    for (let p = 0; p < PROBES; p++) {
      const i = this.#index[this.#bucket(key, p)]!;
      if (i >= 0 && this.#keys[i] === key && this.#lens[i] !== 0) return i;
    }
    return -1;
  }

  /**
   * A NACK asks for (sourceSlot, seq): returns the ring position to resend (see copyPayload,
   * destinationOf) and spends one of its budget, or -1 (not in the history, or budget spent).
   */
  retransmit(sourceSlot: number, seq: number): number {
    const i = this.#find((((sourceSlot & 0xffff) << 16) | (seq & 0xffff)) >>> 0);
    if (i < 0) {
      this.missing++;
      return -1;
    }
    if (this.#sent[i]! >= RETRANSMIT_BUDGET) {
      this.overBudget++;
      return -1;
    }
    this.#sent[i]!++;
    this.retransmitted++;
    return i;
  }

  /** Copies the payload at ring position `i` into `dst[off..]`; returns its length, -1 if no room. */
  copyPayload(i: number, dst: Uint8Array, off: number): number {
    const len = this.#lens[i] ?? 0;
    if (len === 0 || !(off >= 0) || off + len > dst.length) return -1;
    const from = i * this.maxBytes;
    const slab = this.#slab;
    for (let k = 0; k < len; k++) dst[off + k] = slab[from + k]!;
    return len;
  }

  destinationOf(i: number): number {
    return this.#dest[i] ?? 0;
  }
}

/** The seqs a NACK entry names (first, then each set bit: bit k = first + k + 1) into `out` (17). */
export function nackSeqs(e: NackEntry, out: Uint16Array): number {
  let n = 0;
  out[n++] = e.firstSeq & 0xffff;
  for (let k = 0; k < 16 && n < out.length; k++)
    if ((e.bitmask >>> k) & 1) out[n++] = (e.firstSeq + k + 1) & 0xffff;
  return n;
}
