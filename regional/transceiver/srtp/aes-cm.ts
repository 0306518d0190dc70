// AES-128 in counter mode as SRTP defines it (RFC 3711 4.1.1), from one long-lived AES context.
// node:crypto cannot re-key the IV of an aes-128-ctr cipher, so werift created a cipher object per
// packet; an aes-128-ecb cipher, created once per session key, encrypts the packet's counter
// blocks instead (the keystream), which is XORed into the data. ECB over distinct counter blocks
// is exactly CTR. Packets arrive and leave mostly in index order, so the keystream of the next
// PACKETS indices is made in one `update` (for payloads up to PACKET_BYTES): one call into
// node:crypto, and one allocation, per PACKETS packets instead of per packet. Each index gets as
// much keystream as the longest payload seen (whole blocks), and only the counter bytes that
// change with the index are rewritten between calls.

import { type Cipheriv, createCipheriv } from "node:crypto";

const BLOCK = 16;
/** An SRTP packet cannot exceed a UDP datagram; more keystream than this is refused. */
export const MAX_KEYSTREAM_BYTES = 65536;
/** Keystream made ahead: PACKETS consecutive indices of up to PACKET_BYTES each (audio sizes). */
const PACKETS = 8;
const PACKET_BYTES = 256;

export class AesCm {
  readonly #ecb: Cipheriv;
  readonly #salt: Uint8Array;
  #blocks = new Uint8Array(PACKETS * PACKET_BYTES);
  // The keystream made ahead: indices base..base+PACKETS-1 of ssrc (base -1: none), `stride`
  // bytes each: the longest payload seen so far, in whole blocks (at most PACKET_BYTES).
  #ahead: Buffer | undefined;
  #aheadSsrc = 0;
  #aheadBase = -1;
  #stride = 0;
  // The counter blocks of the ahead buffer hold this ssrc's salt bytes (-1: not yet written).
  #templateSsrc = -1;
  #templateStride = 0;

  /** `key` is the 16-byte session key, `salt` the 14-byte session salt. */
  constructor(key: Uint8Array, salt: Uint8Array) {
    this.#ecb = createCipheriv("aes-128-ecb", key, null);
    this.#ecb.setAutoPadding(false);
    this.#salt = salt;
  }

  /**
   * XORs the keystream for packet index `(roc << 16) | seq` of `ssrc` over `src[start..end]`
   * into `dst[dstOff..]` (which may be `src` itself). For SRTCP, pass `index >>> 16` and
   * `index & 0xffff` as `roc` and `seq` (the 31-bit index takes the same place in the IV).
   */
  xor(
    ssrc: number,
    roc: number,
    seq: number,
    src: Uint8Array,
    start: number,
    end: number,
    dst: Uint8Array,
    dstOff: number,
  ): boolean {
    const len = end - start;
    if (len <= 0) return len === 0;
    if (len > MAX_KEYSTREAM_BYTES) return false;
    let ks: Uint8Array;
    let at = 0;
    if (len <= PACKET_BYTES) {
      const index = roc * 65536 + seq;
      const base = this.#aheadBase;
      if (
        base < 0 ||
        ssrc !== this.#aheadSsrc ||
        index < base ||
        index >= base + PACKETS ||
        len > this.#stride
      ) {
        this.#makeAhead(ssrc, index, len);
      }
      ks = this.#ahead!;
      at = (index - this.#aheadBase) * this.#stride;
    } else {
      const n = (len + BLOCK - 1) >>> 4;
      if (this.#blocks.length < n * BLOCK) this.#blocks = new Uint8Array(n * BLOCK);
      this.#templateSsrc = -1;
      for (let i = 0; i < n; i++) this.#counter(i * BLOCK, ssrc, roc, seq, i);
      ks = this.#ecb.update(this.#blocks.subarray(0, n * BLOCK));
    }
    for (let i = 0; i < len; i++) dst[dstOff + i] = src[start + i]! ^ ks[at + i]!;
    return true;
  }

  #makeAhead(ssrc: number, index: number, len: number): void {
    const stride = Math.max(this.#stride, (len + BLOCK - 1) & ~(BLOCK - 1));
    this.#stride = stride;
    const per = stride / BLOCK;
    const b = this.#blocks;
    const s = this.#salt;
    if (this.#templateSsrc !== ssrc || this.#templateStride !== stride) {
      // The parts of every counter block that only the ssrc and the block number decide.
      for (let p = 0; p < PACKETS; p++) {
        for (let k = 0; k < per; k++) this.#counter((p * per + k) * BLOCK, ssrc, 0, 0, k);
      }
      this.#templateSsrc = ssrc;
      this.#templateStride = stride;
    }
    for (let p = 0; p < PACKETS; p++) {
      const i = index + p;
      const roc = Math.floor(i / 65536) >>> 0;
      const seq = i & 0xffff;
      const r0 = s[8]! ^ (roc >>> 24);
      const r1 = s[9]! ^ ((roc >>> 16) & 255);
      const r2 = s[10]! ^ ((roc >>> 8) & 255);
      const r3 = s[11]! ^ (roc & 255);
      const q0 = s[12]! ^ (seq >>> 8);
      const q1 = s[13]! ^ (seq & 255);
      for (let k = 0, o = p * per * BLOCK; k < per; k++, o += BLOCK) {
        b[o + 8] = r0;
        b[o + 9] = r1;
        b[o + 10] = r2;
        b[o + 11] = r3;
        b[o + 12] = q0;
        b[o + 13] = q1;
      }
    }
    this.#ahead = this.#ecb.update(b.subarray(0, PACKETS * stride));
    this.#aheadSsrc = ssrc;
    this.#aheadBase = index;
  }

  // IV = (salt * 2^16) XOR (ssrc * 2^64) XOR (index * 2^16); the low 16 bits count blocks.
  #counter(o: number, ssrc: number, roc: number, seq: number, block: number): void {
    const b = this.#blocks;
    const s = this.#salt;
    b[o] = s[0]!;
    b[o + 1] = s[1]!;
    b[o + 2] = s[2]!;
    b[o + 3] = s[3]!;
    b[o + 4] = s[4]! ^ (ssrc >>> 24);
    b[o + 5] = s[5]! ^ ((ssrc >>> 16) & 255);
    b[o + 6] = s[6]! ^ ((ssrc >>> 8) & 255);
    b[o + 7] = s[7]! ^ (ssrc & 255);
    b[o + 8] = s[8]! ^ (roc >>> 24);
    b[o + 9] = s[9]! ^ ((roc >>> 16) & 255);
    b[o + 10] = s[10]! ^ ((roc >>> 8) & 255);
    b[o + 11] = s[11]! ^ (roc & 255);
    b[o + 12] = s[12]! ^ (seq >>> 8);
    b[o + 13] = s[13]! ^ (seq & 255);
    b[o + 14] = block >>> 8;
    b[o + 15] = block & 255;
  }
}
