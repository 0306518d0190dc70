// RFC 7983 demultiplexing of a datagram that starts at `off` (the payload of a backbone frame, or a
// client datagram at 0). Same rules as shared/stun/classify.ts, without making a view.
import { DatagramKind } from "../../../shared/stun/classify.ts";

export function kindAt(buf: Uint8Array, off: number, len: number): DatagramKind {
  if (len <= off) return DatagramKind.other;
  const b = buf[off]!;
  if (b <= 3) return DatagramKind.stun;
  if (b >= 20 && b <= 63) return DatagramKind.dtls;
  if (b >= 128 && b <= 191) {
    if (len < off + 2) return DatagramKind.other;
    const pt = buf[off + 1]!;
    return pt >= 192 && pt <= 223 ? DatagramKind.rtcp : DatagramKind.rtp;
  }
  return DatagramKind.other;
}

/** The STUN class bits of a datagram at `off` whose kind is stun (0 request, 1 indication, 2 success, 3 error). */
export function stunClassAt(buf: Uint8Array, off: number): number {
  const t = (buf[off]! << 8) | buf[off + 1]!;
  return ((t >> 7) & 2) | ((t >> 4) & 1);
}

/** Binding method (0x001) with the given class, checked from the type field only. */
export function isBindingAt(buf: Uint8Array, off: number, len: number): boolean {
  if (len < off + 20) return false;
  const t = (buf[off]! << 8) | buf[off + 1]!;
  return (
    (t & 0x3eef) === 0x0001 &&
    buf[off + 4] === 0x21 &&
    buf[off + 5] === 0x12 &&
    buf[off + 6] === 0xa4 &&
    buf[off + 7] === 0x42
  );
}
