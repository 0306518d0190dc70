// The timing block that opens every keepalive payload (docs/wire-formats.md §8): both sides
// stamp their keepalives and echo the peer's last stamp with how long they held it, as RTCP's
// LSR/DLSR (RFC 3550 §6.4.1), so each side measures the round trip with its own clock only.
//
//   u32 sent   the sender's clock in µs (mod 2^32; 0 is never sent)
//   u32 echo   the peer's last `sent` received (0 = none yet)
//   u32 held   µs between receiving that and sending this
// Pure: clocks come in as arguments (ms, as performance.now()).

export const KEEPALIVE_TIMING_BYTES = 12;
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

/** Writes a timing block of given values (µs) at buf[off..]; returns 12, or -1 (no room). */
export function writeTiming(buf: Uint8Array, off: number, sent: number, echo: number, held: number): number {
  if (!(off >= 0) || off + KEEPALIVE_TIMING_BYTES > buf.length) return -1;
  put32(buf, off, sent);
  put32(buf, off + 4, echo);
  put32(buf, off + 8, held);
  return KEEPALIVE_TIMING_BYTES;
}

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

  /** Writes the timing block at buf[off..]; returns 12 (or -1: no room). */
  write(buf: Uint8Array, off: number, now: number): number {
    const held = this.#peerSent === 0 ? 0 : Math.round((now - this.#peerSentAt) * 1000) >>> 0;
    return writeTiming(buf, off, micros(now), this.#peerSent, held);
  }

  /**
   * The peer's timing block (a MAC-checked keepalive's first 12 bytes): remembers its stamp and,
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
