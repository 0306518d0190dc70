// Conference frame payloads (docs/wire-formats.md §8): shape checks for the decoder and the
// encoders/decoders of the control payloads. Offsets are into the caller's buffer; nothing here
// allocates on the media path, and no function throws on any input.
//
//   media      one backend-protocol audio frame (>= 12 bytes, byte 0 = audio frame version 1)
//   nack       u16 n (1..16), n x (u16 source slot, u16 first missing seq, u16 bitmask of the
//              16 seqs after it; bit 0 = first + 1), as RTCP generic NACK (RFC 4585 §6.2.1)
//   hello      participant id (16 bytes: the id's 16 characters after "prt_"), u16 cluster id,
//              u16 transceiver id, u8 family (4|6), u16 port (non-zero), 4|16 bytes IP, then the
//              leg id (the leg's call id "rtc_..." in its 36-byte binary form)
//   bye        u8 reason (ByeReason)
//   keepalive  the timing block (keepalive.ts: 14 bytes, RTT echo, next event seq), then (hub to leaf) a
//              roster: u8 n (0..64), n x (u16 slot, 16-byte id); the owner's client (slot 1) has
//              the id of 16 zero bytes, read as "owner"
//   event      u16 seq, u8 flags (1 more follow, 2 continuation), then 1..1100 bytes of an event's UTF-8 JSON (event.ts)

import { decodeBase64Into, encodeBase64 } from "../bytes/base64.ts";
import { CALL_ID_PATTERN, CALL_ID_PREFIX } from "../callid/callid.ts";
import { checkEvent } from "./event.ts";
import { KEEPALIVE_TIMING_BYTES } from "./keepalive.ts";

export const NACK_MAX_ENTRIES = 16;
/**
 * In a NACK entry's source slot: the EVENT stream of slot (value & 0x7fff), not its media (slots
 * are at most 255, so the bit is free).
 */
export const EVENT_STREAM_FLAG = 0x8000;
export const ROSTER_MAX_ENTRIES = 64;
export const PARTICIPANT_ID_WIRE_BYTES = 16;
/** The leg id in a hello: a call id's binary form (shared/callid). */
export const LEG_ID_WIRE_BYTES = 36;
export const HELLO_BYTES_V4 = 27 + LEG_ID_WIRE_BYTES;
export const HELLO_BYTES_V6 = 39 + LEG_ID_WIRE_BYTES;
/** The owner's client in a roster (it has no prt_ id). */
export const OWNER_PARTICIPANT_ID = "owner";
const AUDIO_FRAME_VERSION = 1;
const AUDIO_FRAME_HEADER_BYTES = 12;

export const ByeReason = { left: 1, callEnded: 2, failed: 3, removed: 4 } as const;
export type ByeReason = (typeof ByeReason)[keyof typeof ByeReason];
export const BYE_REASON_NAMES: Record<number, string> = {
  1: "left",
  2: "call_ended",
  3: "failed",
  4: "removed",
};

export interface NackEntry {
  sourceSlot: number;
  firstSeq: number;
  bitmask: number;
}
export const newNackEntries = (): NackEntry[] =>
  Array.from({ length: NACK_MAX_ENTRIES }, () => ({ sourceSlot: 0, firstSeq: 0, bitmask: 0 }));

export interface Hello {
  /** "prt_" + 16 base64url characters. */
  participantId: string;
  clusterId: number;
  transceiverId: number;
  ipv6: boolean;
  port: number;
  /** 16 bytes; IPv4 in bytes 12-15 with 0-11 zero (as the backbone frame's client IP). */
  ip: Uint8Array;
  /** The leg's call id on its transceiver ("rtc_" + 48 base64url characters). */
  legId: string;
}
export const newHello = (): Hello => ({
  participantId: "",
  clusterId: 0,
  transceiverId: 0,
  ipv6: false,
  port: 0,
  ip: new Uint8Array(16),
  legId: "",
});

export interface RosterEntry {
  slot: number;
  /** "prt_…", or "owner" for the owner's client. */
  participantId: string;
  /** The 16 wire bytes; the decoder rebuilds participantId only when they change. */
  readonly idBytes: Uint8Array;
}
export const newRosterEntries = (): RosterEntry[] =>
  Array.from({ length: ROSTER_MAX_ENTRIES }, () => ({
    slot: 0,
    participantId: "",
    idBytes: new Uint8Array(PARTICIPANT_ID_WIRE_BYTES),
  }));

const get16 = (b: Uint8Array, o: number): number => (b[o]! << 8) | b[o + 1]!;
const put16 = (b: Uint8Array, o: number, v: number): void => {
  b[o] = (v >>> 8) & 255;
  b[o + 1] = v & 255;
};
const isB64Url = (c: number): boolean =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 95;

/** 16 base64url characters, or (owner allowed) 16 zero bytes. */
function checkId(b: Uint8Array, o: number, ownerAllowed: boolean): boolean {
  let zeros = 0;
  for (let i = 0; i < PARTICIPANT_ID_WIRE_BYTES; i++) {
    const c = b[o + i]!;
    if (c === 0) zeros++;
    else if (!isB64Url(c)) return false;
  }
  return zeros === 0 || (ownerAllowed && zeros === PARTICIPANT_ID_WIRE_BYTES);
}

function readId(b: Uint8Array, o: number): string {
  if (b[o] === 0) return OWNER_PARTICIPANT_ID;
  let s = "prt_";
  for (let i = 0; i < PARTICIPANT_ID_WIRE_BYTES; i++) s += String.fromCharCode(b[o + i]!);
  return s;
}

/** Writes an id's wire form; false if it is neither "prt_"+16 base64url chars nor (owner) "owner". */
function writeId(b: Uint8Array, o: number, id: string, ownerAllowed: boolean): boolean {
  if (ownerAllowed && id === OWNER_PARTICIPANT_ID) {
    b.fill(0, o, o + PARTICIPANT_ID_WIRE_BYTES);
    return true;
  }
  if (id.length !== 4 + PARTICIPANT_ID_WIRE_BYTES || !id.startsWith("prt_")) return false;
  for (let i = 0; i < PARTICIPANT_ID_WIRE_BYTES; i++) {
    const c = id.charCodeAt(4 + i);
    if (!isB64Url(c)) return false;
    b[o + i] = c;
  }
  return true;
}

/** The decoder's shape check of `buf[off..off+len]` for a kind (1-6). */
export function checkConferencePayload(kind: number, buf: Uint8Array, off: number, len: number): boolean {
  switch (kind) {
    case 1:
      return len >= AUDIO_FRAME_HEADER_BYTES && buf[off] === AUDIO_FRAME_VERSION;
    case 2: {
      if (len < 2) return false;
      const n = get16(buf, off);
      return n >= 1 && n <= NACK_MAX_ENTRIES && len === 2 + 6 * n;
    }
    case 3: {
      if (len !== HELLO_BYTES_V4 && len !== HELLO_BYTES_V6) return false;
      const family = buf[off + 20];
      if (family !== (len === HELLO_BYTES_V4 ? 4 : 6)) return false;
      return get16(buf, off + 21) !== 0 && checkId(buf, off, false);
    }
    case 4:
      return len === 1 && buf[off]! >= ByeReason.left && buf[off]! <= ByeReason.removed;
    case 5: {
      if (len === KEEPALIVE_TIMING_BYTES) return true;
      if (len < KEEPALIVE_TIMING_BYTES + 1) return false;
      const r = off + KEEPALIVE_TIMING_BYTES;
      const n = buf[r]!;
      if (n > ROSTER_MAX_ENTRIES || len !== KEEPALIVE_TIMING_BYTES + 1 + 18 * n) return false;
      for (let i = 0; i < n; i++) if (!checkId(buf, r + 1 + 18 * i + 2, true)) return false;
      return true;
    }
    case 6:
      return checkEvent(buf, off, len);
    default:
      return false;
  }
}

/** Writes entries[0..n) at buf[off..]; returns the payload length, or -1 (n outside 1..16, no room). */
export function encodeNack(buf: Uint8Array, off: number, entries: readonly NackEntry[], n: number): number {
  const len = 2 + 6 * n;
  if (!(n >= 1 && n <= NACK_MAX_ENTRIES && n <= entries.length) || !(off >= 0) || off + len > buf.length)
    return -1;
  put16(buf, off, n);
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    put16(buf, off + 2 + 6 * i, e.sourceSlot);
    put16(buf, off + 4 + 6 * i, e.firstSeq);
    put16(buf, off + 6 + 6 * i, e.bitmask);
  }
  return len;
}

/** Reads a NACK payload into `out` (at least 16 entries); returns the count, or -1 if malformed. */
export function decodeNack(buf: Uint8Array, off: number, len: number, out: NackEntry[]): number {
  if (!(off >= 0) || off + len > buf.length || !checkConferencePayload(2, buf, off, len)) return -1;
  const n = get16(buf, off);
  if (n > out.length) return -1;
  for (let i = 0; i < n; i++) {
    const e = out[i]!;
    e.sourceSlot = get16(buf, off + 2 + 6 * i);
    e.firstSeq = get16(buf, off + 4 + 6 * i);
    e.bitmask = get16(buf, off + 6 + 6 * i);
  }
  return n;
}

/** Writes a hello; returns its length, or -1 (bad id or leg id, port 0, no room). */
export function encodeHello(buf: Uint8Array, off: number, h: Hello): number {
  const len = h.ipv6 ? HELLO_BYTES_V6 : HELLO_BYTES_V4;
  if (!(off >= 0) || off + len > buf.length || !(h.port > 0 && h.port <= 0xffff)) return -1;
  if (!CALL_ID_PATTERN.test(h.legId)) return -1;
  if (!writeId(buf, off, h.participantId, false)) return -1;
  for (let i = 0; i < h.legId.length - CALL_ID_PREFIX.length; i++)
    legText[i] = h.legId.charCodeAt(CALL_ID_PREFIX.length + i);
  if (decodeBase64Into(legText, 0, legText.length, legBytes, "url") !== LEG_ID_WIRE_BYTES) return -1;
  buf.set(legBytes, off + len - LEG_ID_WIRE_BYTES);
  put16(buf, off + 16, h.clusterId);
  put16(buf, off + 18, h.transceiverId);
  buf[off + 20] = h.ipv6 ? 6 : 4;
  put16(buf, off + 21, h.port);
  if (h.ipv6) for (let i = 0; i < 16; i++) buf[off + 23 + i] = h.ip[i]!;
  else for (let i = 0; i < 4; i++) buf[off + 23 + i] = h.ip[12 + i]!;
  return len;
}

/** Reads a hello into `out`; false if malformed. */
export function decodeHello(buf: Uint8Array, off: number, len: number, out: Hello): boolean {
  if (!(off >= 0) || off + len > buf.length || !checkConferencePayload(3, buf, off, len)) return false;
  out.participantId = readId(buf, off);
  out.clusterId = get16(buf, off + 16);
  out.transceiverId = get16(buf, off + 18);
  out.ipv6 = len === HELLO_BYTES_V6;
  out.port = get16(buf, off + 21);
  if (out.ipv6) for (let i = 0; i < 16; i++) out.ip[i] = buf[off + 23 + i]!;
  else {
    out.ip.fill(0, 0, 12);
    for (let i = 0; i < 4; i++) out.ip[12 + i] = buf[off + 23 + i]!;
  }
  const at = off + len - LEG_ID_WIRE_BYTES;
  for (let i = 0; i < LEG_ID_WIRE_BYTES; i++) legBytes[i] = buf[at + i]!;
  out.legId = CALL_ID_PREFIX + encodeBase64(legBytes, "url"); // a hello a second: not the hot path
  return true;
}

// Scratch for the leg id's two forms (hellos are encoded and decoded synchronously).
const legText = new Uint8Array(48);
const legBytes = new Uint8Array(LEG_ID_WIRE_BYTES);

/** Writes a roster (after a keepalive's timing block); returns its length, or -1 (bad id, n over 64, no room). */
export function encodeRoster(
  buf: Uint8Array,
  off: number,
  entries: readonly RosterEntry[],
  n: number,
): number {
  const len = 1 + 18 * n;
  if (!(n >= 0 && n <= ROSTER_MAX_ENTRIES && n <= entries.length) || !(off >= 0) || off + len > buf.length)
    return -1;
  buf[off] = n;
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    put16(buf, off + 1 + 18 * i, e.slot);
    if (!writeId(buf, off + 3 + 18 * i, e.participantId, true)) return -1;
  }
  return len;
}

/**
 * Reads the roster of a keepalive payload (`buf[off..off+len]`, timing block first) into `out`
 * (64 entries); returns the count, -1 if malformed or if the keepalive has no roster (a leaf's).
 */
export function decodeRoster(buf: Uint8Array, off: number, len: number, out: RosterEntry[]): number {
  if (!(off >= 0) || off + len > buf.length || !checkConferencePayload(5, buf, off, len)) return -1;
  if (len === KEEPALIVE_TIMING_BYTES) return -1;
  const r = off + KEEPALIVE_TIMING_BYTES;
  const n = buf[r]!;
  if (n > out.length) return -1;
  for (let i = 0; i < n; i++) {
    const e = out[i]!;
    const o = r + 3 + 18 * i;
    e.slot = get16(buf, o - 2);
    let same = e.participantId !== "";
    for (let k = 0; k < PARTICIPANT_ID_WIRE_BYTES; k++) {
      if (e.idBytes[k] !== buf[o + k]) same = false;
      e.idBytes[k] = buf[o + k]!;
    }
    if (!same) e.participantId = readId(buf, o);
  }
  return n;
}

/** Writes a bye; returns 1, or -1 (unknown reason, no room). */
export function encodeBye(buf: Uint8Array, off: number, reason: number): number {
  if (!(off >= 0) || off >= buf.length || !(reason >= ByeReason.left && reason <= ByeReason.removed))
    return -1;
  buf[off] = reason;
  return 1;
}

/** The bye's reason (1-4), or -1 if malformed. */
export function decodeBye(buf: Uint8Array, off: number, len: number): number {
  if (!(off >= 0) || off + len > buf.length || !checkConferencePayload(4, buf, off, len)) return -1;
  return buf[off]!;
}
