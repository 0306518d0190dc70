// The mix engine: per source a jitter buffer and a 48 kHz PCM carry; on each 20 ms tick(now) it
// takes 20 ms from every source that has audio (decoding frames as needed through the injected
// AudioCodecs), sums them with saturation and encodes one output frame with our own continuous
// seq/timestamp. Pure: time in, frames out, no timers. Nothing allocates per frame.
//
// Concealment: a missing frame of an active source is concealed once (Opus PLC through
// decode(null)), then silence. A tick where no source has audio sends nothing (DTX-like: the
// receiver's jitter buffer fills the gap with its own comfort noise, we spend no encode and no
// bandwidth); the output timestamp still advances, and the next frame carries the marker bit.
//
// Playout delay per source (core/mix/playout.ts): raised while the source's hop loses and repairs
// (the RTT comes with its frames), so that repaired frames are played.

import {
  type AudioCodecs,
  MAX_DECODED_SAMPLES,
  MIX_FLAG_MARKER,
  MIX_FRAME_SAMPLES,
  MIX_MAX_PAYLOAD,
  MixCodec,
  type MixFrameHeader,
} from "./codecs.ts";
import { JitterBuffer, type JitterCounters, newJitterCounters } from "./jitter.ts";
import { addToMix, clearMix, saturate } from "./pcm.ts";
import { PlayoutTarget } from "./playout.ts";

export const MIX_TICK_MS = 20;
/** A source with no frame for this long is removed (its decoder freed). */
export const SOURCE_IDLE_MS = 1000;
export const MIX_MAX_SOURCES_DEFAULT = 32;

export type MixDropReason = "bad_source" | "bad_codec" | "empty_payload" | "too_large" | "too_many_sources";

export interface MixCounters {
  /** Output frames encoded and handed out. */
  sent: number;
  /** Ticks with no source audio (nothing sent). */
  silentTicks: number;
  /** Missing frames concealed by the codec (PLC) / filled with silence. */
  concealed: number;
  silenced: number;
  /** Frames the codec could not decode, and output frames it could not encode. */
  undecodable: number;
  unencodable: number;
  clippedSamples: number;
  /** Sources removed for being idle SOURCE_IDLE_MS. */
  idleRemoved: number;
  dropped: Record<MixDropReason, number>;
}

/** Jitter buffer counters summed over a mixer's sources, removed ones included. */
export type JitterTotals = JitterCounters;

function addCounters(into: JitterCounters, c: JitterCounters): void {
  for (const k of Object.keys(into) as (keyof JitterCounters)[]) into[k] += c[k];
}

class Source {
  readonly jitter = new JitterBuffer();
  readonly pcm = new Int16Array(MAX_DECODED_SAMPLES + MIX_FRAME_SAMPLES);
  pcmLen = 0;
  /** The last thing this source played was a real frame (so a miss may be concealed once). */
  live = false;
  lastCodec = 0;
  readonly playout = new PlayoutTarget();
  /** The RTT of the hop its frames come over when that hop repairs (NACK), else null. */
  rttMs: number | null = null;
  readonly id: number;
  constructor(id: number) {
    this.id = id;
  }
}

export interface MixEngineOptions {
  outCodec: number;
  codecs: AudioCodecs;
  /** First output seq and timestamp (random in the shell; fixed in tests). */
  initialSeq?: number;
  initialTimestamp?: number;
  maxSources?: number;
}

export class MixEngine {
  readonly counters: MixCounters = {
    sent: 0,
    silentTicks: 0,
    concealed: 0,
    silenced: 0,
    undecodable: 0,
    unencodable: 0,
    clippedSamples: 0,
    idleRemoved: 0,
    dropped: { bad_source: 0, bad_codec: 0, empty_payload: 0, too_large: 0, too_many_sources: 0 },
  };
  /** After tick() returns true: the output frame (payload valid until the next tick). */
  readonly header: MixFrameHeader;
  readonly payload = new Uint8Array(MIX_MAX_PAYLOAD);
  length = 0;

  readonly #codecs: AudioCodecs;
  readonly #maxSources: number;
  readonly #tsStep: number;
  readonly #sources: Source[] = [];
  readonly #acc = new Int32Array(MIX_FRAME_SAMPLES);
  readonly #mixed = new Int16Array(MIX_FRAME_SAMPLES);
  readonly #decoded = new Int16Array(MAX_DECODED_SAMPLES);
  #silent = true;
  #removedTotals: JitterTotals = newJitterCounters();

  constructor(o: MixEngineOptions) {
    if (o.outCodec !== MixCodec.opus && o.outCodec !== MixCodec.pcmu) throw new RangeError("outCodec");
    this.#codecs = o.codecs;
    this.#maxSources = o.maxSources ?? MIX_MAX_SOURCES_DEFAULT;
    this.#tsStep = o.outCodec === MixCodec.opus ? 960 : 160;
    this.header = {
      codec: o.outCodec,
      flags: 0,
      sequenceNumber: (o.initialSeq ?? 0) & 0xffff,
      timestamp: (o.initialTimestamp ?? 0) >>> 0,
    };
    // The first tick advances before sending, so step back once.
    this.header.sequenceNumber = (this.header.sequenceNumber - 1) & 0xffff;
    this.header.timestamp = (this.header.timestamp - this.#tsStep) >>> 0;
  }

  get sourceCount(): number {
    return this.#sources.length;
  }

  /**
   * One frame of `source` (a slot); invalid input is dropped and counted. Returns true if kept.
   * `rttMs`: the round trip of the hop it came over when that hop repairs by NACK (else null).
   */
  push(
    source: number,
    h: MixFrameHeader,
    payload: Uint8Array,
    now: number,
    rttMs: number | null = null,
  ): boolean {
    const drop = this.#validate(source, h, payload);
    if (drop !== null) {
      this.counters.dropped[drop]++;
      return false;
    }
    let s = this.#find(source);
    if (s === undefined) {
      if (this.#sources.length >= this.#maxSources) {
        this.counters.dropped.too_many_sources++;
        return false;
      }
      s = new Source(source);
      this.#sources.push(s);
    }
    s.rttMs = rttMs;
    return s.jitter.push(h.sequenceNumber, h.codec, h.flags, payload, now) === "ok";
  }

  remove(source: number): void {
    const i = this.#sources.findIndex((s) => s.id === source);
    if (i < 0) return;
    const s = this.#sources[i]!;
    addCounters(this.#removedTotals, s.jitter.counters);
    this.#sources.splice(i, 1);
    this.#codecs.release(source);
  }

  /** Jitter counters summed over current and removed sources. */
  jitterTotals(): JitterTotals {
    const t = { ...this.#removedTotals };
    for (const s of this.#sources) {
      addCounters(t, s.jitter.counters);
    }
    return t;
  }

  /** Per source: its current playout target and how many repaired frames it played. */
  sourceStats(): {
    source: number;
    targetMs: number;
    repairedPlayed: number;
    gaps: number;
    stalled: number;
  }[] {
    return this.#sources.map((s) => ({
      source: s.id,
      targetMs: s.jitter.targetMs,
      repairedPlayed: s.jitter.counters.repairedPlayed,
      gaps: s.jitter.counters.gaps,
      stalled: s.jitter.counters.stalled,
    }));
  }

  /** One 20 ms step; true when an output frame is ready in header/payload/length. */
  tick(now: number): boolean {
    const h = this.header;
    h.timestamp = (h.timestamp + this.#tsStep) >>> 0;
    clearMix(this.#acc, MIX_FRAME_SAMPLES);
    let contributing = 0;
    for (let i = this.#sources.length - 1; i >= 0; i--) {
      const s = this.#sources[i]!;
      if (this.#fill(s, now)) {
        const n = Math.min(s.pcmLen, MIX_FRAME_SAMPLES);
        addToMix(this.#acc, s.pcm, n);
        s.pcm.copyWithin(0, n, s.pcmLen);
        s.pcmLen -= n;
        contributing++;
      } else if (now - s.jitter.lastArrival >= SOURCE_IDLE_MS) {
        this.counters.idleRemoved++;
        this.remove(s.id);
      }
    }
    if (contributing === 0) {
      this.counters.silentTicks++;
      this.#silent = true;
      return false;
    }
    this.counters.clippedSamples += saturate(this.#acc, this.#mixed, MIX_FRAME_SAMPLES);
    const len = this.#codecs.encode(this.#mixed, this.payload);
    if (len <= 0) {
      this.counters.unencodable++;
      return false;
    }
    this.length = len;
    h.sequenceNumber = (h.sequenceNumber + 1) & 0xffff;
    h.flags = this.#silent ? MIX_FLAG_MARKER : 0;
    this.#silent = false;
    this.counters.sent++;
    return true;
  }

  // Decodes until the source holds 20 ms (or has nothing more to give); true if it has any audio.
  #fill(s: Source, now: number): boolean {
    const j = s.jitter;
    j.targetMs = s.playout.update(now, j.counters.received, j.counters.gaps, s.rttMs);
    while (s.pcmLen < MIX_FRAME_SAMPLES) {
      const r = j.pop(now);
      if (r === "empty" || r === "waiting") break;
      // "missing" or "stall": concealed alike.
      let n = 0;
      if (r === "frame") {
        n = this.#codecs.decode(s.id, j.codec, j.payload, j.length, this.#decoded);
        s.lastCodec = j.codec;
        if (n <= 0) this.counters.undecodable++;
        s.live = n > 0;
      } else {
        if (s.live) n = this.#codecs.decode(s.id, s.lastCodec, null, 0, this.#decoded);
        s.live = false;
        if (n > 0) this.counters.concealed++;
        else this.counters.silenced++;
      }
      if (n <= 0) {
        // Silence in place of the frame keeps the source's timing.
        n = MIX_FRAME_SAMPLES;
        this.#decoded.fill(0, 0, n);
      }
      n = Math.min(n, s.pcm.length - s.pcmLen);
      const pcm = s.pcm;
      const dec = this.#decoded;
      for (let k = 0, at = s.pcmLen; k < n; k++) pcm[at + k] = dec[k]!;
      s.pcmLen += n;
    }
    if (s.pcmLen === 0) s.live = false;
    return s.pcmLen > 0;
  }

  #find(source: number): Source | undefined {
    for (const s of this.#sources) if (s.id === source) return s;
    return undefined;
  }

  #validate(source: number, h: MixFrameHeader, payload: Uint8Array): MixDropReason | null {
    if (!Number.isInteger(source) || source < 0 || source > 0xffff) return "bad_source";
    if (h.codec !== MixCodec.opus && h.codec !== MixCodec.pcmu) return "bad_codec";
    if (payload.length === 0) return "empty_payload";
    if (payload.length > MIX_MAX_PAYLOAD) return "too_large";
    return null;
  }
}
