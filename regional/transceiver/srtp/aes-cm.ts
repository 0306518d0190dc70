// AES-128 in counter mode as SRTP defines it (RFC 3711 4.1.1), from one long-lived AES context.
// node:crypto cannot re-key the IV of an aes-128-ctr cipher, so werift created a cipher object per
// packet; an aes-128-ecb cipher, created once per session key, encrypts the packet's counter
// blocks instead (the keystream), which is XORed into the data. ECB over distinct counter blocks
// is exactly CTR. Packets arrive and leave mostly in index order, so the keystream of the next
// PACKETS indices is made in one `update` (for payloads up to PACKET_BYTES): one call into
// node:crypto, and one allocation, per PACKETS packets instead of per packet.

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
  // The keystream made ahead: indices base..base+PACKETS-1 of ssrc (base -1: none).
  #ahead: Buffer | undefined;
  #aheadSsrc = 0;
  #aheadBase = -1;

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
      if (base < 0 || ssrc !== this.#aheadSsrc || index < base || index >= base + PACKETS) {
        this.#makeAhead(ssrc, index);
      }
      ks = this.#ahead!;
      at = (index - this.#aheadBase) * PACKET_BYTES;
    } else {
      const n = (len + BLOCK - 1) >>> 4;
      if (this.#blocks.length < n * BLOCK) this.#blocks = new Uint8Array(n * BLOCK);
      for (let i = 0; i < n; i++) this.#counter(i * BLOCK, ssrc, roc, seq, i);
      ks = this.#ecb.update(this.#blocks.subarray(0, n * BLOCK));
    }
    for (let i = 0; i < len; i++) dst[dstOff + i] = src[start + i]! ^ ks[at + i]!;
    return true;
  }

  #makeAhead(ssrc: number, index: number): void {
    const per = PACKET_BYTES / BLOCK;
    for (let p = 0; p < PACKETS; p++) {
      const i = index + p;
      const roc = Math.floor(i / 65536) >>> 0;
      const seq = i & 0xffff;
      for (let b = 0; b < per; b++) this.#counter((p * per + b) * BLOCK, ssrc, roc, seq, b);
    }
    this.#ahead = this.#ecb.update(this.#blocks.subarray(0, PACKETS * PACKET_BYTES));
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
