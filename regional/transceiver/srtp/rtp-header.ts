// werift 0.25.2 parses every RTP and RTCP header bit by bit through strings (`getBit` turns a byte
// into a binary string six times per RTP header): about a tenth of the CPU of an SRTP round trip.
// These parse the same fields with masks into the same objects, RFC 8285 header extensions
// included (the transceiver's answer negotiates none, so browsers send none; a peer that sends
// them anyway, or a leg that negotiated them, gets the same fast parse). A header werift would read
// differently from RFC 3550 (cut short, an extension running past its block, the one-byte ID 15),
// goes to werift's parser, which then gives its own result or error.
//
// An SRTP packet's header was parsed once already, before it was authenticated (unprotect.ts):
// werift's DTLS transport parses the decrypted packet again (RtpPacket.deSerialize). That second
// parse takes the first one's header, which describes the same bytes (rememberDecrypted).

import { RtcpHeader, RtpHeader, RtpPacket } from "werift";

type RtpParse = (raw: Buffer) => RtpHeader;
type RtcpParse = (raw: Buffer) => RtcpHeader;
type PacketParse = (raw: Buffer) => RtpPacket;

const ONE_BYTE = 0xbede;
const TWO_BYTE = 0x1000;
// werift's constructor copies its argument in: a shared empty one spares an object per header.
const NO_PROPS = Object.freeze({});

interface Extension {
  id: number;
  payload: Buffer;
}

/**
 * The RTP header in raw[0, length), as werift's RtpHeader.deSerialize(raw.subarray(0, length))
 * gives it; undefined where werift's parser must decide.
 */
export function parseRtpHeader(raw: Buffer, length: number): RtpHeader | undefined {
  const b0 = raw[0];
  if (b0 === undefined || length < 12 || length > raw.length) return undefined;
  const cc = b0 & 15;
  let at = 12 + cc * 4;
  if (length < at) return undefined;
  const h = new RtpHeader(NO_PROPS);
  h.version = b0 >>> 6;
  h.padding = (b0 & 0x20) !== 0;
  h.csrcLength = cc;
  if (cc > 0) {
    const csrc: number[] = new Array(cc);
    for (let i = 0; i < cc; i++) csrc[i] = raw.readUInt32BE(12 + i * 4);
    h.csrc = csrc;
  }
  const b1 = raw[1]!;
  h.marker = (b1 & 0x80) !== 0;
  h.payloadType = b1 & 0x7f;
  h.sequenceNumber = raw.readUInt16BE(2);
  h.timestamp = raw.readUInt32BE(4);
  h.ssrc = raw.readUInt32BE(8);
  if ((b0 & 0x10) !== 0) {
    if (length < at + 4) return undefined;
    const profile = raw.readUInt16BE(at);
    const size = raw.readUInt16BE(at + 2) * 4;
    at += 4;
    const end = at + size;
    if (end > length) return undefined;
    const list = extensionsOf(raw, profile, at, end);
    if (list === undefined) return undefined;
    h.extension = true;
    h.extensionProfile = profile as RtpHeader["extensionProfile"];
    h.extensionLength = size;
    h.extensions = list as RtpHeader["extensions"];
    at = end;
  }
  h.payloadOffset = at;
  if (h.padding) h.paddingSize = raw[length - 1]!;
  return h;
}

// RFC 8285's elements in raw[at, end), as werift lists them (padding bytes skipped; another
// profile is one element of ID 0); undefined for an element werift would read past `end`.
function extensionsOf(raw: Buffer, profile: number, at: number, end: number): Extension[] | undefined {
  if (profile !== ONE_BYTE && profile !== TWO_BYTE) return [{ id: 0, payload: raw.subarray(at, end) }];
  const list: Extension[] = [];
  while (at < end) {
    const b = raw[at]!;
    if (b === 0) {
      at++;
      continue;
    }
    let id: number;
    let len: number;
    if (profile === ONE_BYTE) {
      id = b >>> 4;
      len = (b & 15) + 1;
      if (id === 15) return undefined; // werift stops there and takes the rest as payload
      at++;
    } else {
      if (at + 1 >= end) return undefined;
      id = b;
      len = raw[at + 1]!;
      at += 2;
    }
    if (at + len > end) return undefined;
    list.push({ id, payload: raw.subarray(at, at + len) });
    at += len;
  }
  return list;
}

export function fastRtpHeaderParser(original: RtpParse): RtpParse {
  return (raw) => parseRtpHeader(raw, raw.length) ?? original(raw);
}

export function fastRtcpHeaderParser(original: RtcpParse): RtcpParse {
  return (raw) => {
    if (raw.length < 4) return original(raw);
    const b0 = raw[0]!;
    return new RtcpHeader({
      version: b0 >>> 6,
      padding: (b0 & 0x20) !== 0,
      count: b0 & 31,
      type: raw[1]!,
      length: raw.readUInt16BE(2),
    });
  };
}

// The packet unprotect decrypted last, and its header (paddingSize read from the plaintext).
let decrypted: Buffer | undefined;
let decryptedHeader: RtpHeader | undefined;

/** Unprotect's output: the next RtpPacket.deSerialize of exactly this buffer takes this header. */
export function rememberDecrypted(packet: Buffer, header: RtpHeader): void {
  decrypted = packet;
  decryptedHeader = header;
}

export function fastRtpPacketParser(original: PacketParse): PacketParse {
  return (raw) => {
    const h = decryptedHeader;
    if (raw !== decrypted || h === undefined) return original(raw);
    decrypted = undefined;
    decryptedHeader = undefined;
    return new RtpPacket(h, raw.subarray(h.payloadOffset, raw.length - h.paddingSize));
  };
}
