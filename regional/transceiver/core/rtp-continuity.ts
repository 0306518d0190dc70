// One continuous outbound RTP stream to the client while its source changes: the backend's frames
// (their seq and timestamp are the backend's), then a conference mixer's (its own), then the
// backend's again when the last joiner left. A browser's SRTP replay check and jitter buffer see
// a jump back of thousands of sequence numbers as old packets and drop them, so on every switch
// the new source is mapped onto the old numbering, as an SFU does: seq continues at last + 1,
// the timestamp advances by the wall time since the last packet (at least one frame), and the
// first packet carries the marker (a new talk spurt: the receiver resets its playout).
// Pure: time comes in as `nowMs`.

export interface RtpNumbers {
  sequenceNumber: number;
  timestamp: number;
  marker: boolean;
}

const FRAME_MS = 20;

export class RtpContinuity {
  #source = -1;
  #seqOffset = 0;
  #tsOffset = 0;
  #lastSeq = 0;
  #lastTs = 0;
  #lastAt = 0;
  /** Source switches so far (a status figure). */
  switches = 0;

  /**
   * Maps a frame of `source` (its seq, timestamp and marker) onto the outbound stream, in place.
   * `clockPerMs` is the codec clock in ticks per millisecond (48 Opus, 8 PCMU).
   */
  map(source: number, n: RtpNumbers, nowMs: number, clockPerMs: number): void {
    if (source !== this.#source) {
      if (this.#source !== -1) {
        const elapsed = Math.max(FRAME_MS, Math.round(nowMs - this.#lastAt));
        this.#seqOffset = (this.#lastSeq + 1 - n.sequenceNumber) & 0xffff;
        this.#tsOffset = (this.#lastTs + elapsed * clockPerMs - n.timestamp) >>> 0;
        n.marker = true;
        this.switches++;
      }
      this.#source = source;
    }
    const seq = (n.sequenceNumber + this.#seqOffset) & 0xffff;
    const ts = (n.timestamp + this.#tsOffset) >>> 0;
    n.sequenceNumber = seq;
    n.timestamp = ts;
    // Only a newer packet moves the reference (a reordered one must not pull it back).
    if (((seq - this.#lastSeq) & 0xffff) < 0x8000 || this.#lastAt === 0) {
      this.#lastSeq = seq;
      this.#lastTs = ts;
      this.#lastAt = nowMs;
    }
  }
}
