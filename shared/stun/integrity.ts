// MESSAGE-INTEGRITY (RFC 8489 §14.5): HMAC-SHA1 keyed by the ice-pwd over the message up to the
// attribute, with the header length rewritten to end just after it. The HMAC comes in as a
// function so this file stays runtime-neutral.
import { constantTimeEqual } from "../bytes/constant-time.ts";
import { STUN_HEADER_BYTES, type StunView } from "./reader.ts";

export type HmacSha1 = (key: Uint8Array, data: Uint8Array) => Uint8Array;

export function messageIntegrityInput(buf: Uint8Array, miOffset: number): Uint8Array {
  // A copy: Buffer#slice would share memory and the length rewrite below would corrupt the caller's message.
  const input = new Uint8Array(miOffset);
  input.set(buf.subarray(0, miOffset));
  const lengthUpToMi = miOffset + 24 - STUN_HEADER_BYTES;
  input[2] = lengthUpToMi >> 8;
  input[3] = lengthUpToMi & 255;
  return input;
}

/** Verifies MESSAGE-INTEGRITY of a message read "ok" by readStun. False when absent. */
export function verifyMessageIntegrity(
  buf: Uint8Array,
  view: StunView,
  key: Uint8Array,
  hmac: HmacSha1,
): boolean {
  const mi = view.messageIntegrityOffset;
  if (mi < 0 || mi + 24 > buf.length) return false;
  const tag = hmac(key, messageIntegrityInput(buf, mi));
  return constantTimeEqual(tag, 0, buf, mi + 4, 20);
}
