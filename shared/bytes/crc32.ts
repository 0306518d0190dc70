// CRC-32 (IEEE 802.3, reflected 0xEDB88320), as STUN FINGERPRINT uses (RFC 8489 §14.7).
// Slicing-by-8 (eight 256-entry tables, 8 bytes per step) over Int32Array tables, so V8 keeps
// every value a 32-bit integer: about 2x the byte-at-a-time loop on a 100-byte Binding request
// (bench/wire). Checked against zlib.crc32 by test/shared/bytes.test.ts.

function makeTables(): Int32Array[] {
  const t0 = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t0[n] = c;
  }
  const tables = [t0];
  for (let t = 1; t < 8; t++) {
    const prev = tables[t - 1]!;
    const next = new Int32Array(256);
    for (let n = 0; n < 256; n++) next[n] = t0[prev[n]! & 255]! ^ (prev[n]! >>> 8);
    tables.push(next);
  }
  return tables;
}
const [T0, T1, T2, T3, T4, T5, T6, T7] = makeTables() as [
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
];

/** CRC-32 of `buf[off..off+len]` as an unsigned 32-bit number. */
export function crc32(buf: Uint8Array, off: number, len: number): number {
  let c = -1;
  let i = off;
  const end = off + len;
  while (i + 8 <= end) {
    const a = c ^ (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24));
    c =
      T7[a & 255]! ^
      T6[(a >>> 8) & 255]! ^
      T5[(a >>> 16) & 255]! ^
      T4[a >>> 24]! ^
      T3[buf[i + 4]!]! ^
      T2[buf[i + 5]!]! ^
      T1[buf[i + 6]!]! ^
      T0[buf[i + 7]!]!;
    i += 8;
  }
  while (i < end) {
    c = T0[(c ^ buf[i]!) & 255]! ^ (c >>> 8);
    i++;
  }
  return ~c >>> 0;
}
