// Base64 without padding over two alphabets: standard (A-Z a-z 0-9 + /, exactly the ICE ice-char
// set of RFC 8839) for ufrags, and URL-safe (- _) for call ids. Decoding writes into a caller's
// buffer and never allocates, so the relay can decode a hint on the hot path.

const STANDARD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

export type Base64Alphabet = "standard" | "url";

function reverseTable(alphabet: string): Int8Array {
  const t = new Int8Array(256).fill(-1);
  for (let i = 0; i < 64; i++) t[alphabet.charCodeAt(i)] = i;
  return t;
}

const DECODE: Record<Base64Alphabet, Int8Array> = {
  standard: reverseTable(STANDARD),
  url: reverseTable(URL_SAFE),
};
const ENCODE: Record<Base64Alphabet, string> = { standard: STANDARD, url: URL_SAFE };

/** Encodes bytes whose length is a multiple of 3 (every format here is sized so). */
export function encodeBase64(bytes: Uint8Array, alphabet: Base64Alphabet): string {
  if (bytes.length % 3 !== 0) throw new RangeError("encodeBase64: length must be a multiple of 3");
  const a = ENCODE[alphabet];
  let s = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    s += a[(n >> 18) & 63]! + a[(n >> 12) & 63]! + a[(n >> 6) & 63]! + a[n & 63]!;
  }
  return s;
}

/**
 * Decodes `len` ASCII bytes at `src[off..]` (length a multiple of 4) into `dst`.
 * Returns the number of bytes written, or -1 on a character outside the alphabet.
 */
export function decodeBase64Into(
  src: Uint8Array,
  off: number,
  len: number,
  dst: Uint8Array,
  alphabet: Base64Alphabet,
): number {
  if (len < 0 || len % 4 !== 0 || (len / 4) * 3 > dst.length || off < 0 || off + len > src.length) return -1;
  const t = DECODE[alphabet];
  let o = 0;
  for (let i = off; i < off + len; i += 4) {
    const a = t[src[i]!]!;
    const b = t[src[i + 1]!]!;
    const c = t[src[i + 2]!]!;
    const d = t[src[i + 3]!]!;
    if ((a | b | c | d) < 0) return -1;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    dst[o++] = n >> 16;
    dst[o++] = (n >> 8) & 255;
    dst[o++] = n & 255;
  }
  return o;
}

/** Decodes a string (ASCII) into a fresh array, or returns null. For control-plane callers. */
export function decodeBase64(text: string, alphabet: Base64Alphabet): Uint8Array | null {
  const src = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 127) return null;
    src[i] = c;
  }
  const dst = new Uint8Array((text.length / 4) * 3);
  return decodeBase64Into(src, 0, src.length, dst, alphabet) < 0 ? null : dst;
}

/** ASCII string → bytes (control plane only). */
export function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0x7f;
  return out;
}
