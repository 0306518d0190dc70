// RFC 7983 demultiplexing by the first byte of a datagram: the one classifier, used by the relay
// engines (on a client datagram at 0, or the payload of a backbone frame at its header's end)
// and by the transceiver's mux. No view is made and nothing allocates.
export const DatagramKind = {
  stun: 0,
  dtls: 1,
  rtp: 2,
  rtcp: 3,
  other: 4,
} as const;
export type DatagramKind = (typeof DatagramKind)[keyof typeof DatagramKind];
export const DATAGRAM_KIND_NAMES = ["stun", "dtls", "rtp", "rtcp", "other"] as const;

/** The kind of the datagram at `buf[off..len)` (`len` counts from the start of `buf`). */
export function classifyDatagram(buf: Uint8Array, len: number, off = 0): DatagramKind {
  if (len > buf.length) len = buf.length;
  if (len <= off || off < 0) return DatagramKind.other;
  const b = buf[off]!;
  if (b <= 3) return DatagramKind.stun;
  if (b >= 20 && b <= 63) return DatagramKind.dtls;
  if (b >= 128 && b <= 191) {
    // RFC 5761: RTCP packet types 192-223 share the second byte's range with RTP payload types.
    if (len < off + 2) return DatagramKind.other;
    const pt = buf[off + 1]!;
    return pt >= 192 && pt <= 223 ? DatagramKind.rtcp : DatagramKind.rtp;
  }
  return DatagramKind.other;
}

/**
 * The STUN class bits of a datagram at `off` already classified as stun with two bytes there
 * (0 request, 1 indication, 2 success, 3 error).
 */
export function stunClassAt(buf: Uint8Array, off: number): number {
  const t = (buf[off]! << 8) | buf[off + 1]!;
  return ((t >> 7) & 2) | ((t >> 4) & 1);
}
