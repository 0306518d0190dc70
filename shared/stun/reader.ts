// A STUN message reader for routing (RFC 8489). `isStun` is the cheap check; `readStun` walks the
// attributes with bounds checks and fills a caller-owned view with offsets into the datagram: no
// strings, no allocation, never throws, never reads past `len`.
import { crc32 } from "../bytes/crc32.ts";

export const STUN_HEADER_BYTES = 20;
export const STUN_MAGIC_COOKIE = 0x2112a442;
export const STUN_MAX_USERNAME_BYTES = 513;
export const StunAttr = {
  username: 0x0006,
  messageIntegrity: 0x0008,
  errorCode: 0x0009,
  xorMappedAddress: 0x0020,
  priority: 0x0024,
  useCandidate: 0x0025,
  fingerprint: 0x8028,
  iceControlled: 0x8029,
  iceControlling: 0x802a,
} as const;
export const StunClass = { request: 0, indication: 1, success: 2, error: 3 } as const;
export const STUN_METHOD_BINDING = 0x001;
const FINGERPRINT_XOR = 0x5354554e;

export type StunStatus =
  | "ok"
  | "not-stun"
  | "truncated"
  | "bad-length"
  | "bad-attribute"
  | "attribute-after-fingerprint"
  | "bad-fingerprint"
  | "bad-username";

/** Offsets into the datagram. -1 means absent. Reuse one per worker. */
export interface StunView {
  messageClass: number;
  method: number;
  /** Offset of the 12-byte transaction id (always 8 when ok). */
  transactionIdOffset: number;
  usernameOffset: number;
  usernameLength: number;
  /** Offset of ':' inside USERNAME, or -1. */
  colonOffset: number;
  messageIntegrityOffset: number;
  fingerprintOffset: number;
  /** True when FINGERPRINT is present (its CRC has then been checked: a bad one fails the read). */
  hasFingerprint: boolean;
  useCandidate: boolean;
}

export function newStunView(): StunView {
  return {
    messageClass: 0,
    method: 0,
    transactionIdOffset: 8,
    usernameOffset: -1,
    usernameLength: 0,
    colonOffset: -1,
    messageIntegrityOffset: -1,
    fingerprintOffset: -1,
    hasFingerprint: false,
    useCandidate: false,
  };
}

function u16(b: Uint8Array, i: number): number {
  return (b[i]! << 8) | b[i + 1]!;
}

function u32(b: Uint8Array, i: number): number {
  return ((b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!) >>> 0;
}

/** Cheap check: size, top two bits zero, length a multiple of 4 that fits, magic cookie. */
export function isStun(buf: Uint8Array, len: number): boolean {
  if (len < STUN_HEADER_BYTES || len > buf.length || (buf[0]! & 0xc0) !== 0) return false;
  const bodyLength = u16(buf, 2);
  return (
    (bodyLength & 3) === 0 && bodyLength + STUN_HEADER_BYTES === len && u32(buf, 4) === STUN_MAGIC_COOKIE
  );
}

export function readStun(buf: Uint8Array, len: number, view: StunView): StunStatus {
  view.usernameOffset = -1;
  view.usernameLength = 0;
  view.colonOffset = -1;
  view.messageIntegrityOffset = -1;
  view.fingerprintOffset = -1;
  view.hasFingerprint = false;
  view.useCandidate = false;
  if (len > buf.length) len = buf.length;
  if (len < STUN_HEADER_BYTES) return len > 0 && (buf[0]! & 0xc0) === 0 ? "truncated" : "not-stun";
  if ((buf[0]! & 0xc0) !== 0 || u32(buf, 4) !== STUN_MAGIC_COOKIE) return "not-stun";
  const bodyLength = u16(buf, 2);
  if ((bodyLength & 3) !== 0) return "bad-length";
  if (bodyLength + STUN_HEADER_BYTES > len) return "truncated";
  if (bodyLength + STUN_HEADER_BYTES < len) return "bad-length";
  const type = u16(buf, 0);
  // Class bits are C1 at bit 8 and C0 at bit 4; the method is the other 12 bits (RFC 8489 §5).
  view.messageClass = ((type >> 7) & 2) | ((type >> 4) & 1);
  view.method = (type & 0x000f) | ((type >> 1) & 0x0070) | ((type >> 2) & 0x0f80);
  view.transactionIdOffset = 8;

  let i = STUN_HEADER_BYTES;
  while (i < len) {
    if (i + 4 > len) return "bad-attribute";
    const attrType = u16(buf, i);
    const attrLen = u16(buf, i + 2);
    const valueOff = i + 4;
    if (valueOff + attrLen > len) return "bad-attribute";
    if (view.fingerprintOffset >= 0) return "attribute-after-fingerprint";
    // RFC 8489 §14.5: everything after MESSAGE-INTEGRITY except FINGERPRINT is not covered by it
    // and MUST be ignored (a USERNAME there must not route a flow).
    if (view.messageIntegrityOffset >= 0 && attrType !== StunAttr.fingerprint) {
      i = valueOff + ((attrLen + 3) & ~3);
      continue;
    }
    switch (attrType) {
      case StunAttr.username: {
        if (view.usernameOffset >= 0) break; // RFC 8489: only the first occurrence counts.
        if (attrLen === 0 || attrLen > STUN_MAX_USERNAME_BYTES) return "bad-username";
        view.usernameOffset = valueOff;
        view.usernameLength = attrLen;
        for (let j = valueOff; j < valueOff + attrLen; j++) {
          if (buf[j] === 0x3a) {
            view.colonOffset = j;
            break;
          }
        }
        break;
      }
      case StunAttr.messageIntegrity:
        if (attrLen !== 20) return "bad-attribute";
        if (view.messageIntegrityOffset < 0) view.messageIntegrityOffset = i;
        break;
      case StunAttr.useCandidate:
        view.useCandidate = true;
        break;
      case StunAttr.fingerprint: {
        if (attrLen !== 4) return "bad-attribute";
        // CRC over the message up to (not including) this attribute, with the header length
        // already covering the FINGERPRINT attribute, which holds when it is last.
        if (valueOff + 4 !== len) return "attribute-after-fingerprint";
        const expected = (crc32(buf, 0, i) ^ FINGERPRINT_XOR) >>> 0;
        if (u32(buf, valueOff) !== expected) return "bad-fingerprint";
        view.fingerprintOffset = i;
        view.hasFingerprint = true;
        break;
      }
      default:
        break;
    }
    i = valueOff + ((attrLen + 3) & ~3);
  }
  if (i !== len) return "bad-attribute";
  return "ok";
}

/** True for a Binding request that was read "ok". */
export function isBindingRequest(view: StunView): boolean {
  return view.method === STUN_METHOD_BINDING && view.messageClass === StunClass.request;
}
