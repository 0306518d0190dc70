// The timing block that opens every keepalive payload (docs/wire-formats.md §8): both sides
// stamp their keepalives and echo the peer's last stamp with how long they held it, as RTCP's
// LSR/DLSR (RFC 3550 §6.4.1), so each side measures the round trip with its own clock only.
//
//   u32 sent   the sender's clock in µs (mod 2^32; 0 is never sent)
//   u32 echo   the peer's last `sent` received (0 = none yet)
//   u32 held   µs between receiving that and sending this
//   u16 events the sender's next event seq on this link (= events sent, mod 2^16): the receiver
//              sees an event lost at the end of a burst within a second, not at the next event
// Pure: clocks come in as arguments (ms, as performance.now()).

export const KEEPALIVE_TIMING_BYTES = 14;
/** A sample above this is taken as a stale or forged echo, not a round trip. */
export const MAX_RTT_MS = 10_000;

const get32 = (b: Uint8Array, o: number): number =>
  ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
const put32 = (b: Uint8Array, o: number, v: number): void => {
  b[o] = (v >>> 24) & 255;
  b[o + 1] = (v >>> 16) & 255;
  b[o + 2] = (v >>> 8) & 255;
  b[o + 3] = v & 255;
};
const micros = (ms: number): number => Math.round(ms * 1000) >>> 0 || 1;

/** Writes a timing block of given values (µs; events) at buf[off..]; returns 14, or -1 (no room). */
export function writeTiming(
  buf: Uint8Array,
  off: number,
  sent: number,
  echo: number,
  held: number,
  events: number,
): number {
  if (!(off >= 0) || off + KEEPALIVE_TIMING_BYTES > buf.length) return -1;
  put32(buf, off, sent);
  put32(buf, off + 4, echo);
  put32(buf, off + 8, held);
  buf[off + 12] = (events >>> 8) & 255;
  buf[off + 13] = events & 255;
  return KEEPALIVE_TIMING_BYTES;
}

/** The `events` field of a timing block at buf[off..]. */
export const timingEvents = (buf: Uint8Array, off: number): number => (buf[off + 12]! << 8) | buf[off + 13]!;

/**
 * One side's round-trip estimate over one link: what to echo, and the smoothed RTT (RFC 6298's
 * SRTT: the first sample as is, then 7/8 old + 1/8 new).
 */
export class RttEstimator {
  #peerSent = 0;
  #peerSentAt = 0;
  /** Smoothed RTT in ms; undefined before the first sample. */
  srttMs: number | undefined;
  /** The last sample in ms. */
  lastMs: number | undefined;
  samples = 0;

  /** Writes the timing block at buf[off..] (`events`: our next event seq); returns 14 (or -1: no room). */
  write(buf: Uint8Array, off: number, now: number, events = 0): number {
    const held = this.#peerSent === 0 ? 0 : Math.round((now - this.#peerSentAt) * 1000) >>> 0;
    return writeTiming(buf, off, micros(now), this.#peerSent, held, events);
  }

  /**
   * The peer's timing block (a MAC-checked keepalive's first 14 bytes): remembers its stamp and,
   * when it echoes ours, takes a sample. Returns the sample in ms, or -1.
   */
  read(buf: Uint8Array, off: number, now: number): number {
    if (!(off >= 0) || off + KEEPALIVE_TIMING_BYTES > buf.length) return -1;
    this.#peerSent = get32(buf, off);
    this.#peerSentAt = now;
    const echo = get32(buf, off + 4);
    if (echo === 0) return -1;
    const rtt = ((micros(now) - echo - get32(buf, off + 8)) >>> 0) / 1000;
    if (!(rtt <= MAX_RTT_MS)) return -1;
    this.lastMs = rtt;
    this.srttMs = this.srttMs === undefined ? rtt : (7 * this.srttMs + rtt) / 8;
    this.samples++;
    return rtt;
  }
}
