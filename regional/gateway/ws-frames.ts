// Follows a server's side of a proxied WebSocket byte stream: the HTTP 101 head, then the frame
// boundaries (RFC 6455 §5.2), so the gateway can add frames of its own between two of the
// upstream's when the upstream dies, and knows whether the upstream already sent a close.
// Pure: bytes in, state out; never throws on what it reads.

const HEAD_END = [13, 10, 13, 10];
const MAX_HEAD = 16 * 1024;

export class ServerStream {
  /** The upstream answered 101 and the frames began. */
  upgraded = false;
  /** The upstream sent a close frame. */
  closed = false;
  /** The stream is not a WebSocket we understand (bad head, oversized head). */
  broken = false;
  #headBytes = 0;
  #headMatch = 0;
  #status = "";
  readonly #hdr = new Uint8Array(14);
  #hdrLen = 0;
  #remaining = 0;

  /** True when the next byte would start a new frame. */
  get atBoundary(): boolean {
    return this.upgraded && !this.broken && this.#hdrLen === 0 && this.#remaining === 0;
  }

  feed(b: Uint8Array): void {
    let i = 0;
    while (i < b.length && !this.broken) {
      if (!this.upgraded) {
        const c = b[i++]!;
        if (this.#status.length < 12) this.#status += String.fromCharCode(c);
        this.#headMatch = c === HEAD_END[this.#headMatch] ? this.#headMatch + 1 : c === 13 ? 1 : 0;
        if (++this.#headBytes > MAX_HEAD) this.broken = true;
        if (this.#headMatch === 4) {
          this.upgraded = /^HTTP\/1\.1 101$/.test(this.#status);
          if (!this.upgraded) this.broken = true;
        }
        continue;
      }
      if (this.#remaining > 0) {
        const n = Math.min(this.#remaining, b.length - i);
        this.#remaining -= n;
        i += n;
        continue;
      }
      this.#hdr[this.#hdrLen++] = b[i++]!;
      if (this.#hdrLen < 2) continue;
      const len7 = this.#hdr[1]! & 0x7f;
      const need = 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (this.#hdr[1]! & 0x80 ? 4 : 0);
      if (this.#hdrLen < need) continue;
      let len = len7;
      if (len7 === 126) len = (this.#hdr[2]! << 8) | this.#hdr[3]!;
      else if (len7 === 127) {
        let v = 0;
        for (let k = 2; k < 10; k++) v = v * 256 + this.#hdr[k]!;
        len = v;
      }
      if ((this.#hdr[0]! & 0x0f) === 0x8) this.closed = true;
      this.#remaining = len;
      this.#hdrLen = 0;
    }
  }
}

/** An unmasked server frame (text, or close with a code and reason). */
export function serverFrame(opcode: 0x1 | 0x8, payload: Uint8Array): Uint8Array {
  const n = payload.length;
  const head = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const out = new Uint8Array(head + n);
  out[0] = 0x80 | opcode;
  if (head === 2) out[1] = n;
  else if (head === 4) {
    out[1] = 126;
    out[2] = n >> 8;
    out[3] = n & 0xff;
  } else {
    out[1] = 127;
    new DataView(out.buffer).setBigUint64(2, BigInt(n));
  }
  out.set(payload, head);
  return out;
}

export function closeFrame(code: number, reason: string): Uint8Array {
  const r = new TextEncoder().encode(reason.slice(0, 100));
  const p = new Uint8Array(2 + r.length);
  p[0] = code >> 8;
  p[1] = code & 0xff;
  p.set(r, 2);
  return serverFrame(0x8, p);
}
