// AudioCodecs (core/mix/codecs.ts) over opusscript's libopus build: Opus through the WASM module,
// PCMU through the pure G.711 + resampling helpers. Mono 48 kHz, VOIP application, 20 ms frames.
//
// We drive opusscript's emscripten module directly instead of its OpusScript class: that class
// caches typed-array views of the WASM heap at construction, and once enough coders exist for the
// heap to grow (~200 in one process) every older instance's views are detached and its
// encode/decode throw. Here the heap views are read from the module at every call, the PCM and
// packet scratch buffers are allocated once per process (calls are synchronous), and nothing
// allocates per frame. opusscript's handler moves PCM as one byte per u16 slot (little endian).

import { createRequire } from "node:module";
import { AudioCodec } from "../backend-protocol.ts";
import {
  type AudioCodecs,
  MAX_DECODED_SAMPLES,
  MIX_FRAME_SAMPLES,
  PcmuDecoder,
  PcmuEncoder,
} from "../core/mix/codecs.ts";

interface Handler {
  _encode(inPtr: number, bytes: number, outPtr: number, frameSize: number): number;
  _decode(inPtr: number, bytes: number, outPtr: number): number;
  _encoder_ctl(ctl: number, arg: number): number;
}
interface Native {
  HEAPU8: Uint8Array;
  HEAPU16: Uint16Array;
  _malloc(n: number): number;
  OpusScriptHandler: {
    new (rate: number, channels: number, app: number): Handler;
    destroy_handler(h: Handler): void;
  };
}

const OPUS_APPLICATION_VOIP = 2048;
const OPUS_SET_INBAND_FEC = 4012;
const OPUS_SET_PACKET_LOSS_PERC = 4014;
/** Expected loss the encoder spends FEC bits on when FEC is negotiated. */
const FEC_LOSS_PERC = 10;
const MAX_PACKET = 4000;

interface Scratch {
  native: Native;
  packetPtr: number;
  pcmPtr: number;
}
let scratch: Scratch | undefined;

function opus(): Scratch {
  if (scratch !== undefined) return scratch;
  const load = createRequire(import.meta.url)("opusscript/build/opusscript_native_wasm.js") as () => Native;
  const native = load();
  // One byte per u16 slot: 2 slots (4 bytes) per sample.
  scratch = {
    native,
    packetPtr: native._malloc(MAX_PACKET),
    pcmPtr: native._malloc(MAX_DECODED_SAMPLES * 4),
  };
  return scratch;
}

/** Bytes of the Opus WASM heap (grows with the number of coders; for metrics and tests). */
export function opusHeapBytes(): number {
  return opus().native.HEAPU8.byteLength;
}

function newHandler(): Handler {
  return new (opus().native.OpusScriptHandler)(48000, 1, OPUS_APPLICATION_VOIP);
}

interface SourceCodec {
  opus: Handler | null;
  /** TOC byte of the last Opus packet: a 1-byte packet with it makes libopus conceal 20 ms. */
  toc: number;
  pcmu: PcmuDecoder | null;
}

export class MixCodecs implements AudioCodecs {
  readonly #outCodec: number;
  readonly #sources = new Map<number, SourceCodec>();
  #encoder: Handler | null = null;
  readonly #pcmuEncoder: PcmuEncoder | null = null;

  constructor(outCodec: number, fec = false) {
    this.#outCodec = outCodec;
    if (outCodec === AudioCodec.opus) {
      this.#encoder = newHandler();
      if (fec) {
        this.#encoder._encoder_ctl(OPUS_SET_INBAND_FEC, 1);
        this.#encoder._encoder_ctl(OPUS_SET_PACKET_LOSS_PERC, FEC_LOSS_PERC);
      }
    } else this.#pcmuEncoder = new PcmuEncoder();
  }

  decode(source: number, codec: number, payload: Uint8Array | null, length: number, out: Int16Array): number {
    let s = this.#sources.get(source);
    if (s === undefined) {
      s = { opus: null, toc: -1, pcmu: null };
      this.#sources.set(source, s);
    }
    if (codec === AudioCodec.pcmu) {
      if (payload === null) return 0; // no PLC for PCMU: the engine fills silence
      s.pcmu ??= new PcmuDecoder();
      return s.pcmu.decode(payload, length, out);
    }
    if (codec !== AudioCodec.opus || length > MAX_PACKET) return 0;
    s.opus ??= newHandler();
    const { native, packetPtr, pcmPtr } = opus();
    let bytes = length;
    if (payload === null) {
      if (s.toc < 0) return 0;
      native.HEAPU8[packetPtr] = s.toc;
      bytes = 1;
    } else {
      const heap8 = native.HEAPU8;
      for (let i = 0; i < length; i++) heap8[packetPtr + i] = payload[i]!;
      s.toc = payload[0]!;
    }
    const n = s.opus._decode(packetPtr, bytes, pcmPtr);
    if (n <= 0) return 0;
    const heap = native.HEAPU16;
    const base = pcmPtr >> 1;
    const m = Math.min(n, out.length);
    for (let i = 0; i < m; i++) out[i] = heap[base + 2 * i]! | (heap[base + 2 * i + 1]! << 8);
    return m;
  }

  encode(pcm: Int16Array, out: Uint8Array): number {
    if (this.#outCodec === AudioCodec.pcmu) return this.#pcmuEncoder!.encode(pcm, MIX_FRAME_SAMPLES, out);
    const enc = this.#encoder;
    if (enc === null) return 0;
    const { native, packetPtr, pcmPtr } = opus();
    const heap = native.HEAPU16;
    const base = pcmPtr >> 1;
    for (let i = 0; i < MIX_FRAME_SAMPLES; i++) {
      const v = pcm[i]!;
      heap[base + 2 * i] = v & 0xff;
      heap[base + 2 * i + 1] = (v >> 8) & 0xff;
    }
    const len = enc._encode(pcmPtr, MIX_FRAME_SAMPLES * 2, packetPtr, MIX_FRAME_SAMPLES);
    if (len <= 0 || len > out.length) return 0;
    const heap8 = native.HEAPU8;
    for (let i = 0; i < len; i++) out[i] = heap8[packetPtr + i]!;
    return len;
  }

  release(source: number): void {
    const s = this.#sources.get(source);
    if (s === undefined) return;
    if (s.opus !== null) opus().native.OpusScriptHandler.destroy_handler(s.opus);
    this.#sources.delete(source);
  }

  /** Frees every coder (the mixer is closing). */
  close(): void {
    for (const id of [...this.#sources.keys()]) this.release(id);
    if (this.#encoder !== null) opus().native.OpusScriptHandler.destroy_handler(this.#encoder);
    this.#encoder = null;
  }
}
