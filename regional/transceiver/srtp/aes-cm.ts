// AES-128 in counter mode as SRTP defines it (RFC 3711 4.1.1), from one long-lived AES context.
// node:crypto cannot re-key the IV of an aes-128-ctr cipher, so werift created a cipher object per
// packet; an aes-128-ecb cipher, created once per session key, encrypts the packet's counter
// blocks instead (the keystream), which is XORed into the data. ECB over distinct counter blocks
// is exactly CTR; the output of `update` is the only per-packet allocation left.

import { type Cipheriv, createCipheriv } from "node:crypto";

const BLOCK = 16;
/** An SRTP packet cannot exceed a UDP datagram; more keystream than this is refused. */
export const MAX_KEYSTREAM_BYTES = 65536;

export class AesCm {
  readonly #ecb: Cipheriv;
  readonly #salt: Uint8Array;
  #blocks = new Uint8Array(2048);

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
    const n = (len + BLOCK - 1) >>> 4;
    const size = n * BLOCK;
    if (this.#blocks.length < size) this.#blocks = new Uint8Array(Math.max(size, this.#blocks.length * 2));
    const b = this.#blocks;
    // IV = (salt * 2^16) XOR (ssrc * 2^64) XOR (index * 2^16); the low 16 bits count blocks.
    const s = this.#salt;
    for (let i = 0; i < n; i++) {
      const o = i * BLOCK;
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
      b[o + 14] = i >>> 8;
      b[o + 15] = i & 255;
    }
    const ks = this.#ecb.update(b.subarray(0, size));
    for (let i = 0; i < len; i++) dst[dstOff + i] = src[start + i]! ^ ks[i]!;
    return true;
  }
}
