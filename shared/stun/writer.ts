// Builds STUN messages (control plane: tests, benchmarks, health probes). Not on the hot path.
import { crc32 } from "../bytes/crc32.ts";
import type { HmacSha1 } from "./integrity.ts";
import { messageIntegrityInput } from "./integrity.ts";
import { STUN_HEADER_BYTES, STUN_MAGIC_COOKIE, StunAttr } from "./reader.ts";

export interface StunAttribute {
  type: number;
  value: Uint8Array;
}

export interface StunMessageInput {
  /** Full 16-bit message type, e.g. 0x0001 Binding request, 0x0101 Binding success. */
  type: number;
  transactionId: Uint8Array;
  attributes: StunAttribute[];
  /** Appends MESSAGE-INTEGRITY keyed by this (the ice-pwd, as bytes). */
  integrityKey?: Uint8Array;
  hmacSha1?: HmacSha1;
  fingerprint?: boolean;
}

export function encodeStunMessage(m: StunMessageInput): Uint8Array {
  if (m.transactionId.length !== 12) throw new RangeError("STUN transaction id must be 12 bytes");
  let size = STUN_HEADER_BYTES;
  for (const a of m.attributes) size += 4 + ((a.value.length + 3) & ~3);
  const withMi = m.integrityKey !== undefined;
  const total = size + (withMi ? 24 : 0) + (m.fingerprint ? 8 : 0);
  const buf = new Uint8Array(total);
  const dv = new DataView(buf.buffer);
  dv.setUint16(0, m.type);
  dv.setUint16(2, total - STUN_HEADER_BYTES);
  dv.setUint32(4, STUN_MAGIC_COOKIE);
  buf.set(m.transactionId, 8);
  let i = STUN_HEADER_BYTES;
  for (const a of m.attributes) {
    dv.setUint16(i, a.type);
    dv.setUint16(i + 2, a.value.length);
    buf.set(a.value, i + 4);
    i += 4 + ((a.value.length + 3) & ~3);
  }
  if (withMi) {
    if (!m.hmacSha1) throw new RangeError("MESSAGE-INTEGRITY needs an HMAC-SHA1 function");
    dv.setUint16(i, StunAttr.messageIntegrity);
    dv.setUint16(i + 2, 20);
    buf.set(m.hmacSha1(m.integrityKey!, messageIntegrityInput(buf, i)).subarray(0, 20), i + 4);
    i += 24;
  }
  if (m.fingerprint) {
    dv.setUint16(i, StunAttr.fingerprint);
    dv.setUint16(i + 2, 4);
    dv.setUint32(i + 4, (crc32(buf, 0, i) ^ 0x5354554e) >>> 0);
  }
  return buf;
}

export interface BindingRequestInput {
  transactionId: Uint8Array;
  /** "<serverUfrag>:<clientUfrag>" for a client's check. */
  username: string;
  password?: string;
  hmacSha1?: HmacSha1;
  priority?: number;
  useCandidate?: boolean;
  controlling?: boolean;
  tieBreaker?: bigint;
}

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

export function encodeBindingRequest(r: BindingRequestInput): Uint8Array {
  const attributes: StunAttribute[] = [{ type: StunAttr.username, value: ascii(r.username) }];
  const prio = new Uint8Array(4);
  new DataView(prio.buffer).setUint32(0, r.priority ?? 0x6e7f1eff);
  attributes.push({ type: StunAttr.priority, value: prio });
  if (r.useCandidate) attributes.push({ type: StunAttr.useCandidate, value: new Uint8Array(0) });
  const tb = new Uint8Array(8);
  new DataView(tb.buffer).setBigUint64(0, r.tieBreaker ?? 0x0102030405060708n);
  attributes.push({
    type: r.controlling === false ? StunAttr.iceControlled : StunAttr.iceControlling,
    value: tb,
  });
  return encodeStunMessage({
    type: 0x0001,
    transactionId: r.transactionId,
    attributes,
    ...(r.password !== undefined ? { integrityKey: ascii(r.password) } : {}),
    ...(r.hmacSha1 ? { hmacSha1: r.hmacSha1 } : {}),
    fingerprint: true,
  });
}
