// The conference mixer of one listener (the owner's client on the hub, or a leg's client): every
// source's backend-protocol audio frames in (slot 0 = the backend), one mixed stream out in the
// listener's codec, on the process's shared 20 ms clock. The logic is the pure MixEngine
// (core/mix/engine.ts); this file adds the codecs (opus-codecs.ts) and the clock (mix-clock.ts).

import type { AudioFrameHeader } from "../backend-protocol.ts";
import { type JitterTotals, type MixCounters, MixEngine } from "../core/mix/engine.ts";
import { type MixClock, type MixClockClient, mixClock } from "./mix-clock.ts";
import { MixCodecs } from "./opus-codecs.ts";

export interface MixerOptions {
  /** The listener's send codec: AudioCodec.opus (1) or AudioCodec.pcmu (2). */
  outCodec: number;
  /** Opus in-band FEC in our output (the client negotiated useinbandfec=1). */
  fec?: boolean;
  /** One output frame; the payload is only valid during the call (copy to keep it). */
  send(h: AudioFrameHeader, payload: Uint8Array): void;
  /** Arrival clock of pushed frames (ms); performance.now by default. */
  now?: () => number;
  /** The clock that drives tick(); the process's shared one by default, null = ticked by hand. */
  clock?: MixClock | null;
  maxSources?: number;
}

export interface MixerStats extends JitterTotals, Omit<MixCounters, "dropped"> {
  sources: number;
  dropped: MixCounters["dropped"];
  sendErrors: number;
  /** Each current source's playout target (ms) and repaired frames played. */
  perSource: ReturnType<MixEngine["sourceStats"]>;
}

export class Mixer implements MixClockClient {
  readonly #engine: MixEngine;
  readonly #codecs: MixCodecs;
  readonly #send: MixerOptions["send"];
  readonly #now: () => number;
  readonly #clock: MixClock | null;
  #sendErrors = 0;
  #closed = false;

  constructor(o: MixerOptions) {
    this.#codecs = new MixCodecs(o.outCodec, o.fec === true);
    const rnd = new Uint32Array(2);
    crypto.getRandomValues(rnd);
    this.#engine = new MixEngine({
      outCodec: o.outCodec,
      codecs: this.#codecs,
      initialSeq: rnd[0]! & 0xffff,
      initialTimestamp: rnd[1]!,
      ...(o.maxSources !== undefined ? { maxSources: o.maxSources } : {}),
    });
    this.#send = o.send;
    this.#now = o.now ?? (() => performance.now());
    this.#clock = o.clock === undefined ? mixClock : o.clock;
    this.#clock?.add(this);
  }

  /**
   * One frame of `source` (0 = the backend, else a participant slot); bad input is counted.
   * `rttMs`: the round trip of the hop it came over when that hop repairs by NACK (the source's
   * playout delay then rises while the hop loses, so repaired frames are played), else null.
   */
  push(source: number, h: AudioFrameHeader, payload: Uint8Array, rttMs: number | null = null): void {
    if (this.#closed) return;
    this.#engine.push(source, h, payload, this.#now(), rttMs);
  }

  remove(source: number): void {
    this.#engine.remove(source);
  }

  /** One 20 ms step (the clock calls it; tests on virtual time may too). */
  onTick(now: number): void {
    if (this.#closed) return;
    const e = this.#engine;
    if (!e.tick(now)) return;
    try {
      this.#send(e.header, e.payload.subarray(0, e.length));
    } catch {
      this.#sendErrors++;
    }
  }

  /** Leaves the clock and frees every coder; the mixer is inert afterwards. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#clock?.delete(this);
    this.#codecs.close();
  }

  stats(): MixerStats {
    const e = this.#engine;
    return {
      sources: e.sourceCount,
      ...e.jitterTotals(),
      ...e.counters,
      dropped: { ...e.counters.dropped },
      sendErrors: this.#sendErrors,
      perSource: e.sourceStats(),
    };
  }
}
