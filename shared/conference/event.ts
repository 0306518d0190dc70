// The event payload (kind 6, docs/wire-formats.md §8): one Realtime JSON event carried across the
// cascade, backend -> leaf (for the joiner's `oai-events`) or leaf -> hub (the joiner's event,
// for the backend). u16 seq (per link and direction, its own stream: repaired by NACK like
// media, delivered in order), then the UTF-8 JSON, 1..EVENT_MAX_BYTES bytes. Larger events are
// not carried (the sender drops and counts them; docs/transceiver.md "Conferences").

/** The largest event carried, in bytes of UTF-8 JSON (a datagram stays well under 1,200 bytes). */
export const EVENT_MAX_BYTES = 1100;
export const EVENT_SEQ_BYTES = 2;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The decoder's shape check of an event payload's length. */
export const checkEvent = (len: number): boolean =>
  len > EVENT_SEQ_BYTES && len <= EVENT_SEQ_BYTES + EVENT_MAX_BYTES;

/**
 * Writes seq and the UTF-8 of `text` at buf[off..]; returns the payload length, or -1 when the
 * text is empty or over EVENT_MAX_BYTES (then nothing is to be sent) or there is no room.
 */
export function encodeEvent(buf: Uint8Array, off: number, seq: number, text: string): number {
  const at = off + EVENT_SEQ_BYTES;
  if (!(off >= 0) || text.length === 0 || text.length > EVENT_MAX_BYTES || at >= buf.length) return -1;
  // encodeInto stops where the room ends: a text it could not take whole is too large.
  const r = encoder.encodeInto(text, buf.subarray(at, Math.min(buf.length, at + EVENT_MAX_BYTES)));
  if (r.read !== text.length) return -1;
  buf[off] = (seq >>> 8) & 255;
  buf[off + 1] = seq & 255;
  return EVENT_SEQ_BYTES + r.written;
}

/** UTF-8 bytes of `text` (a caller's size check before encodeEvent; events are not the hot path). */
export const eventBytes = (text: string): number => encoder.encode(text).length;

/** The event payload's seq. */
export const eventSeq = (buf: Uint8Array, off: number): number => (buf[off]! << 8) | buf[off + 1]!;

/** The event payload's text, or undefined (not UTF-8, bad shape). */
export function decodeEventText(buf: Uint8Array, off: number, len: number): string | undefined {
  if (!(off >= 0) || off + len > buf.length || !checkEvent(len)) return undefined;
  try {
    return decoder.decode(buf.subarray(off + EVENT_SEQ_BYTES, off + len));
  } catch {
    return undefined;
  }
}
