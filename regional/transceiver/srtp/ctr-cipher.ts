// AES_CM_128_HMAC_SHA1_80 (RFC 3711) for werift's SRTP contexts, with one AES context and one
// HMAC key state per session key (built on first use, kept on the cipher). The methods keep the
// signatures, results and errors of werift 0.25.2's CipherAesCtr, which install.ts swaps them in
// for; the only per-packet allocations are the output packet and node:crypto's keystream buffer
// (one per 8 packets).

import {
  type RtcpHeader,
  RtcpHeader as RtcpHeaderClass,
  type RtpHeader,
  SrtpAuthenticationError,
} from "werift";
import { constantTimeEqual } from "../../../shared/bytes/constant-time.ts";
import { AesCm } from "./aes-cm.ts";
import { HmacSha1 } from "./hmac-sha1.ts";

const TAG = 10;
const SRTCP_INDEX = 4;
const RTCP_HEADER = 8;
const RTP_BASIC_HEADER = 12;

/** The fields werift's CipherAesCtr carries (derived session keys, RFC 3711 4.3). */
export interface CtrKeys {
  srtpSessionKey: Buffer;
  srtpSessionSalt: Buffer;
  srtcpSessionKey: Buffer;
  srtcpSessionSalt: Buffer;
  srtpSessionAuthTag: Buffer;
  srtcpSessionAuthTag: Buffer;
}

class FastCtr {
  readonly rtp: AesCm;
  readonly rtcp: AesCm;
  readonly rtpAuth: HmacSha1;
  readonly rtcpAuth: HmacSha1;
  readonly tag = new Uint8Array(TAG);
  constructor(k: CtrKeys) {
    this.rtp = new AesCm(k.srtpSessionKey, k.srtpSessionSalt);
    this.rtcp = new AesCm(k.srtcpSessionKey, k.srtcpSessionSalt);
    this.rtpAuth = new HmacSha1(k.srtpSessionAuthTag);
    this.rtcpAuth = new HmacSha1(k.srtcpSessionAuthTag);
  }
}

const state = new WeakMap<CtrKeys, FastCtr>();

function fast(k: CtrKeys): FastCtr {
  let f = state.get(k);
  if (f === undefined) {
    f = new FastCtr(k);
    state.set(k, f);
  }
  return f;
}

function fail(message: string): never {
  throw new SrtpAuthenticationError(message);
}

// werift's RtpHeader.serialize for a header without CSRCs or extensions (what the transceiver
// sends), written straight into the packet instead of a zeroed buffer of its own and a copy.
function writeBasicHeader(out: Buffer, h: RtpHeader): void {
  out[0] = ((h.version & 3) << 6) | (h.padding ? 0x20 : 0);
  out[1] = (h.marker ? 0x80 : 0) | (h.payloadType & 0x7f);
  out.writeUInt16BE(h.sequenceNumber, 2);
  out.writeUInt32BE(h.timestamp, 4);
  out.writeUInt32BE(h.ssrc, 8);
}

export function encryptRtp(this: CtrKeys, header: RtpHeader, payload: Buffer, roc: number): Buffer {
  const f = fast(this);
  const basic = header.csrc.length === 0 && header.extensions.length === 0 && !header.extension;
  const hdr = basic ? undefined : header.serialize(header.serializeSize);
  const at = hdr === undefined ? RTP_BASIC_HEADER : hdr.length;
  const end = at + payload.length;
  const out = Buffer.allocUnsafe(end + TAG);
  if (hdr === undefined) writeBasicHeader(out, header);
  else hdr.copy(out, 0);
  if (!f.rtp.xor(header.ssrc, roc, header.sequenceNumber, payload, 0, payload.length, out, at)) {
    throw new RangeError(`SRTP payload of ${payload.length} bytes is larger than a datagram`);
  }
  f.rtpAuth.update(out, 0, end);
  f.rtpAuth.updateUint32(roc);
  f.rtpAuth.finishInto(out, end, TAG);
  return out;
}

// werift's context always passes the header it parsed (parseSrtpRtpHeader checked the lengths).
export function decryptRtp(
  this: CtrKeys,
  packet: Buffer,
  roc: number,
  header: RtpHeader,
): [Buffer, RtpHeader] {
  const f = fast(this);
  const msg = "Failed to authenticate SRTP packet";
  const tagAt = packet.length - TAG;
  f.rtpAuth.update(packet, 0, tagAt);
  f.rtpAuth.updateUint32(roc);
  f.rtpAuth.finishInto(f.tag, 0, TAG);
  if (!constantTimeEqual(packet, tagAt, f.tag, 0, TAG)) fail(msg);
  const at = header.payloadOffset;
  const dst = Buffer.allocUnsafe(tagAt);
  packet.copy(dst, 0, 0, at);
  f.rtp.xor(header.ssrc, roc, header.sequenceNumber, packet, at, tagAt, dst, at);
  // RFC 3550 5.1: the last padding octet counts the padding, itself included.
  if (header.padding) {
    const size = tagAt > at ? dst[tagAt - 1]! : 0;
    if (size === 0 || size > tagAt - at) fail(msg);
    header.paddingSize = size;
  } else {
    header.paddingSize = 0;
  }
  return [dst, header];
}

export function encryptRTCP(this: CtrKeys, rtcp: Buffer, index: number): Buffer {
  const f = fast(this);
  const len = rtcp.length;
  const out = Buffer.allocUnsafe(len + SRTCP_INDEX + TAG);
  rtcp.copy(out, 0, 0, Math.min(len, RTCP_HEADER));
  const ssrc = rtcp.readUInt32BE(4);
  f.rtcp.xor(ssrc, index >>> 16, index & 0xffff, rtcp, RTCP_HEADER, len, out, RTCP_HEADER);
  out.writeUInt32BE((index | 0x80000000) >>> 0, len);
  f.rtcpAuth.update(out, 0, len + SRTCP_INDEX);
  f.rtcpAuth.finishInto(out, len + SRTCP_INDEX, TAG);
  return out;
}

export function decryptRTCP(this: CtrKeys, packet: Buffer): [Buffer, RtcpHeader] {
  const f = fast(this);
  const msg = "Failed to authenticate SRTCP packet";
  if (packet.length < RTCP_HEADER + TAG + SRTCP_INDEX) fail(msg);
  const header = RtcpHeaderClass.deSerialize(packet.subarray(0, 4));
  const tagAt = packet.length - TAG;
  f.rtcpAuth.update(packet, 0, tagAt);
  f.rtcpAuth.finishInto(f.tag, 0, TAG);
  if (!constantTimeEqual(packet, tagAt, f.tag, 0, TAG)) fail(msg);
  const tail = tagAt - SRTCP_INDEX;
  const out = Buffer.allocUnsafe(tail);
  const word = packet.readUInt32BE(tail);
  if (word >>> 31 === 0) {
    packet.copy(out, 0, 0, tail);
    return [out, header];
  }
  const index = word & 0x7fffffff;
  packet.copy(out, 0, 0, RTCP_HEADER);
  f.rtcp.xor(
    packet.readUInt32BE(4),
    index >>> 16,
    index & 0xffff,
    packet,
    RTCP_HEADER,
    tail,
    out,
    RTCP_HEADER,
  );
  return [out, header];
}
