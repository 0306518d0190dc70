// The event payload (kind 6, docs/wire-formats.md §8): one fragment of a Realtime JSON event
// carried across the cascade, backend -> leaf (for the joiner's `oai-events`) or leaf -> hub (the
// joiner's event, for the backend). u16 seq (per link and direction, its own stream: repaired by
// NACK like media, delivered in order), u8 flags, then 1..EVENT_FRAGMENT_BYTES bytes of the
// event's UTF-8. An event of up to EVENT_MAX_BYTES goes out as consecutive seqs: the first
// without EVENT_CONTINUATION, every one but the last with EVENT_MORE; one that fits a datagram
// is one fragment, flags 0. The receiver reassembles in seq order (event-inbox.ts). A fragment
// may end inside a UTF-8 sequence: only the whole event is decoded.

/** The largest fragment, in bytes of UTF-8 (a datagram stays well under 1,200 bytes). */
export const EVENT_FRAGMENT_BYTES = 1100;
/** The largest event carried, in bytes of UTF-8 JSON (60 fragments); larger ones are refused. */
export const EVENT_MAX_BYTES = 65536;
/** u16 seq, u8 flags. */
export const EVENT_HEADER_BYTES = 3;
/** Flags bit 0: more fragments of this event follow (at the next seq). */
export const EVENT_MORE = 1;
/** Flags bit 1: not the event's first fragment. */
export const EVENT_CONTINUATION = 2;
const FLAGS_KNOWN = EVENT_MORE | EVENT_CONTINUATION;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The decoder's shape check of an event payload (its length, no unknown flag). */
export const checkEvent = (buf: Uint8Array, off: number, len: number): boolean =>
  len > EVENT_HEADER_BYTES &&
  len <= EVENT_HEADER_BYTES + EVENT_FRAGMENT_BYTES &&
  (buf[off + 2]! & ~FLAGS_KNOWN) === 0;

/** The fragments an event of `bytes` UTF-8 bytes takes. */
export const eventFragments = (bytes: number): number => Math.ceil(bytes / EVENT_FRAGMENT_BYTES);

/**
 * Writes one fragment (seq, flags, `src[from..to]`) at buf[off..]; returns the payload length, or
 * -1 when the fragment is empty, over EVENT_FRAGMENT_BYTES or has no room.
 */
export function encodeEventFragment(
  buf: Uint8Array,
  off: number,
  seq: number,
  flags: number,
  src: Uint8Array,
  from: number,
  to: number,
): number {
  const n = to - from;
  if (!(off >= 0 && from >= 0 && n >= 1 && n <= EVENT_FRAGMENT_BYTES && to <= src.length)) return -1;
  if (off + EVENT_HEADER_BYTES + n > buf.length || (flags & ~FLAGS_KNOWN) !== 0) return -1;
  buf[off] = (seq >>> 8) & 255;
  buf[off + 1] = seq & 255;
  buf[off + 2] = flags;
  buf.set(src.subarray(from, to), off + EVENT_HEADER_BYTES);
  return EVENT_HEADER_BYTES + n;
}

/**
 * An event that fits one datagram as its one fragment (flags 0); -1 when the text is empty or
 * over EVENT_FRAGMENT_BYTES or there is no room (the vectors, the fuzzer).
 */
export function encodeEvent(buf: Uint8Array, off: number, seq: number, text: string): number {
  const bytes = eventUtf8(text);
  return encodeEventFragment(buf, off, seq, 0, bytes, 0, bytes.length);
}

/** The UTF-8 of an event (events are not the hot path: one encode per event). */
export const eventUtf8 = (text: string): Uint8Array => encoder.encode(text);

/** The event payload's seq. */
export const eventSeq = (buf: Uint8Array, off: number): number => (buf[off]! << 8) | buf[off + 1]!;

/** The event payload's flags. */
export const eventFlags = (buf: Uint8Array, off: number): number => buf[off + 2]!;

/** A whole event's text from its UTF-8, or undefined (not UTF-8). */
export function eventText(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The text of a payload that is one whole event (flags 0), or undefined (not UTF-8, bad shape, a fragment). */
export function decodeEventText(buf: Uint8Array, off: number, len: number): string | undefined {
  if (!(off >= 0) || off + len > buf.length || !checkEvent(buf, off, len) || eventFlags(buf, off) !== 0)
    return undefined;
  return eventText(buf.subarray(off + EVENT_HEADER_BYTES, off + len));
}
