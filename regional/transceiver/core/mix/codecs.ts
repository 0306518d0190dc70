// The codec seam of the mixer: the core never links a codec library. The shell implements
// AudioCodecs over opusscript (Opus) and the pure PCMU helpers below (G.711 + resampling).

import { muLawDecodeInto, muLawEncodeInto } from "./g711.ts";
import { Downsampler, Upsampler } from "./resample.ts";

// The backend protocol's audio frame as the core sees it (regional/transceiver/backend-protocol.ts:
// a core/ folder imports only shared/ and itself, so the few values it needs are restated here and
// a test checks that they agree).
export interface MixFrameHeader {
  codec: number;
  flags: number;
  sequenceNumber: number;
  timestamp: number;
}
export const MixCodec = { opus: 1, pcmu: 2 } as const;
export const MIX_FLAG_MARKER = 1;
/** Largest payload accepted (AUDIO_FRAME_MAX_PAYLOAD). */
export const MIX_MAX_PAYLOAD = 1500;

/** 20 ms at 48 kHz: the mixer's frame. */
export const MIX_FRAME_SAMPLES = 960;
/** Longest decoded frame: 120 ms at 48 kHz (an Opus packet's maximum). */
export const MAX_DECODED_SAMPLES = 5760;

export interface AudioCodecs {
  /**
   * Decodes `source`'s payload[0..length] of `codec` into out (48 kHz mono); payload null =
   * conceal the next 20 ms (PLC). Returns the samples written, 0 when it cannot (bad payload, no
   * concealment for this codec). Never throws.
   */
  decode(source: number, codec: number, payload: Uint8Array | null, length: number, out: Int16Array): number;
  /** Encodes MIX_FRAME_SAMPLES samples of pcm (48 kHz) in the output codec; returns bytes (0 = failed). */
  encode(pcm: Int16Array, out: Uint8Array): number;
  /** The source's decoder state can go (removed or idle). */
  release(source: number): void;
}

/** PCMU 8 kHz -> 48 kHz PCM, one per source (the resampler keeps history). */
export class PcmuDecoder {
  readonly #narrow = new Int16Array(MAX_DECODED_SAMPLES / 6);
  readonly #up = new Upsampler();

  decode(payload: Uint8Array, length: number, out: Int16Array): number {
    const n = Math.min(length, this.#narrow.length);
    muLawDecodeInto(payload, this.#narrow, n);
    return this.#up.process(this.#narrow, n, out);
  }
}

/** 48 kHz PCM -> PCMU 8 kHz, one per output. */
export class PcmuEncoder {
  readonly #narrow = new Int16Array(MAX_DECODED_SAMPLES / 6);
  readonly #down = new Downsampler();

  encode(pcm: Int16Array, n: number, out: Uint8Array): number {
    const m = this.#down.process(pcm, n, this.#narrow);
    muLawEncodeInto(this.#narrow, out, m);
    return m;
  }
}
