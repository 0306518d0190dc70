// The call id in `Location: /v1/realtime/calls/{id}` (docs/wire-formats.md §4). Unguessable
// (120 random bits), authenticated (128-bit HMAC-SHA256 tag), URL-safe, and it names the owning
// cluster and transceiver so the edge routes hang-up and ICE restart with no lookup.
//
//   "rtc_" + base64url(36 bytes):
//   byte 0     version (high 4) | key id (low 4)
//   bytes 1-2  cluster id
//   bytes 3-4  transceiver id
//   bytes 5-19 random (120 bits)
//   bytes 20-35 first 16 bytes of HMAC-SHA256(call-id key, bytes 0-19)
import { decodeBase64, encodeBase64 } from "../bytes/base64.ts";
import { constantTimeEqual } from "../bytes/constant-time.ts";
import type { MacSync } from "../hint/codec.ts";

export const CALL_ID_PREFIX = "rtc_";
export const CALL_ID_VERSION = 1;
export const CALL_ID_BYTES = 36;
export const CALL_ID_SIGNED_BYTES = 20;
export const CALL_ID_MAC_BYTES = 16;
export const CALL_ID_RANDOM_BYTES = 15;
export const CALL_ID_LENGTH = CALL_ID_PREFIX.length + 48;
export const CALL_ID_MAX_KEY_ID = 15;
/** The text shape alone (no MAC check): what a call id in a request must look like. */
export const CALL_ID_PATTERN = /^rtc_[A-Za-z0-9_-]{48}$/;

export interface CallIdFields {
  keyId: number;
  clusterId: number;
  transceiverId: number;
}

export type CallIdResult =
  | { ok: true; callId: CallIdFields }
  | { ok: false; reason: "malformed" | "unsupported-version" | "unknown-key" | "bad-mac" };

function signedPart(keyId: number, clusterId: number, transceiverId: number, random: Uint8Array): Uint8Array {
  for (const [v, max, name] of [
    [keyId, CALL_ID_MAX_KEY_ID, "key id"],
    [clusterId, 0xffff, "cluster id"],
    [transceiverId, 0xffff, "transceiver id"],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`call id: ${name} out of range`);
  }
  if (random.length !== CALL_ID_RANDOM_BYTES) throw new RangeError("call id: random needs 15 bytes");
  const b = new Uint8Array(CALL_ID_BYTES);
  b[0] = (CALL_ID_VERSION << 4) | keyId;
  b[1] = clusterId >> 8;
  b[2] = clusterId & 255;
  b[3] = transceiverId >> 8;
  b[4] = transceiverId & 255;
  b.set(random, 5);
  return b;
}

/** Splits and checks the layout; the MAC is checked by the caller's runtime. */
function parseLayout(
  text: string,
):
  | { ok: true; bytes: Uint8Array; fields: CallIdFields }
  | { ok: false; reason: "malformed" | "unsupported-version" } {
  if (text.length !== CALL_ID_LENGTH || !text.startsWith(CALL_ID_PREFIX))
    return { ok: false, reason: "malformed" };
  const bytes = decodeBase64(text.slice(CALL_ID_PREFIX.length), "url");
  if (!bytes || bytes.length !== CALL_ID_BYTES) return { ok: false, reason: "malformed" };
  if (bytes[0]! >> 4 !== CALL_ID_VERSION) return { ok: false, reason: "unsupported-version" };
  return {
    ok: true,
    bytes,
    fields: {
      keyId: bytes[0]! & 15,
      clusterId: (bytes[1]! << 8) | bytes[2]!,
      transceiverId: (bytes[3]! << 8) | bytes[4]!,
    },
  };
}

export function mintCallId(
  clusterId: number,
  transceiverId: number,
  random: Uint8Array,
  mac: MacSync,
): string {
  const b = signedPart(mac.activeKeyId, clusterId, transceiverId, random);
  const tag = new Uint8Array(32);
  if (!mac.sign(mac.activeKeyId, b.subarray(0, CALL_ID_SIGNED_BYTES), tag)) {
    throw new RangeError(`call id: active key id ${mac.activeKeyId} is not in the keyring`);
  }
  b.set(tag.subarray(0, CALL_ID_MAC_BYTES), CALL_ID_SIGNED_BYTES);
  return CALL_ID_PREFIX + encodeBase64(b, "url");
}

export function verifyCallId(text: string, mac: MacSync): CallIdResult {
  const p = parseLayout(text);
  if (!p.ok) return p;
  const tag = new Uint8Array(32);
  if (!mac.sign(p.fields.keyId, p.bytes.subarray(0, CALL_ID_SIGNED_BYTES), tag)) {
    return { ok: false, reason: "unknown-key" };
  }
  return constantTimeEqual(tag, 0, p.bytes, CALL_ID_SIGNED_BYTES, CALL_ID_MAC_BYTES)
    ? { ok: true, callId: p.fields }
    : { ok: false, reason: "bad-mac" };
}

/** The same check with WebCrypto keys (the edge worker). Keys from importHmacKeys(). */
export async function verifyCallIdWebCrypto(
  text: string,
  keys: Map<number, CryptoKey>,
): Promise<CallIdResult> {
  const p = parseLayout(text);
  if (!p.ok) return p;
  const key = keys.get(p.fields.keyId);
  if (!key) return { ok: false, reason: "unknown-key" };
  const tag = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, p.bytes.subarray(0, CALL_ID_SIGNED_BYTES) as BufferSource),
  );
  return constantTimeEqual(tag, 0, p.bytes, CALL_ID_SIGNED_BYTES, CALL_ID_MAC_BYTES)
    ? { ok: true, callId: p.fields }
    : { ok: false, reason: "bad-mac" };
}
