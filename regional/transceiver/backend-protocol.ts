// The transceiver ↔ backend protocol (docs/backend-protocol.md). One WebSocket per session.
// Binary messages are audio frames, text messages are JSON events.
//
// Audio frame = 12-byte header + codec payload (one RTP payload: an Opus packet or PCMU bytes):
//   0      version (1)
//   1      codec: 1 = Opus 48 kHz, 2 = PCMU 8 kHz
//   2      flags: bit 0 = RTP marker (start of a talk spurt)
//   3      reserved (0)
//   4-5    RTP sequence number (u16, big endian)
//   6-9    RTP timestamp (u32, big endian; codec clock: 48000 Hz Opus, 8000 Hz PCMU)
//   10-11  reserved (0)
//   12-    payload
// Pure: no sockets, no clocks.

export const AUDIO_FRAME_VERSION = 1;
export const AUDIO_FRAME_HEADER_BYTES = 12;
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
}

export function newAudioFrameHeader(): AudioFrameHeader {
  return { codec: 0, flags: 0, sequenceNumber: 0, timestamp: 0 };
}

/** Writes the header into buf[0..12]. */
export function writeAudioFrameHeader(buf: Uint8Array, h: AudioFrameHeader): void {
  buf[0] = AUDIO_FRAME_VERSION;
  buf[1] = h.codec;
  buf[2] = h.flags & 0xff;
  buf[3] = 0;
  buf[4] = (h.sequenceNumber >> 8) & 0xff;
  buf[5] = h.sequenceNumber & 0xff;
  const ts = h.timestamp >>> 0;
  buf[6] = ts >>> 24;
  buf[7] = (ts >>> 16) & 0xff;
  buf[8] = (ts >>> 8) & 0xff;
  buf[9] = ts & 0xff;
  buf[10] = 0;
  buf[11] = 0;
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
  if (buf.length < AUDIO_FRAME_HEADER_BYTES) return "truncated";
  if (buf[0] !== AUDIO_FRAME_VERSION) return "bad-version";
  const codec = buf[1]!;
  if (codec !== AudioCodec.opus && codec !== AudioCodec.pcmu) return "bad-codec";
  if (buf.length - AUDIO_FRAME_HEADER_BYTES > AUDIO_FRAME_MAX_PAYLOAD) return "too-large";
  h.codec = codec;
  h.flags = buf[2]!;
  h.sequenceNumber = (buf[4]! << 8) | buf[5]!;
  h.timestamp = ((buf[6]! << 24) | (buf[7]! << 16) | (buf[8]! << 8) | buf[9]!) >>> 0;
  return "ok";
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
} as const;

/** Event types the transceiver sends to the client on `oai-events` about the bridge. */
export const ClientNotice = {
  backendDropped: "transceiver.backend_dropped",
  backendUnavailable: "transceiver.backend_unavailable",
} as const;
