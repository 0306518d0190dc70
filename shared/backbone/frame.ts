// The backbone frame: a fixed 28-byte header in front of each opaque client datagram between
// POPs, cluster relays and transceivers (docs/wire-formats.md §3). In the spirit of Jitsi's Octo
// header, plus the client's address so the transceiver learns who the client really is.
//
//   0      magic 0x47 ('G')
//   1      version (high 4 bits) | frame type (low 4 bits)
//   2      flags: bit 0 = client address is IPv6, bit 1 = TCP-borne (RFC 4571 framing at the POP)
//   3      reserved (0)
//   4-5    POP id
//   6-7    cluster id
//   8-9    transceiver id
//   10-11  client UDP port
//   12-27  client IP: IPv6, or IPv4 in the last 4 bytes with bytes 12-23 zero
//   28-    payload (the client's datagram, untouched)

export const FRAME_MAGIC = 0x47;
export const FRAME_VERSION = 1;
export const FRAME_HEADER_BYTES = 28;
/** Largest payload: a UDP datagram over IPv4 less our header. */
export const FRAME_MAX_PAYLOAD = 65507 - FRAME_HEADER_BYTES;

/** Flag bits (byte 2). */
export const FRAME_FLAG_IPV6 = 1;
/** The client reached the POP over TCP (ICE-TCP, RFC 6544); the client port is its TCP port. */
export const FRAME_FLAG_TCP = 2;
const KNOWN_FLAGS = FRAME_FLAG_IPV6 | FRAME_FLAG_TCP;

export const FrameType = {
  /** A client datagram (either direction). */
  data: 1,
  /** The transceiver ended the session: the relays drop the flow at once. Payload: 1 reason byte. */
  flowClose: 2,
  /** Liveness / RTT probe between backbone peers; payload is echoed in the pong. */
  ping: 3,
  pong: 4,
  /**
   * Transceiver to relays: the transceiver's own connectivity check to the client address in the
   * header was answered (RFC 8445 §7.2.5.3), so the address is not spoofed. The relays then treat
   * the flow as established (long timer, no amplification budget, mirrored). No payload.
   */
  pathValidated: 5,
  // 6 is reserved: the conference frame (shared/conference/frame.ts), transceiver to transceiver,
  // never on a relay path; decodeFrameHeader rejects it as bad-type.
} as const;
export type FrameType = (typeof FrameType)[keyof typeof FrameType];
export const FRAME_TYPE_NAMES: Record<number, string> = {
  1: "data",
  2: "flow-close",
  3: "ping",
  4: "pong",
  5: "path-validated",
};

export const FlowCloseReason = {
  hangup: 1,
  timeout: 2,
  consentLost: 3,
  maxDuration: 4,
  drain: 5,
  error: 6,
} as const;

/** Header fields. Reuse one instance per worker; `clientIp` is always 16 bytes. */
export interface FrameHeader {
  type: number;
  popId: number;
  clusterId: number;
  transceiverId: number;
  clientIpv6: boolean;
  /** The client's datagrams travel over a TCP connection to the POP (RFC 4571 framed there). */
  clientTcp: boolean;
  clientPort: number;
  /** 16 bytes; IPv4 in bytes 12-15 with 0-11 zero. */
  clientIp: Uint8Array;
}

export type FrameStatus =
  | "ok"
  | "truncated"
  | "bad-magic"
  | "unsupported-version"
  | "bad-type"
  | "bad-address";

export function newFrameHeader(): FrameHeader {
  return {
    type: FrameType.data,
    popId: 0,
    clusterId: 0,
    transceiverId: 0,
    clientIpv6: false,
    clientTcp: false,
    clientPort: 0,
    clientIp: new Uint8Array(16),
  };
}

/** Writes the header at `buf[off..off+28]`. The caller sized `buf`; nothing is allocated. */
export function encodeFrameHeader(buf: Uint8Array, off: number, h: FrameHeader): void {
  buf[off] = FRAME_MAGIC;
  buf[off + 1] = (FRAME_VERSION << 4) | (h.type & 15);
  buf[off + 2] = (h.clientIpv6 ? FRAME_FLAG_IPV6 : 0) | (h.clientTcp ? FRAME_FLAG_TCP : 0);
  buf[off + 3] = 0;
  buf[off + 4] = h.popId >> 8;
  buf[off + 5] = h.popId & 255;
  buf[off + 6] = h.clusterId >> 8;
  buf[off + 7] = h.clusterId & 255;
  buf[off + 8] = h.transceiverId >> 8;
  buf[off + 9] = h.transceiverId & 255;
  buf[off + 10] = h.clientPort >> 8;
  buf[off + 11] = h.clientPort & 255;
  const ip = h.clientIp;
  if (h.clientIpv6) {
    for (let i = 0; i < 16; i++) buf[off + 12 + i] = ip[i]!;
  } else {
    for (let i = 0; i < 12; i++) buf[off + 12 + i] = 0;
    buf[off + 24] = ip[12]!;
    buf[off + 25] = ip[13]!;
    buf[off + 26] = ip[14]!;
    buf[off + 27] = ip[15]!;
  }
}

/** Validates and reads a header from `buf[0..len]`. The payload starts at FRAME_HEADER_BYTES. */
export function decodeFrameHeader(buf: Uint8Array, len: number, h: FrameHeader): FrameStatus {
  if (len < FRAME_HEADER_BYTES || len > buf.length) return "truncated";
  if (buf[0] !== FRAME_MAGIC) return "bad-magic";
  const vt = buf[1]!;
  if (vt >> 4 !== FRAME_VERSION) return "unsupported-version";
  const type = vt & 15;
  if (type < FrameType.data || type > FrameType.pathValidated) return "bad-type";
  const flags = buf[2]!;
  if ((flags & ~KNOWN_FLAGS) !== 0 || buf[3] !== 0) return "bad-type";
  h.type = type;
  h.clientIpv6 = (flags & FRAME_FLAG_IPV6) !== 0;
  h.clientTcp = (flags & FRAME_FLAG_TCP) !== 0;
  h.popId = (buf[4]! << 8) | buf[5]!;
  h.clusterId = (buf[6]! << 8) | buf[7]!;
  h.transceiverId = (buf[8]! << 8) | buf[9]!;
  h.clientPort = (buf[10]! << 8) | buf[11]!;
  const ip = h.clientIp;
  for (let i = 0; i < 16; i++) ip[i] = buf[12 + i]!;
  if (!h.clientIpv6) {
    for (let i = 0; i < 12; i++) if (ip[i] !== 0) return "bad-address";
  }
  if ((type === FrameType.data || type === FrameType.pathValidated) && h.clientPort === 0)
    return "bad-address";
  return "ok";
}
