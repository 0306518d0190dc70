// The conference frame: one UDP datagram between two transceivers' conference sockets (the hub
// and a leaf), authenticated with a truncated HMAC-SHA256 under the backbone keyring
// (docs/wire-formats.md §8). Never seen by a relay: backbone frame type 6 is reserved for it.
//
//   0      magic 0x47 ('G')
//   1      version 1 (high nibble) | type 6 (low nibble) = 0x16
//   2      kind: 1 media, 2 nack, 3 hello, 4 bye, 5 keepalive, 6 event
//   3      key id (0-15) in GR_BACKBONE_KEYS
//   4-11   conference id (8 random bytes chosen by the hub)
//   12-13  source slot     14-15 destination slot     16-19 counter (u32)
//   20..   payload (kind-specific, checked by checkConferencePayload)
//   last 16 bytes: HMAC-SHA256(key, bytes 0..end of payload), first 16 bytes
import { constantTimeEqual } from "../bytes/constant-time.ts";
import type { MacSync } from "../hint/codec.ts";
import { checkConferencePayload } from "./payloads.ts";

export const CONFERENCE_MAGIC = 0x47;
export const CONFERENCE_VERSION = 1;
/** The backbone frame type number this format occupies (relays never carry it). */
export const CONFERENCE_FRAME_TYPE = 6;
export const CONFERENCE_HEADER_BYTES = 20;
export const CONFERENCE_MAC_BYTES = 16;
export const CONFERENCE_OVERHEAD_BYTES = CONFERENCE_HEADER_BYTES + CONFERENCE_MAC_BYTES;
/** Key ids are 4 bits (as the hint's); byte 3 above 15 is `unknown-key`. */
export const CONFERENCE_MAX_KEY_ID = 15;
/**
 * Largest payload: a backend audio frame at its maximum (12-byte header + 1500 bytes) fits, and
 * so does the largest roster. Typical Opus media frames are 100-200 bytes.
 */
export const CONFERENCE_MAX_PAYLOAD = 1600;
export const CONFERENCE_MAX_FRAME = CONFERENCE_OVERHEAD_BYTES + CONFERENCE_MAX_PAYLOAD;

export const ConferenceKind = { media: 1, nack: 2, hello: 3, bye: 4, keepalive: 5, event: 6 } as const;
export type ConferenceKind = (typeof ConferenceKind)[keyof typeof ConferenceKind];
export const CONFERENCE_KIND_NAMES: Record<number, string> = {
  1: "media",
  2: "nack",
  3: "hello",
  4: "bye",
  5: "keepalive",
  6: "event",
};

export type ConferenceStatus =
  | "ok"
  | "truncated"
  | "bad-magic"
  | "unsupported-version"
  | "bad-type"
  | "bad-kind"
  | "unknown-key"
  | "bad-mac"
  | "bad-payload";

/**
 * Header fields; reuse one instance per socket. The conference id is two u32 words (bytes 4-7,
 * 8-11): a receiver finds its conference with no allocation, e.g. a Map keyed by `conferenceLo`
 * (random, so a good hash) whose entry is checked against `conferenceHi`. A string key (hex)
 * would allocate per datagram; `conferenceIdHex` gives the text form for APIs and logs.
 */
export interface ConferenceHeader {
  kind: number;
  keyId: number;
  conferenceHi: number;
  conferenceLo: number;
  sourceSlot: number;
  destinationSlot: number;
  counter: number;
  /** Payload length: set by the decoder; read by the encoder when the payload is already in place. */
  payloadLength: number;
}

export function newConferenceHeader(): ConferenceHeader {
  return {
    kind: ConferenceKind.keepalive,
    keyId: 0,
    conferenceHi: 0,
    conferenceLo: 0,
    sourceSlot: 0,
    destinationSlot: 0,
    counter: 0,
    payloadLength: 0,
  };
}

const hex8 = (n: number): string => (n >>> 0).toString(16).padStart(8, "0");
/** 16 lowercase hex characters, as the participant API carries the conference id. */
export const conferenceIdHex = (h: { conferenceHi: number; conferenceLo: number }): string =>
  hex8(h.conferenceHi) + hex8(h.conferenceLo);

/** Parses 16 hex characters into the header's two words; false (header untouched) otherwise. */
export function parseConferenceIdHex(text: string, h: ConferenceHeader): boolean {
  if (!/^[0-9a-fA-F]{16}$/.test(text)) return false;
  h.conferenceHi = Number.parseInt(text.slice(0, 8), 16) >>> 0;
  h.conferenceLo = Number.parseInt(text.slice(8), 16) >>> 0;
  return true;
}

// One scratch tag: encode and decode are synchronous and never re-entered.
const tag = new Uint8Array(32);

const put16 = (b: Uint8Array, o: number, v: number): void => {
  b[o] = (v >>> 8) & 255;
  b[o + 1] = v & 255;
};
const put32 = (b: Uint8Array, o: number, v: number): void => {
  b[o] = (v >>> 24) & 255;
  b[o + 1] = (v >>> 16) & 255;
  b[o + 2] = (v >>> 8) & 255;
  b[o + 3] = v & 255;
};
const get32 = (b: Uint8Array, o: number): number =>
  ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;

/**
 * Writes a frame at `buf[off..]` and returns its end, or -1 (nothing usable written) if the kind
 * or key id is invalid, the payload is too large, or `buf` is too small. With `payload` null the
 * payload is already at `buf[off+20 .. off+20+h.payloadLength]` (the payload encoders write
 * there), which saves a copy. The MAC needs a view of the signed bytes (one subarray object: the
 * MacSync interface takes a whole array).
 */
export function encodeConferenceFrame(
  buf: Uint8Array,
  off: number,
  h: ConferenceHeader,
  payload: Uint8Array | null,
  mac: MacSync,
): number {
  const plen = payload === null ? h.payloadLength : payload.length;
  if (
    !(plen >= 0 && plen <= CONFERENCE_MAX_PAYLOAD) ||
    (plen | 0) !== plen ||
    !(off >= 0) ||
    (off | 0) !== off
  )
    return -1;
  if (h.kind < ConferenceKind.media || h.kind > ConferenceKind.event) return -1;
  if (!(h.keyId >= 0 && h.keyId <= CONFERENCE_MAX_KEY_ID)) return -1;
  const signedEnd = off + CONFERENCE_HEADER_BYTES + plen;
  const end = signedEnd + CONFERENCE_MAC_BYTES;
  if (end > buf.length) return -1;
  buf[off] = CONFERENCE_MAGIC;
  buf[off + 1] = (CONFERENCE_VERSION << 4) | CONFERENCE_FRAME_TYPE;
  buf[off + 2] = h.kind;
  buf[off + 3] = h.keyId;
  put32(buf, off + 4, h.conferenceHi);
  put32(buf, off + 8, h.conferenceLo);
  put16(buf, off + 12, h.sourceSlot);
  put16(buf, off + 14, h.destinationSlot);
  put32(buf, off + 16, h.counter);
  if (payload !== null) buf.set(payload, off + CONFERENCE_HEADER_BYTES);
  h.payloadLength = plen;
  if (!mac.sign(h.keyId, buf.subarray(off, signedEnd), tag)) return -1;
  for (let i = 0; i < CONFERENCE_MAC_BYTES; i++) buf[signedEnd + i] = tag[i]!;
  return end;
}

/**
 * Validates `buf[0..len]` and fills `h`. Order: shape (header, then the kind's payload shape, so
 * garbage costs no HMAC), then key id, then MAC in constant time. The payload is at
 * `buf[20 .. 20 + h.payloadLength]`. Replay (the counter) is the caller's: replay.ts.
 */
export function decodeConferenceFrame(
  buf: Uint8Array,
  len: number,
  h: ConferenceHeader,
  mac: MacSync,
): ConferenceStatus {
  if (!(len >= CONFERENCE_OVERHEAD_BYTES && len <= buf.length) || (len | 0) !== len) return "truncated";
  if (buf[0] !== CONFERENCE_MAGIC) return "bad-magic";
  const vt = buf[1]!;
  if (vt >> 4 !== CONFERENCE_VERSION) return "unsupported-version";
  if ((vt & 15) !== CONFERENCE_FRAME_TYPE) return "bad-type";
  const kind = buf[2]!;
  if (kind < ConferenceKind.media || kind > ConferenceKind.event) return "bad-kind";
  const plen = len - CONFERENCE_OVERHEAD_BYTES;
  if (plen > CONFERENCE_MAX_PAYLOAD) return "bad-payload";
  if (!checkConferencePayload(kind, buf, CONFERENCE_HEADER_BYTES, plen)) return "bad-payload";
  const keyId = buf[3]!;
  if (keyId > CONFERENCE_MAX_KEY_ID) return "unknown-key";
  const signedEnd = CONFERENCE_HEADER_BYTES + plen;
  if (!mac.sign(keyId, buf.subarray(0, signedEnd), tag)) return "unknown-key";
  if (!constantTimeEqual(tag, 0, buf, signedEnd, CONFERENCE_MAC_BYTES)) return "bad-mac";
  h.kind = kind;
  h.keyId = keyId;
  h.conferenceHi = get32(buf, 4);
  h.conferenceLo = get32(buf, 8);
  h.sourceSlot = (buf[12]! << 8) | buf[13]!;
  h.destinationSlot = (buf[14]! << 8) | buf[15]!;
  h.counter = get32(buf, 16);
  h.payloadLength = plen;
  return "ok";
}
