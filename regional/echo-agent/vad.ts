// A small voice activity detector over the audio frames the transceiver forwards (one RTP payload
// each, 20 ms). Pure: frames and time come in, `speech_started` / `speech_stopped` go out.
//
// PCMU is decoded (G.711 µ-law, a 256-entry table) and a frame is voiced when its mean absolute
// level is over a threshold. Opus cannot be decoded here (no decoder on this path), so a frame is
// judged by its size: at a fixed bitrate the encoder spends few bytes on silence and many on
// voice, and a DTX silence frame is 1-3 bytes (or no packet at all). A packet is voiced when it is
// clearly bigger than the smallest packets seen lately (the noise floor). The RTP marker (start of
// a talk spurt after DTX) counts as voiced. A heuristic, good for an echo backend and tests; a real
// model runs a real VAD on decoded audio.
import { AudioCodec, AudioFlags } from "../transceiver/backend-protocol.ts";

/** |sample| of each µ-law byte (ITU-T G.711), 0..32124. */
const ULAW_ABS = (() => {
  const t = new Int16Array(256);
  for (let i = 0; i < 256; i++) {
    const u = ~i & 0xff;
    const exp = (u >> 4) & 7;
    const mant = u & 0x0f;
    t[i] = (((mant << 3) + 0x84) << exp) - 0x84;
  }
  return t;
})();

/** Mean |sample| of a PCMU payload, 0..32124. */
export function pcmuLevel(payload: Uint8Array): number {
  if (payload.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < payload.length; i++) sum += ULAW_ABS[payload[i]!]!;
  return sum / payload.length;
}

export interface VadSettings {
  /** 0..1, as in the session's turn_detection.threshold (higher = needs louder speech). */
  threshold: number;
  /** Voiced audio needed before speech counts as started. */
  startMs: number;
  /** Unvoiced time after which speech counts as stopped (turn_detection.silence_duration_ms). */
  silenceMs: number;
}

export type VadEvent = { kind: "started"; atMs: number } | { kind: "stopped"; atMs: number } | null;

const FRAME_MS = 20;
/** Opus packets this small are silence whatever the floor (DTX, comfort noise). */
const OPUS_SILENT_BYTES = 8;
const FLOOR_RISE = 0.002;

export class Vad {
  #s: VadSettings;
  #speaking = false;
  #voicedMs = 0;
  #lastVoicedAt = 0;
  #floor = Number.POSITIVE_INFINITY;

  constructor(s: VadSettings) {
    this.#s = s;
  }

  get speaking(): boolean {
    return this.#speaking;
  }

  configure(s: VadSettings): void {
    this.#s = s;
  }

  /** Whether one frame is voiced. */
  voiced(codec: number, flags: number, payload: Uint8Array): boolean {
    if (codec === AudioCodec.pcmu) {
      // threshold 0.5 → level 600 (about -35 dBFS); 0 → 100, 1 → 3200.
      return pcmuLevel(payload) > 100 * 32 ** this.#s.threshold;
    }
    const n = payload.length;
    // The noise floor follows smaller packets at once and bigger ones slowly (about 10 s), so
    // speech does not become the floor but a louder room eventually does.
    if (n < this.#floor) this.#floor = n;
    else this.#floor += (n - this.#floor) * FLOOR_RISE;
    if ((flags & AudioFlags.marker) !== 0) return n > OPUS_SILENT_BYTES;
    return n > OPUS_SILENT_BYTES && n >= this.#floor * (1.5 + this.#s.threshold);
  }

  /** One frame arrived at `nowMs`; at most one event. */
  frame(codec: number, flags: number, payload: Uint8Array, nowMs: number): VadEvent {
    if (this.voiced(codec, flags, payload)) {
      this.#voicedMs += FRAME_MS;
      this.#lastVoicedAt = nowMs;
      if (!this.#speaking && this.#voicedMs >= this.#s.startMs) {
        this.#speaking = true;
        return { kind: "started", atMs: nowMs - this.#voicedMs + FRAME_MS };
      }
      return null;
    }
    if (!this.#speaking) this.#voicedMs = 0;
    return this.tick(nowMs);
  }

  /** Time passed (frames may stop entirely under DTX): ends speech after the silence. */
  tick(nowMs: number): VadEvent {
    if (this.#speaking && nowMs - this.#lastVoicedAt >= this.#s.silenceMs) {
      this.#speaking = false;
      this.#voicedMs = 0;
      return { kind: "stopped", atMs: this.#lastVoicedAt + FRAME_MS };
    }
    return null;
  }
}
