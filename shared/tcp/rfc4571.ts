// RFC 4571 framing (ICE-TCP, RFC 6544 §3): every packet on the TCP stream is preceded by its
// length as 2 bytes, big-endian. Pure: the reader takes chunks as the socket delivers them and
// hands back one packet at a time, as a view of the chunk when the packet lies inside it (the
// common case) or of its own bounded buffer when the packet spans chunks. It never throws on wire
// input and never holds more than `maxPacket` + 1 bytes, whatever the peer sends; at rest (no
// packet half-read) it holds none, so an idle connection costs only the reader object.

export const LENGTH_BYTES = 2;
/** The largest length the 2-byte prefix can say. */
export const RFC4571_MAX = 0xffff;

/** What `next()` found. A view stays valid until the next call to `push` or `next`. */
export type ReadResult =
  | { kind: "packet"; bytes: Uint8Array }
  | { kind: "more" }
  /** A zero-length packet: legal framing, nothing to carry; the caller counts it and goes on. */
  | { kind: "empty" }
  /** The prefix says more than `maxPacket`: the stream cannot be resynchronised. */
  | { kind: "oversized"; length: number };

const MORE: ReadResult = { kind: "more" };
const NOTHING = new Uint8Array(0);
const EMPTY: ReadResult = { kind: "empty" };

export class Rfc4571Reader {
  readonly maxPacket: number;
  /** The packet spanning chunks, sized to it; null between such packets. */
  #buf: Uint8Array | null = null;
  /** Bytes of the current packet in #buf; -1 while the length is not known yet. */
  #want = -1;
  #have = 0;
  /** First length byte when a chunk ended after it. */
  #hi = -1;
  #chunk: Uint8Array = NOTHING;
  #off = 0;
  #broken = false;
  readonly #packet: { kind: "packet"; bytes: Uint8Array } = { kind: "packet", bytes: NOTHING };

  constructor(maxPacket: number) {
    if (!Number.isInteger(maxPacket) || maxPacket < 1 || maxPacket > RFC4571_MAX)
      throw new RangeError(`maxPacket must be 1..${RFC4571_MAX}, got ${maxPacket}`);
    this.maxPacket = maxPacket;
  }

  /** Bytes held for a packet that spans chunks (what a connection costs beyond its socket). */
  get buffered(): number {
    return this.#have + (this.#hi >= 0 ? 1 : 0);
  }

  /** Hands the reader the next chunk from the stream; drain it with `next()` before the next push. */
  push(chunk: Uint8Array): void {
    this.#chunk = chunk;
    this.#off = 0;
  }

  next(): ReadResult {
    const r = this.#next();
    // The chunk is used up: hold no reference to it (or to the last packet's view) while idle.
    if (r === MORE) {
      this.#chunk = NOTHING;
      this.#packet.bytes = NOTHING;
    }
    return r;
  }

  #next(): ReadResult {
    if (this.#broken) return MORE;
    const c = this.#chunk;
    if (this.#want < 0) {
      // Read the length, possibly split across chunks.
      let len: number;
      if (this.#hi >= 0) {
        if (this.#off >= c.length) return MORE;
        len = (this.#hi << 8) | c[this.#off++]!;
        this.#hi = -1;
      } else {
        const left = c.length - this.#off;
        if (left === 0) return MORE;
        if (left === 1) {
          this.#hi = c[this.#off++]!;
          return MORE;
        }
        len = (c[this.#off]! << 8) | c[this.#off + 1]!;
        this.#off += 2;
      }
      if (len === 0) return EMPTY;
      if (len > this.maxPacket) {
        this.#broken = true;
        return { kind: "oversized", length: len };
      }
      // Whole packet inside this chunk: a view, no copy.
      if (c.length - this.#off >= len) {
        this.#packet.bytes = c.subarray(this.#off, this.#off + len);
        this.#off += len;
        return this.#packet;
      }
      this.#want = len;
      this.#have = 0;
      this.#buf = new Uint8Array(len);
    }
    const buf = this.#buf!;
    const take = Math.min(this.#want - this.#have, c.length - this.#off);
    buf.set(c.subarray(this.#off, this.#off + take), this.#have);
    this.#have += take;
    this.#off += take;
    if (this.#have < this.#want) return MORE;
    this.#packet.bytes = buf;
    this.#want = -1;
    this.#have = 0;
    this.#buf = null;
    return this.#packet;
  }
}

/** Writes the 2-byte length of a `len`-byte packet at `buf[off..off+2]`. */
export function writeLength(buf: Uint8Array, off: number, len: number): void {
  buf[off] = (len >> 8) & 255;
  buf[off + 1] = len & 255;
}

/** One framed packet (prefix + bytes) in a new array: for tests and tools, not the data path. */
export function frame(packet: Uint8Array): Uint8Array {
  if (packet.length > RFC4571_MAX) throw new RangeError(`packet of ${packet.length} bytes > ${RFC4571_MAX}`);
  const out = new Uint8Array(LENGTH_BYTES + packet.length);
  writeLength(out, 0, packet.length);
  out.set(packet, LENGTH_BYTES);
  return out;
}
