// HMAC-SHA1 (RFC 2104, FIPS 180-4) with the key's inner and outer midstates computed once, for
// SRTP/SRTCP authentication (RFC 3711 4.2). node:crypto's createHmac builds an object and a key
// schedule per call, which dominated werift's per-packet cost; here a tag over a 170-byte audio
// packet is four compressions and allocates nothing. Only 32-bit integer arithmetic, no tables
// indexed by data: the running time does not depend on the key or the message contents.
// Checked against node:crypto and the RFC 2202 vectors by test/transceiver/srtp.test.ts.

import { compress } from "./sha1-compress.ts";

const IV = new Int32Array([0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0]);
const BLOCK = 64;
const DIGEST = 20;

function writeState(state: Int32Array, out: Uint8Array, off: number, len: number): void {
  for (let i = 0; i < len; i++) out[off + i] = (state[i >> 2]! >>> (24 - (i & 3) * 8)) & 255;
}

/**
 * Streaming HMAC-SHA1 under one key: `begin()`, any number of `update`s, then `finishInto`.
 * Not re-entrant (one instance per SRTP context and direction).
 */
export class HmacSha1 {
  readonly #inner = new Int32Array(5);
  readonly #outer = new Int32Array(5);
  readonly #state = new Int32Array(5);
  readonly #buf = new Uint8Array(BLOCK);
  // The outer hash's one block: the inner digest, then SHA-1 padding for 64 + 20 bytes, fixed.
  readonly #outerBlock = new Uint8Array(BLOCK);
  #fill = 0;
  #total = 0;

  constructor(key: Uint8Array) {
    const pad = new Uint8Array(BLOCK);
    let k: Uint8Array = key;
    if (key.length > BLOCK) {
      this.#state.set(IV);
      this.#total = 0;
      this.#fill = 0;
      this.#absorb(key, 0, key.length);
      k = new Uint8Array(DIGEST);
      this.#pad();
      writeState(this.#state, k, 0, DIGEST);
    }
    for (let i = 0; i < BLOCK; i++) pad[i] = (k[i] ?? 0) ^ 0x36;
    this.#inner.set(IV);
    compress(this.#inner, pad, 0);
    for (let i = 0; i < BLOCK; i++) pad[i] = (k[i] ?? 0) ^ 0x5c;
    this.#outer.set(IV);
    compress(this.#outer, pad, 0);
    pad.fill(0);
    const ob = this.#outerBlock;
    ob[DIGEST] = 0x80;
    ob[62] = ((BLOCK + DIGEST) * 8) >>> 8;
    ob[63] = ((BLOCK + DIGEST) * 8) & 255;
    this.begin();
  }

  begin(): void {
    this.#state.set(this.#inner);
    this.#fill = 0;
    this.#total = BLOCK;
  }

  update(data: Uint8Array, start: number, end: number): void {
    this.#absorb(data, start, end);
  }

  /** Absorbs a big-endian 32-bit word (the SRTP rollover counter). */
  updateUint32(v: number): void {
    const b = this.#buf;
    for (let s = 24; s >= 0; s -= 8) {
      b[this.#fill++] = (v >>> s) & 255;
      this.#total++;
      if (this.#fill === BLOCK) {
        compress(this.#state, b, 0);
        this.#fill = 0;
      }
    }
  }

  /** Writes the first `len` (<= 20) bytes of the tag into `out[off..]` and starts a new message. */
  finishInto(out: Uint8Array, off: number, len: number): void {
    this.#pad();
    const ob = this.#outerBlock;
    writeState(this.#state, ob, 0, DIGEST);
    this.#state.set(this.#outer);
    compress(this.#state, ob, 0);
    writeState(this.#state, out, off, len);
    this.begin();
  }

  #absorb(data: Uint8Array, start: number, end: number): void {
    const b = this.#buf;
    let i = start;
    this.#total += end - start;
    if (this.#fill > 0) {
      while (i < end && this.#fill < BLOCK) b[this.#fill++] = data[i++]!;
      if (this.#fill < BLOCK) return;
      compress(this.#state, b, 0);
      this.#fill = 0;
    }
    for (; i + BLOCK <= end; i += BLOCK) compress(this.#state, data, i);
    while (i < end) b[this.#fill++] = data[i++]!;
  }

  // Appends the SHA-1 padding for `#total` bytes and compresses the last block(s).
  #pad(): void {
    const b = this.#buf;
    const bits = this.#total * 8;
    b[this.#fill++] = 0x80;
    if (this.#fill > BLOCK - 8) {
      b.fill(0, this.#fill);
      compress(this.#state, b, 0);
      this.#fill = 0;
    }
    b.fill(0, this.#fill, BLOCK - 8);
    const hi = Math.floor(bits / 0x100000000);
    b[56] = hi >>> 24;
    b[57] = (hi >>> 16) & 255;
    b[58] = (hi >>> 8) & 255;
    b[59] = hi & 255;
    b[60] = bits >>> 24;
    b[61] = (bits >>> 16) & 255;
    b[62] = (bits >>> 8) & 255;
    b[63] = bits & 255;
    compress(this.#state, b, 0);
    this.#fill = 0;
  }
}
