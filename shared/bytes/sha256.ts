// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) in plain TypeScript, for the relay's hot path.
// HmacSha256 hashes the key's ipad and opad blocks once (the "midstate"), so a MAC over a short
// message (a 9-byte hint, a 20-byte call id) costs two compressions and allocates nothing: about
// 3x faster than node:crypto's createHmac, whose per-call object setup dominates for tiny inputs
// (bench/wire, docs/performance.md). Only 32-bit integer arithmetic on the data, no tables indexed
// by secret bytes: the running time does not depend on the key or the message contents.
// Checked against node:crypto and WebCrypto by test/shared/sha256.test.ts.

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const IV = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

export const SHA256_BYTES = 32;
export const SHA256_BLOCK_BYTES = 64;

// Scratch shared by every caller: everything here is synchronous, so one set per isolate suffices.
const W = new Int32Array(64);
const TAIL = new Uint8Array(128);

/** One compression of the 64-byte block at `block[off..off+64]` into `state` (8 words). */
export function sha256Compress(state: Int32Array, block: Uint8Array, off: number): void {
  for (let i = 0; i < 16; i++) {
    const j = off + i * 4;
    W[i] = (block[j]! << 24) | (block[j + 1]! << 16) | (block[j + 2]! << 8) | block[j + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15]!;
    const w2 = W[i - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  let f = state[5]!;
  let g = state[6]!;
  let h = state[7]!;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
  state[5] = (state[5]! + f) | 0;
  state[6] = (state[6]! + g) | 0;
  state[7] = (state[7]! + h) | 0;
}

/**
 * Hashes `data[off..off+len]` into `state`, which already absorbed `prefixBytes` bytes (0, or 64
 * for an HMAC midstate), and pads: the state then holds the digest.
 */
function finish(state: Int32Array, data: Uint8Array, off: number, len: number, prefixBytes: number): void {
  let i = off;
  const end = off + len;
  for (; i + 64 <= end; i += 64) sha256Compress(state, data, i);
  const rest = end - i;
  TAIL.fill(0);
  for (let j = 0; j < rest; j++) TAIL[j] = data[i + j]!;
  TAIL[rest] = 0x80;
  const blocks = rest < 56 ? 1 : 2;
  const bits = (prefixBytes + len) * 8;
  const at = blocks * 64 - 8;
  const hi = Math.floor(bits / 0x100000000);
  TAIL[at] = hi >>> 24;
  TAIL[at + 1] = (hi >>> 16) & 255;
  TAIL[at + 2] = (hi >>> 8) & 255;
  TAIL[at + 3] = hi & 255;
  TAIL[at + 4] = bits >>> 24;
  TAIL[at + 5] = (bits >>> 16) & 255;
  TAIL[at + 6] = (bits >>> 8) & 255;
  TAIL[at + 7] = bits & 255;
  sha256Compress(state, TAIL, 0);
  if (blocks === 2) sha256Compress(state, TAIL, 64);
}

function writeState(state: Int32Array, out: Uint8Array, off: number): void {
  for (let i = 0; i < 8; i++) {
    const v = state[i]!;
    out[off + i * 4] = v >>> 24;
    out[off + i * 4 + 1] = (v >>> 16) & 255;
    out[off + i * 4 + 2] = (v >>> 8) & 255;
    out[off + i * 4 + 3] = v & 255;
  }
}

/** SHA-256 of `data` (control plane; allocates the result). */
export function sha256(data: Uint8Array): Uint8Array {
  const state = IV.slice();
  finish(state, data, 0, data.length, 0);
  const out = new Uint8Array(SHA256_BYTES);
  writeState(state, out, 0);
  return out;
}

/** HMAC-SHA256 under one key, with the key's inner and outer midstates computed once. Not re-entrant. */
export class HmacSha256 {
  readonly #inner = new Int32Array(8);
  readonly #outer = new Int32Array(8);
  readonly #state = new Int32Array(8);
  readonly #block = new Uint8Array(SHA256_BYTES);

  constructor(key: Uint8Array) {
    const k = key.length > SHA256_BLOCK_BYTES ? sha256(key) : key;
    const pad = new Uint8Array(SHA256_BLOCK_BYTES);
    for (let i = 0; i < SHA256_BLOCK_BYTES; i++) pad[i] = (k[i] ?? 0) ^ 0x36;
    this.#inner.set(IV);
    sha256Compress(this.#inner, pad, 0);
    for (let i = 0; i < SHA256_BLOCK_BYTES; i++) pad[i] = (k[i] ?? 0) ^ 0x5c;
    this.#outer.set(IV);
    sha256Compress(this.#outer, pad, 0);
    pad.fill(0);
  }

  /** Writes the 32-byte tag of `data[off..off+len]` into `out[outOff..outOff+32]`. Allocates nothing. */
  signInto(data: Uint8Array, off: number, len: number, out: Uint8Array, outOff: number): void {
    const s = this.#state;
    s.set(this.#inner);
    finish(s, data, off, len, SHA256_BLOCK_BYTES);
    writeState(s, this.#block, 0);
    s.set(this.#outer);
    finish(s, this.#block, 0, SHA256_BYTES, SHA256_BLOCK_BYTES);
    writeState(s, out, outOff);
  }

  /** Writes the 32-byte tag of `data` into `out[0..32]`. */
  sign(data: Uint8Array, out: Uint8Array): void {
    this.signInto(data, 0, data.length, out, 0);
  }
}
