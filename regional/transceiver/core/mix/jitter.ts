// Per-source jitter buffer of backend-protocol audio frames. Ordered by the 16-bit sequence number
// (wraparound by signed 16-bit difference), bounded (JITTER_FRAMES slots, payloads copied into one
// preallocated block), pure (`now` as an argument, no allocation per frame).
//
// Playout: a talk spurt starts PLAYOUT_DELAY_MS after its first frame arrives (or as soon as
// PREFILL frames are held), then one frame is taken per pop in seq order. A hole with later frames
// held is "missing" (the caller conceals it); an empty buffer ends the spurt and the next arrival
// starts a new one with a fresh delay: that is how DTX / silence gaps (seq contiguous, timestamp
// jumping) and network underruns are both absorbed. Timestamps are not interpreted: the seq order
// decides and every frame plays in full. A seq far outside the window is a restarted stream.
//
// The delay is `targetMs` (PLAYOUT_DELAY_MS unless raised: core/mix/playout.ts raises it on a hop
// that loses and repairs, so that a repair one RTT late is played, not concealed). Raised, a hole
// at the head with fewer than the target's frames held STALLS (the tick is concealed, the hole
// stays: it would have been concealed anyway, and the delay grows by a frame); lowered, the
// growth is trimmed back one frame per SHRINK_EVERY pops (at once on a silent frame), and a new
// talk spurt starts at the new target anyway.

import { MIX_MAX_PAYLOAD } from "./codecs.ts";

/** Slots (a power of two): room for the largest target (PLAYOUT_MAX_MS) plus a burst. */
export const JITTER_FRAMES = 32;
export const PLAYOUT_DELAY_MS = 40;
/** The most a raised target may be (held frames stay well inside JITTER_FRAMES). */
export const PLAYOUT_MAX_MS = 250;
const FRAME_MS = 20;
/** Growth is trimmed back at most one frame per this many pops (1 s), unless the frame is silent. */
export const SHRINK_EVERY = 50;
// An Opus DTX / comfort-noise frame is this small: dropping it is inaudible.
const SILENT_FRAME_BYTES = 3;
/**
 * More frames held than this (200 ms: a burst, or a sender's clock faster than ours) and each pop
 * drops the oldest one as well, so the delay shrinks back instead of staying high for the spurt.
 */
export const TRIM_ABOVE = 10;
/** Older than this (in seqs) is not "late" but a new stream; so is further ahead than RESET_AHEAD. */
const RESET_BACK = 200;
const RESET_AHEAD = 3000;

export type PushResult = "ok" | "late" | "duplicate";
export type PopResult = "frame" | "missing" | "stall" | "empty" | "waiting";

const int16 = (d: number): number => ((d & 0xffff) << 16) >> 16;

export interface JitterCounters {
  received: number;
  played: number;
  missing: number;
  late: number;
  duplicate: number;
  /** Frames dropped unplayed because newer ones pushed them out of the window. */
  overflow: number;
  /** Frames dropped to bring the delay back down (TRIM_ABOVE). */
  trimmed: number;
  resets: number;
  /** Seqs skipped over on arrival (a hole seen, whether repaired later or not). */
  gaps: number;
  /** Frames that arrived after a later one (filling a hole) and were still played. */
  repairedPlayed: number;
  /** Pops that waited at a hole to raise the delay (concealed, the hole kept). */
  stalled: number;
  /** Frames trimmed to bring a raised delay back down. */
  shrunk: number;
}

export function newJitterCounters(): JitterCounters {
  return {
    received: 0,
    played: 0,
    missing: 0,
    late: 0,
    duplicate: 0,
    overflow: 0,
    trimmed: 0,
    resets: 0,
    gaps: 0,
    repairedPlayed: 0,
    stalled: 0,
    shrunk: 0,
  };
}

export class JitterBuffer {
  readonly counters: JitterCounters = newJitterCounters();
  /** After pop() === "frame": the frame's codec, flags, payload view and length. */
  codec = 0;
  flags = 0;
  payload: Uint8Array = new Uint8Array(0);
  length = 0;
  lastArrival = 0;

  readonly #seq = new Int32Array(JITTER_FRAMES).fill(-1);
  readonly #len = new Uint16Array(JITTER_FRAMES);
  readonly #codec = new Uint8Array(JITTER_FRAMES);
  readonly #flags = new Uint8Array(JITTER_FRAMES);
  readonly #views: Uint8Array[] = [];
  // 1 where the frame held arrived after a later seq (a repair or a reordering).
  readonly #filled = new Uint8Array(JITTER_FRAMES);
  #targetMs = PLAYOUT_DELAY_MS;
  #targetFrames = PLAYOUT_DELAY_MS / FRAME_MS;
  #highest = 0;
  #seen = false;
  // Frames the delay grew by (stalls) and not yet trimmed back; pops since the last trim.
  #grown = 0;
  #sinceShrink = 0;
  #count = 0;
  #next = 0;
  #state: "idle" | "buffering" | "playing" = "idle";
  #startAt = 0;
  #played = false;
  #lastPlayed = 0;

  constructor() {
    const block = new Uint8Array(JITTER_FRAMES * MIX_MAX_PAYLOAD);
    for (let i = 0; i < JITTER_FRAMES; i++)
      this.#views.push(block.subarray(i * MIX_MAX_PAYLOAD, (i + 1) * MIX_MAX_PAYLOAD));
  }

  get size(): number {
    return this.#count;
  }

  get targetMs(): number {
    return this.#targetMs;
  }

  /** The playout delay (ms, a multiple of 20 within [PLAYOUT_DELAY_MS, PLAYOUT_MAX_MS]). */
  set targetMs(ms: number) {
    const t = Math.min(PLAYOUT_MAX_MS, Math.max(PLAYOUT_DELAY_MS, Math.ceil(ms / FRAME_MS) * FRAME_MS));
    this.#targetMs = t;
    this.#targetFrames = t / FRAME_MS;
  }

  /** Stores a frame (payload copied; length <= MIX_MAX_PAYLOAD, checked by the caller). */
  push(seq16: number, codec: number, flags: number, payload: Uint8Array, now: number): PushResult {
    const seq = seq16 & 0xffff;
    this.lastArrival = now;
    this.counters.received++;
    // A repeat of something already played (or older) is late, unless so old it is a new stream.
    if (this.#played) {
      const d = int16(seq - this.#lastPlayed);
      if (d <= 0 && d > -RESET_BACK) return this.#late();
      if (d <= -RESET_BACK || d > RESET_AHEAD) this.#reset();
    }
    if (this.#state === "idle") this.#start(seq, now);
    let d = int16(seq - this.#next);
    if (d < 0) {
      // Reordered ahead of the first frame while still buffering: the window moves back if the
      // frames held still fit.
      if (this.#state === "playing" || (this.#count > 0 && this.#span(seq) >= JITTER_FRAMES))
        return this.#late();
      this.#next = seq;
      d = 0;
    }
    if (d >= JITTER_FRAMES) this.#slide(seq);
    const slot = seq & (JITTER_FRAMES - 1);
    if (this.#seq[slot] === seq) {
      this.counters.duplicate++;
      return "duplicate";
    }
    this.#filled[slot] = this.#order(seq);
    this.#seq[slot] = seq;
    this.#len[slot] = payload.length;
    this.#codec[slot] = codec;
    this.#flags[slot] = flags;
    this.#views[slot]!.set(payload);
    this.#count++;
    return "ok";
  }

  /** The next frame to play at `now` (see the file comment). */
  pop(now: number): PopResult {
    if (this.#state === "idle") return "empty";
    if (this.#state === "buffering") {
      if (now < this.#startAt && this.#count <= this.#targetFrames) return "waiting";
      this.#state = "playing";
    }
    if (this.#count === 0) {
      this.#state = "idle";
      return "empty";
    }
    const tf = this.#targetFrames;
    if (this.#count > TRIM_ABOVE + tf - 2) this.#trim();
    else this.#shrink();
    const seq = this.#next;
    const slot = seq & (JITTER_FRAMES - 1);
    if (this.#seq[slot] !== seq) {
      // Raised: wait here for the repair while the delay is below the target.
      if (tf > 2 && this.#count < tf) {
        this.counters.stalled++;
        this.#grown++;
        return "stall";
      }
      this.#advance(seq);
      this.counters.missing++;
      return "missing";
    }
    this.#advance(seq);
    this.#seq[slot] = -1;
    this.#count--;
    if (this.#filled[slot] === 1) this.counters.repairedPlayed++;
    this.codec = this.#codec[slot]!;
    this.flags = this.#flags[slot]!;
    this.payload = this.#views[slot]!;
    this.length = this.#len[slot]!;
    this.counters.played++;
    return "frame";
  }

  #advance(seq: number): void {
    this.#next = (seq + 1) & 0xffff;
    this.#played = true;
    this.#lastPlayed = seq;
    this.#sinceShrink++;
  }

  // Undoes growth above the target: a frame per SHRINK_EVERY pops, a silent one at once.
  #shrink(): void {
    if (this.#grown === 0 || this.#count <= this.#targetFrames + 1) return;
    const slot = this.#next & (JITTER_FRAMES - 1);
    const silent = this.#seq[slot] === this.#next && this.#len[slot]! <= SILENT_FRAME_BYTES;
    if (!silent && this.#sinceShrink < SHRINK_EVERY) return;
    this.#trim();
    this.counters.trimmed--;
    this.counters.shrunk++;
    this.#grown--;
    this.#sinceShrink = 0;
  }

  // 1 if `seq` is older than the newest seen (it fills a hole), counting the seqs a jump skips.
  #order(seq: number): number {
    if (!this.#seen) {
      this.#seen = true;
      this.#highest = seq;
      return 0;
    }
    const d = int16(seq - this.#highest);
    if (d <= 0) return 1;
    if (d > 1 && d <= JITTER_FRAMES) this.counters.gaps += d - 1;
    this.#highest = seq;
    return 0;
  }

  #trim(): void {
    const slot = this.#next & (JITTER_FRAMES - 1);
    if (this.#seq[slot] === this.#next) {
      this.#seq[slot] = -1;
      this.#count--;
    }
    this.#next = (this.#next + 1) & 0xffff;
    this.counters.trimmed++;
  }

  #late(): PushResult {
    this.counters.late++;
    return "late";
  }

  #start(seq: number, now: number): void {
    this.#state = "buffering";
    this.#next = seq & 0xffff;
    this.#startAt = now + this.#targetMs;
    this.#grown = 0; // a new spurt starts at the target
  }

  #reset(): void {
    this.counters.resets++;
    this.#seq.fill(-1);
    this.#count = 0;
    this.#played = false;
    this.#seen = false;
    this.#state = "idle";
  }

  // Seqs from `seq` to the newest held one, inclusive (seq older than next).
  #span(seq: number): number {
    let newest = 0;
    for (let i = 0; i < JITTER_FRAMES; i++) {
      const s = this.#seq[i]!;
      if (s >= 0) newest = Math.max(newest, int16(s - seq));
    }
    return newest + 1;
  }

  // Moves the window so that `seq` is its newest slot; frames falling out are dropped unplayed.
  // When none is left (a jump, not a burst), playout goes on at `seq`: the seqs skipped can never
  // arrive in time, and playing them as missing would be up to 15 frames of concealment.
  #slide(seq: number): void {
    const first = (seq - JITTER_FRAMES + 1) & 0xffff;
    for (let i = 0; i < JITTER_FRAMES; i++) {
      const s = this.#seq[i]!;
      if (s >= 0 && int16(s - first) < 0) {
        this.#seq[i] = -1;
        this.#count--;
        this.counters.overflow++;
      }
    }
    this.#next = this.#count === 0 ? seq : first;
  }
}
