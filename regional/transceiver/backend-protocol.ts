// The transceiver ↔ backend protocol (docs/backend-protocol.md). One WebSocket per session.
// Binary messages are audio frames, text messages are JSON events.
//
// Audio frame = 12-byte header + codec payload (one RTP payload: an Opus packet or PCMU bytes):
//   0      version (1)
//   1      codec: 1 = Opus 48 kHz, 2 = PCMU 8 kHz
//   2      flags: bit 0 = RTP marker (start of a talk spurt)
//   3      participant slot (u8): to the backend whose audio (1 = the call's own client, k = joiner
//          k); from the backend who hears it (0 = everyone, k = only participant k)
//   4-5    RTP sequence number (u16, big endian)
//   6-9    RTP timestamp (u32, big endian; codec clock: 48000 Hz Opus, 8000 Hz PCMU)
//   10-11  reserved (0)
//   12-    payload
// Audio batch (only when negotiated: request and 101 response both carry x-gr-audio-batch: 1):
//   0      version (2)
//   1      frame count n (1..AUDIO_BATCH_MAX_FRAMES)
//   2-     n times: u16 frame length L, then L bytes of one audio frame as above
// Pure: no sockets, no clocks.

export const AUDIO_FRAME_VERSION = 1;
export const AUDIO_FRAME_HEADER_BYTES = 12;
/** Largest event (a text message, or an event record on a shared connection) either way. */
export const MAX_EVENT_BYTES = 256 * 1024;
/** Largest payload accepted either way (an Opus packet is at most 1275 bytes; PCMU 20 ms is 160). */
export const AUDIO_FRAME_MAX_PAYLOAD = 1500;

export const AudioCodec = { opus: 1, pcmu: 2 } as const;
export type AudioCodec = (typeof AudioCodec)[keyof typeof AudioCodec];
export const AUDIO_CODEC_NAMES: Record<number, string> = { 1: "opus", 2: "pcmu" };
export const AudioFlags = { marker: 1 } as const;

export interface AudioFrameHeader {
  codec: number;
  flags: number;
  sequenceNumber: number;
  timestamp: number;
  /** Byte 3: the participant slot (0 when absent: "everyone" from the backend). */
  participant?: number;
}

/** Slot of the call's own client (the owner) in the conference and in byte 3. */
export const OWNER_SLOT = 1;
/** Byte 3 is one byte: a call never gives out a slot above this (docs/backend-protocol.md). */
export const MAX_PARTICIPANT_SLOT = 255;

export function newAudioFrameHeader(): AudioFrameHeader {
  return { codec: 0, flags: 0, sequenceNumber: 0, timestamp: 0, participant: 0 };
}

/** Writes the header into buf[off..off+12]. */
export function writeAudioFrameHeader(buf: Uint8Array, h: AudioFrameHeader, off = 0): void {
  buf[off] = AUDIO_FRAME_VERSION;
  buf[off + 1] = h.codec;
  buf[off + 2] = h.flags & 0xff;
  buf[off + 3] = (h.participant ?? 0) & 0xff;
  buf[off + 4] = (h.sequenceNumber >> 8) & 0xff;
  buf[off + 5] = h.sequenceNumber & 0xff;
  const ts = h.timestamp >>> 0;
  buf[off + 6] = ts >>> 24;
  buf[off + 7] = (ts >>> 16) & 0xff;
  buf[off + 8] = (ts >>> 8) & 0xff;
  buf[off + 9] = ts & 0xff;
  buf[off + 10] = 0;
  buf[off + 11] = 0;
}

/** Builds a whole frame (header + payload) in one new buffer. */
export function encodeAudioFrame(h: AudioFrameHeader, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(AUDIO_FRAME_HEADER_BYTES + payload.length);
  writeAudioFrameHeader(out, h);
  out.set(payload, AUDIO_FRAME_HEADER_BYTES);
  return out;
}

export type AudioFrameStatus = "ok" | "truncated" | "bad-version" | "bad-codec" | "too-large";

/** Reads the header of buf (a whole message); the payload is buf.subarray(12). Never throws. */
export function readAudioFrameHeader(buf: Uint8Array, h: AudioFrameHeader): AudioFrameStatus {
  return readAudioFrameAt(buf, 0, buf.length, h);
}

/** Reads the frame at buf[off..off+len] (off + len <= buf.length, checked by the caller). */
export function readAudioFrameAt(
  buf: Uint8Array,
  off: number,
  len: number,
  h: AudioFrameHeader,
): AudioFrameStatus {
  if (len < AUDIO_FRAME_HEADER_BYTES) return "truncated";
  if (buf[off] !== AUDIO_FRAME_VERSION) return "bad-version";
  const codec = buf[off + 1]!;
  if (codec !== AudioCodec.opus && codec !== AudioCodec.pcmu) return "bad-codec";
  if (len - AUDIO_FRAME_HEADER_BYTES > AUDIO_FRAME_MAX_PAYLOAD) return "too-large";
  h.codec = codec;
  h.flags = buf[off + 2]!;
  h.participant = buf[off + 3]!;
  h.sequenceNumber = (buf[off + 4]! << 8) | buf[off + 5]!;
  h.timestamp = ((buf[off + 6]! << 24) | (buf[off + 7]! << 16) | (buf[off + 8]! << 8) | buf[off + 9]!) >>> 0;
  return "ok";
}

/**
 * The upgrade request's identity headers: which cluster and transceiver are asking, and for a
 * connection of one call's own, which call (a shared connection is no one call's).
 */
export function backendHeaders(
  clusterId: number,
  transceiverId: number,
  callId?: string,
): Record<string, string> {
  const h: Record<string, string> = {
    "x-gr-cluster-id": String(clusterId),
    "x-gr-transceiver-id": String(transceiverId),
  };
  if (callId !== undefined) h["x-gr-call-id"] = callId;
  return h;
}

export const AUDIO_BATCH_VERSION = 2;
/** Request header (transceiver) and 101 response header (backend) that agree on batches. */
export const AUDIO_BATCH_HEADER = "x-gr-audio-batch";
export const AUDIO_BATCH_MAX_FRAMES = 64;

/**
 * Appends one frame (length prefix, header, payload) at `buf[off..]`; returns the new end, or -1
 * when it does not fit or the payload is too large. Batch bytes 0-1 are written by `sealAudioBatch`.
 */
export function appendAudioFrame(
  buf: Uint8Array,
  off: number,
  h: AudioFrameHeader,
  payload: Uint8Array,
): number {
  const len = AUDIO_FRAME_HEADER_BYTES + payload.length;
  if (payload.length > AUDIO_FRAME_MAX_PAYLOAD || off + 2 + len > buf.length) return -1;
  buf[off] = len >>> 8;
  buf[off + 1] = len & 0xff;
  writeAudioFrameHeader(buf, h, off + 2);
  buf.set(payload, off + 2 + AUDIO_FRAME_HEADER_BYTES);
  return off + 2 + len;
}

/** Writes the batch header for `count` frames into buf[0..2]. */
export function sealAudioBatch(buf: Uint8Array, count: number): void {
  buf[0] = AUDIO_BATCH_VERSION;
  buf[1] = count;
}

export type AudioBatchStatus = AudioFrameStatus | "bad-count" | "bad-length";

/**
 * Walks a batch message frame by frame without allocating: `start(buf)`, then `next(h)` until it
 * returns "end"; after "ok", the payload is `buf[payloadStart..payloadEnd]`. Any error ends the
 * walk (the whole message is bad: frames before it were already handed out, none after).
 */
export class AudioBatchReader {
  payloadStart = 0;
  payloadEnd = 0;
  #buf: Uint8Array = new Uint8Array(0);
  #off = 0;
  #left = 0;

  /** "ok" if `buf` has a batch header with a frame count in range. */
  start(buf: Uint8Array): AudioBatchStatus {
    this.#buf = buf;
    this.#off = 2;
    this.#left = 0;
    if (buf.length < 2) return "truncated";
    if (buf[0] !== AUDIO_BATCH_VERSION) return "bad-version";
    const n = buf[1]!;
    if (n === 0 || n > AUDIO_BATCH_MAX_FRAMES) return "bad-count";
    this.#left = n;
    return "ok";
  }

  next(h: AudioFrameHeader): AudioBatchStatus | "end" {
    const b = this.#buf;
    if (this.#left === 0) return this.#off === b.length ? "end" : "bad-length";
    const off = this.#off;
    if (off + 2 > b.length) return this.#stop("truncated");
    const len = (b[off]! << 8) | b[off + 1]!;
    const at = off + 2;
    if (len < AUDIO_FRAME_HEADER_BYTES || at + len > b.length) return this.#stop("bad-length");
    const status = readAudioFrameAt(b, at, len, h);
    if (status !== "ok") return this.#stop(status);
    this.payloadStart = at + AUDIO_FRAME_HEADER_BYTES;
    this.payloadEnd = at + len;
    this.#off = at + len;
    this.#left--;
    return "ok";
  }

  #stop(s: AudioBatchStatus): AudioBatchStatus {
    this.#left = 0;
    this.#off = -1;
    return s;
  }
}

/** Codec of an SDP rtpmap encoding name, or 0 if the backend protocol does not carry it. */
export function codecOfMime(mimeType: string): number {
  const m = mimeType.toLowerCase();
  if (m === "audio/opus") return AudioCodec.opus;
  if (m === "audio/pcmu") return AudioCodec.pcmu;
  return 0;
}

/** Event types the bridge itself sends to the backend. */
export const BridgeEvent = {
  started: "session.started",
  ended: "session.ended",
  participantJoined: "participant.joined",
  participantLeft: "participant.left",
} as const;

/** Why a participant left (participant.left `reason`). */
export type ParticipantLeftReason =
  | "left"
  | "removed"
  | "transceiver_failed"
  | "call_ended"
  | "hello_timeout";

/**
 * participant.joined / participant.left, to the backend and to every participant's `oai-events`
 * (the owner's client is participant "owner", slot 1).
 */
export function participantEvent(
  type: "joined" | "left",
  callId: string,
  participantId: string,
  slot: number,
  reason?: ParticipantLeftReason,
): string {
  const ev: Record<string, unknown> = {
    type: type === "joined" ? BridgeEvent.participantJoined : BridgeEvent.participantLeft,
    call_id: callId,
    participant_id: participantId,
    slot,
  };
  if (reason !== undefined) ev.reason = reason;
  return JSON.stringify(ev);
}

/** Event types the transceiver sends to the client on `oai-events` about the bridge. */
export const ClientNotice = {
  backendDropped: "transceiver.backend_dropped",
  backendUnavailable: "transceiver.backend_unavailable",
} as const;
