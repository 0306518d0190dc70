// Shared backend connections (docs/backend-protocol.md, "Shared connections"): many calls on one
// WebSocket, so a turn of the event loop costs one message per connection instead of one per
// call. Negotiated: the transceiver's upgrade carries x-gr-shared: 1 and no x-gr-call-id; a
// backend that agrees answers x-gr-shared: 1 in its 101. Every message on such a connection is
// binary:
//   0      version (3)
//   1-     records, to the end of the message, each:
//          0      kind: 1 open, 2 event, 3 audio, 4 close
//          1-4    channel (u32, big endian, never 0): the call on this connection
//          5-8    body length L (u32, big endian)
//          9-     L bytes of body:
//                 open   UTF-8 JSON {"call_id":"rtc_…"} (transceiver → backend, first for a channel)
//                 event  one JSON event, UTF-8 (both ways), at most 256 KiB
//                 audio  one audio frame (backend-protocol.ts: 12-byte header + payload)
//                 close  u16 close code, then a UTF-8 reason of at most 123 bytes (both ways)
// Pure: no sockets, no clocks.
import {
  AUDIO_FRAME_HEADER_BYTES,
  AUDIO_FRAME_MAX_PAYLOAD,
  AudioCodec,
  type AudioFrameHeader,
  MAX_EVENT_BYTES,
  readAudioFrameAt,
  writeAudioFrameHeader,
} from "./backend-protocol.ts";

/** Request header (transceiver) and 101 response header (backend) that agree on a shared connection. */
export const SHARED_HEADER = "x-gr-shared";
export const SHARED_VERSION = 3;
export const SharedKind = { open: 1, event: 2, audio: 3, close: 4 } as const;
export type SharedKind = (typeof SharedKind)[keyof typeof SharedKind];
export const SHARED_RECORD_HEADER_BYTES = 9;
/** Largest event body (the same bound as a text message on a per-call connection). */
export const SHARED_MAX_EVENT_BYTES = MAX_EVENT_BYTES;
export const SHARED_MAX_OPEN_BYTES = 1024;
/** A WebSocket close reason is at most 123 bytes. */
export const SHARED_MAX_CLOSE_REASON = 123;
/** Largest message either side sends or accepts: one largest event plus room for audio. */
export const SHARED_MAX_MESSAGE_BYTES = 1024 * 1024;

const MAX_BODY: Record<number, number> = {
  [SharedKind.open]: SHARED_MAX_OPEN_BYTES,
  [SharedKind.event]: SHARED_MAX_EVENT_BYTES,
  [SharedKind.audio]: AUDIO_FRAME_HEADER_BYTES + AUDIO_FRAME_MAX_PAYLOAD,
  [SharedKind.close]: 2 + SHARED_MAX_CLOSE_REASON,
};
const SCRATCH: AudioFrameHeader = { codec: 0, flags: 0, sequenceNumber: 0, timestamp: 0, participant: 0 };
const MIN_BODY: Record<number, number> = {
  [SharedKind.open]: 2,
  [SharedKind.event]: 1,
  [SharedKind.audio]: AUDIO_FRAME_HEADER_BYTES,
  [SharedKind.close]: 2,
};

// An encoder never writes a record the reader would refuse: one bad record costs the peer the
// rest of the message, other calls' records included.
const validChannel = (c: number): boolean => Number.isInteger(c) && c >= 1 && c <= 0xffff_ffff;

/** Starts a message: writes the version byte, returns the offset of the first record. */
export function startSharedMessage(buf: Uint8Array): number {
  buf[0] = SHARED_VERSION;
  return 1;
}

function writeRecordHeader(buf: Uint8Array, off: number, kind: number, channel: number, len: number): void {
  buf[off] = kind;
  writeU32(buf, off + 1, channel);
  writeU32(buf, off + 5, len);
}

function writeU32(buf: Uint8Array, off: number, v: number): void {
  buf[off] = v >>> 24;
  buf[off + 1] = (v >>> 16) & 0xff;
  buf[off + 2] = (v >>> 8) & 0xff;
  buf[off + 3] = v & 0xff;
}

function readU32(buf: Uint8Array, off: number): number {
  return ((buf[off]! << 24) | (buf[off + 1]! << 16) | (buf[off + 2]! << 8) | buf[off + 3]!) >>> 0;
}

/** Bytes an audio record takes. */
export const sharedAudioBytes = (payloadLength: number): number =>
  SHARED_RECORD_HEADER_BYTES + AUDIO_FRAME_HEADER_BYTES + payloadLength;

/**
 * Appends one audio record at buf[off..]; returns the new end, or -1 when it does not fit or the
 * payload is too large.
 */
export function appendSharedAudio(
  buf: Uint8Array,
  off: number,
  channel: number,
  h: AudioFrameHeader,
  payload: Uint8Array,
): number {
  const end = off + sharedAudioBytes(payload.length);
  if (payload.length > AUDIO_FRAME_MAX_PAYLOAD || end > buf.length || !validChannel(channel)) return -1;
  if (h.codec !== AudioCodec.opus && h.codec !== AudioCodec.pcmu) return -1;
  writeRecordHeader(buf, off, SharedKind.audio, channel, AUDIO_FRAME_HEADER_BYTES + payload.length);
  writeAudioFrameHeader(buf, h, off + SHARED_RECORD_HEADER_BYTES);
  buf.set(payload, off + SHARED_RECORD_HEADER_BYTES + AUDIO_FRAME_HEADER_BYTES);
  return end;
}

/** Appends a record whose body is already encoded (e.g. an audio frame echoed as it came); -1 if it does not fit. */
export function appendSharedRecord(
  buf: Uint8Array,
  off: number,
  kind: SharedKind,
  channel: number,
  body: Uint8Array,
): number {
  const end = off + SHARED_RECORD_HEADER_BYTES + body.length;
  const max = MAX_BODY[kind];
  if (max === undefined || end > buf.length || body.length > max || body.length < MIN_BODY[kind]!) return -1;
  if (!validChannel(channel)) return -1;
  if (kind === SharedKind.audio && readAudioFrameAt(body, 0, body.length, SCRATCH) !== "ok") return -1;
  writeRecordHeader(buf, off, kind, channel, body.length);
  buf.set(body, off + SHARED_RECORD_HEADER_BYTES);
  return end;
}

/** Bytes a text record (open, event) takes: `utf8Bytes` is its body's UTF-8 length. */
export const sharedTextBytes = (utf8Bytes: number): number => SHARED_RECORD_HEADER_BYTES + utf8Bytes;

/**
 * Appends an open or event record whose body is `text` in UTF-8 (`utf8Bytes` =
 * Buffer.byteLength(text), known to the caller); -1 when it does not fit or is too large.
 */
export function appendSharedText(
  buf: Buffer,
  off: number,
  kind: typeof SharedKind.open | typeof SharedKind.event,
  channel: number,
  text: string,
  utf8Bytes: number,
): number {
  const end = off + sharedTextBytes(utf8Bytes);
  if (end > buf.length || utf8Bytes > MAX_BODY[kind]! || utf8Bytes < MIN_BODY[kind]!) return -1;
  if (!validChannel(channel)) return -1;
  writeRecordHeader(buf, off, kind, channel, utf8Bytes);
  buf.write(text, off + SHARED_RECORD_HEADER_BYTES, utf8Bytes, "utf8");
  return end;
}

/** Appends a close record; the reason is cut to 123 bytes of UTF-8 (at a character boundary). */
export function appendSharedClose(
  buf: Buffer,
  off: number,
  channel: number,
  code: number,
  reason: string,
): number {
  const r = Buffer.from(reason, "utf8");
  let n = Math.min(r.length, SHARED_MAX_CLOSE_REASON);
  while (n > 0 && n < r.length && (r[n]! & 0xc0) === 0x80) n--;
  const end = off + SHARED_RECORD_HEADER_BYTES + 2 + n;
  if (end > buf.length || !validChannel(channel)) return -1;
  writeRecordHeader(buf, off, SharedKind.close, channel, 2 + n);
  buf[off + SHARED_RECORD_HEADER_BYTES] = (code >>> 8) & 0xff;
  buf[off + SHARED_RECORD_HEADER_BYTES + 1] = code & 0xff;
  r.copy(buf, off + SHARED_RECORD_HEADER_BYTES + 2, 0, n);
  return end;
}

/** Every status the reader answers (tests and the fuzzer check that nothing else comes back). */
export const SHARED_STATUSES = [
  "ok",
  "truncated",
  "bad-version",
  "bad-kind",
  "bad-channel",
  "bad-length",
  "bad-frame",
] as const;
export type SharedStatus = (typeof SHARED_STATUSES)[number];

/**
 * Walks a shared message record by record without allocating: `start(buf)`, then `next()` until it
 * returns "end". After "ok": `kind`, `channel`, the body at `buf[bodyStart..bodyEnd]`; for an audio
 * record `frame` holds its header (payload at `bodyStart + 12`), for a close record `code` its code.
 * Any error ends the walk: records before it were already handed out, none after.
 */
export class SharedMessageReader {
  kind: SharedKind = SharedKind.open;
  channel = 0;
  bodyStart = 0;
  bodyEnd = 0;
  code = 0;
  readonly frame: AudioFrameHeader = { codec: 0, flags: 0, sequenceNumber: 0, timestamp: 0, participant: 0 };
  #buf: Uint8Array = new Uint8Array(0);
  #off = -1;

  start(buf: Uint8Array): SharedStatus {
    this.#buf = buf;
    this.#off = -1;
    if (buf.length < 1 + SHARED_RECORD_HEADER_BYTES) return "truncated";
    if (buf[0] !== SHARED_VERSION) return "bad-version";
    this.#off = 1;
    return "ok";
  }

  next(): SharedStatus | "end" {
    const b = this.#buf;
    const off = this.#off;
    if (off < 0) return "end";
    if (off === b.length) return this.#stop("end");
    if (off + SHARED_RECORD_HEADER_BYTES > b.length) return this.#stop("truncated");
    const kind = b[off]!;
    const max = MAX_BODY[kind];
    if (max === undefined) return this.#stop("bad-kind");
    const channel = readU32(b, off + 1);
    if (channel === 0) return this.#stop("bad-channel");
    const len = readU32(b, off + 5);
    const at = off + SHARED_RECORD_HEADER_BYTES;
    if (len < MIN_BODY[kind]! || len > max || at + len > b.length) return this.#stop("bad-length");
    if (kind === SharedKind.audio) {
      if (readAudioFrameAt(b, at, len, this.frame) !== "ok") return this.#stop("bad-frame");
    } else if (kind === SharedKind.close) {
      this.code = (b[at]! << 8) | b[at + 1]!;
    }
    this.kind = kind as SharedKind;
    this.channel = channel;
    this.bodyStart = at;
    this.bodyEnd = at + len;
    this.#off = at + len;
    return "ok";
  }

  #stop<S extends SharedStatus | "end">(s: S): S {
    this.#off = -1;
    return s;
  }
}
