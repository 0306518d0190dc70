// RFC 7983 demultiplexing by the first byte of a datagram.
export const DatagramKind = {
  stun: 0,
  dtls: 1,
  rtp: 2,
  rtcp: 3,
  other: 4,
} as const;
export type DatagramKind = (typeof DatagramKind)[keyof typeof DatagramKind];
export const DATAGRAM_KIND_NAMES = ["stun", "dtls", "rtp", "rtcp", "other"] as const;

export function classifyDatagram(buf: Uint8Array, len: number): DatagramKind {
  if (len > buf.length) len = buf.length;
  if (len < 1) return DatagramKind.other;
  const b = buf[0]!;
  if (b <= 3) return DatagramKind.stun;
  if (b >= 20 && b <= 63) return DatagramKind.dtls;
  if (b >= 128 && b <= 191) {
    // RFC 5761: RTCP packet types 192-223 share the second byte's range with RTP payload types.
    if (len < 2) return DatagramKind.other;
    const pt = buf[1]!;
    return pt >= 192 && pt <= 223 ? DatagramKind.rtcp : DatagramKind.rtp;
  }
  return DatagramKind.other;
}
