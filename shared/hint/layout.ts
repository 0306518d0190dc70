// The routing hint carried in the server's ICE ufrag (docs/wire-formats.md §1).
//
//   byte 0      : version (high 4 bits) | key id (low 4 bits)
//   bytes 1-2   : cluster id      (u16, big endian)
//   bytes 3-4   : transceiver id  (u16, big endian)
//   bytes 5-8   : random          (32 bits: makes every ufrag unique, RFC 8445 wants >= 24)
//   bytes 9-17  : MAC             (first 72 bits of HMAC-SHA256(key, bytes 0-8))
//
// 18 bytes encode to exactly 24 base64 characters (A-Za-z0-9+/), all ice-chars, within the
// 32-character sending limit of RFC 8839.

export const HINT_VERSION = 1;
export const HINT_SIGNED_BYTES = 9;
export const HINT_MAC_BYTES = 9;
export const HINT_BYTES = HINT_SIGNED_BYTES + HINT_MAC_BYTES;
export const HINT_CHARS = 24;
export const HINT_RANDOM_BYTES = 4;
export const HINT_MAX_KEY_ID = 15;

/** Decoded, verified hint fields. Reused by the caller on the hot path. */
export interface HintFields {
  version: number;
  keyId: number;
  clusterId: number;
  transceiverId: number;
  /** 32-bit random part, as an unsigned number. */
  random: number;
}

export type HintStatus = "ok" | "malformed" | "unsupported-version" | "unknown-key" | "bad-mac";

export function newHintFields(): HintFields {
  return { version: 0, keyId: 0, clusterId: 0, transceiverId: 0, random: 0 };
}

/** Writes bytes 0-8 (the signed part) into `out`. */
export function writeHintSigned(
  out: Uint8Array,
  keyId: number,
  clusterId: number,
  transceiverId: number,
  random: Uint8Array,
): void {
  if (!Number.isInteger(keyId) || keyId < 0 || keyId > HINT_MAX_KEY_ID) throw new RangeError("hint key id");
  if (!Number.isInteger(clusterId) || clusterId < 0 || clusterId > 0xffff) throw new RangeError("cluster id");
  if (!Number.isInteger(transceiverId) || transceiverId < 0 || transceiverId > 0xffff) {
    throw new RangeError("transceiver id");
  }
  if (random.length < HINT_RANDOM_BYTES) throw new RangeError("hint random needs 4 bytes");
  out[0] = (HINT_VERSION << 4) | keyId;
  out[1] = clusterId >> 8;
  out[2] = clusterId & 255;
  out[3] = transceiverId >> 8;
  out[4] = transceiverId & 255;
  out[5] = random[0]!;
  out[6] = random[1]!;
  out[7] = random[2]!;
  out[8] = random[3]!;
}

/** Reads the fields of a decoded (18-byte) hint; does not verify the MAC. */
export function readHintFields(bytes: Uint8Array, out: HintFields): void {
  out.version = bytes[0]! >> 4;
  out.keyId = bytes[0]! & 15;
  out.clusterId = (bytes[1]! << 8) | bytes[2]!;
  out.transceiverId = (bytes[3]! << 8) | bytes[4]!;
  out.random = ((bytes[5]! << 24) | (bytes[6]! << 16) | (bytes[7]! << 8) | bytes[8]!) >>> 0;
}
