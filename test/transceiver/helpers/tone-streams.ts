// Tone streams for the mixer tests: a source that encodes a continuous tone in 20 ms frames
// (Opus through the mixer's own codec adapter, PCMU through G.711), and a listener that decodes a
// mixer's output frames back to 48 kHz PCM in seq order.
import { AudioCodec, type AudioFrameHeader } from "../../../regional/transceiver/backend-protocol.ts";
import { MIX_FRAME_SAMPLES } from "../../../regional/transceiver/core/mix/codecs.ts";
import { muLawDecodeInto, muLawEncodeInto } from "../../../regional/transceiver/core/mix/g711.ts";
import { Upsampler } from "../../../regional/transceiver/core/mix/resample.ts";
import { MixCodecs } from "../../../regional/transceiver/shell/opus-codecs.ts";
import { toneFrame } from "../../support/tone.ts";

export interface Frame {
  h: AudioFrameHeader;
  payload: Uint8Array;
}

/** Frame k of a continuous tone, seq = firstSeq + k (mod 2^16), timestamp in the codec clock. */
export class ToneStream {
  readonly #enc: MixCodecs | null;
  readonly #freq: number;
  readonly #codec: number;
  readonly #firstSeq: number;
  readonly #amplitude: number;

  constructor(freq: number, codec: number = AudioCodec.opus, firstSeq = 1000, amplitude = 6000) {
    this.#freq = freq;
    this.#codec = codec;
    this.#firstSeq = firstSeq;
    this.#amplitude = amplitude;
    this.#enc = codec === AudioCodec.opus ? new MixCodecs(AudioCodec.opus) : null;
  }

  /** Frames must be asked for in order (the Opus encoder is stateful). */
  frame(k: number): Frame {
    const h = {
      codec: this.#codec,
      flags: k === 0 ? 1 : 0,
      sequenceNumber: (this.#firstSeq + k) & 0xffff,
      timestamp: 0,
    };
    if (this.#enc !== null) {
      h.timestamp = (k * MIX_FRAME_SAMPLES) >>> 0;
      const pcm = toneFrame(this.#freq, 48000, k * MIX_FRAME_SAMPLES, MIX_FRAME_SAMPLES, this.#amplitude);
      const out = new Uint8Array(1500);
      const n = this.#enc.encode(pcm, out);
      return { h, payload: out.slice(0, n) };
    }
    h.timestamp = k * 160;
    const pcm = toneFrame(this.#freq, 8000, k * 160, 160, this.#amplitude);
    const out = new Uint8Array(160);
    muLawEncodeInto(pcm, out);
    return { h, payload: out };
  }

  close(): void {
    this.#enc?.close();
  }
}

/** Collects a mixer's output frames (copies) and decodes them to 48 kHz PCM. */
export class Listener {
  readonly frames: Frame[] = [];
  readonly send = (h: AudioFrameHeader, payload: Uint8Array): void => {
    this.frames.push({ h: { ...h }, payload: payload.slice() });
  };

  /** The output decoded in arrival order (the mixer sends in seq order), 48 kHz. */
  pcm(): Int16Array {
    const dec = new MixCodecs(AudioCodec.opus);
    const up = new Upsampler();
    const out = new Int16Array(this.frames.length * MIX_FRAME_SAMPLES);
    const buf = new Int16Array(5760);
    const narrow = new Int16Array(960);
    let at = 0;
    for (const f of this.frames) {
      let n: number;
      if (f.h.codec === AudioCodec.opus) n = dec.decode(0, f.h.codec, f.payload, f.payload.length, buf);
      else {
        muLawDecodeInto(f.payload, narrow);
        n = up.process(narrow, f.payload.length, buf);
      }
      out.set(buf.subarray(0, Math.min(n, out.length - at)), at);
      at += n;
    }
    dec.close();
    return out.subarray(0, at);
  }
}
