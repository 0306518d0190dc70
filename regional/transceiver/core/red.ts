// RFC 2198 redundant audio (RED) payloads, pure: parse into a reused block table (offsets into the
// payload, no copies) and build one with at most one redundant block. Never throws; bounded.
//
//  header of a redundant block (4 bytes)          header of the primary (last) block (1 byte)
//  |F=1| block PT (7) | ts offset (14) | block length (10) |     |F=0| block PT (7) |
//
// The headers come first, then the blocks' data in the same order; the primary's data is the rest.

/** Blocks per RED payload we accept (Chromium sends 1 or 2 redundant blocks; RFC 2198 sets no bound). */
export const RED_MAX_BLOCKS = 8;
/** A redundant block's length is 10 bits, its timestamp offset 14 bits. */
export const RED_MAX_BLOCK_BYTES = 1023;
export const RED_MAX_TS_OFFSET = 0x3fff;

/** The blocks of one parsed payload, oldest first; the primary is the last (`count - 1`). */
export interface RedBlocks {
  count: number;
  readonly pt: Uint8Array;
  /** Timestamp offset below the packet's timestamp (0 for the primary). */
  readonly tsOffset: Uint16Array;
  readonly start: Uint16Array;
  readonly length: Uint16Array;
}

export const newRedBlocks = (): RedBlocks => ({
  count: 0,
  pt: new Uint8Array(RED_MAX_BLOCKS),
  tsOffset: new Uint16Array(RED_MAX_BLOCKS),
  start: new Uint16Array(RED_MAX_BLOCKS),
  length: new Uint16Array(RED_MAX_BLOCKS),
});

export type RedParse = "ok" | "red_empty" | "red_truncated" | "red_too_many_blocks";

/** Parses `p` into `out`; anything but "ok" leaves `out.count` 0. */
export function parseRed(p: Uint8Array, out: RedBlocks): RedParse {
  out.count = 0;
  const n = p.length;
  if (n === 0) return "red_empty";
  // Payloads are bounded by the datagram (< 64 KiB): Uint16 offsets suffice.
  if (n > 0xffff) return "red_truncated";
  let at = 0;
  let count = 0;
  let data = 0; // bytes of the redundant blocks
  for (;;) {
    if (at >= n) return "red_truncated";
    const b0 = p[at]!;
    if (count === RED_MAX_BLOCKS) return "red_too_many_blocks";
    if ((b0 & 0x80) === 0) {
      out.pt[count] = b0;
      out.tsOffset[count] = 0;
      out.length[count] = 0;
      at += 1;
      count++;
      break;
    }
    if (at + 4 > n) return "red_truncated";
    const b1 = p[at + 1]!;
    const b2 = p[at + 2]!;
    const b3 = p[at + 3]!;
    out.pt[count] = b0 & 0x7f;
    out.tsOffset[count] = (b1 << 6) | (b2 >> 2);
    const len = ((b2 & 0x03) << 8) | b3;
    out.length[count] = len;
    data += len;
    at += 4;
    count++;
  }
  if (at + data > n) return "red_truncated";
  let off = at;
  for (let i = 0; i < count - 1; i++) {
    out.start[i] = off;
    off += out.length[i]!;
  }
  out.start[count - 1] = off;
  out.length[count - 1] = n - off;
  out.count = count;
  return "ok";
}

/** Bytes `writeRed` needs at most for these blocks. */
export const redSize = (primaryBytes: number, redundantBytes: number): number =>
  5 + primaryBytes + redundantBytes;

/**
 * Writes a RED payload into `out`: the redundant block first when there is one that fits the
 * header fields (1..16383 timestamp offset, 1..1023 bytes), then the primary. Returns the length,
 * or 0 when `out` is too small.
 */
export function writeRed(
  out: Uint8Array,
  pt: number,
  primary: Uint8Array,
  redundant: Uint8Array | null,
  redundantLength: number,
  tsOffset: number,
): number {
  const withRed =
    redundant !== null &&
    redundantLength > 0 &&
    redundantLength <= RED_MAX_BLOCK_BYTES &&
    redundantLength <= redundant.length &&
    tsOffset > 0 &&
    tsOffset <= RED_MAX_TS_OFFSET;
  const need = (withRed ? 5 + redundantLength : 1) + primary.length;
  if (need > out.length) return 0;
  const p = pt & 0x7f;
  let at = 0;
  if (withRed) {
    out[0] = 0x80 | p;
    out[1] = tsOffset >> 6;
    out[2] = ((tsOffset & 0x3f) << 2) | (redundantLength >> 8);
    out[3] = redundantLength & 0xff;
    out[4] = p;
    for (let i = 0; i < redundantLength; i++) out[5 + i] = redundant[i]!;
    at = 5 + redundantLength;
  } else {
    out[0] = p;
    at = 1;
  }
  out.set(primary, at);
  return at + primary.length;
}
