// Test material for the relay: keys, minted hints, client STUN messages, backbone frames.
import { randomBytes } from "node:crypto";
import { hmacSha1, nodeMac } from "../../regional/common/hmac.ts";
import { parseIpv4, writeIpv4 } from "../../shared/backbone/address.ts";
import {
  decodeFrameHeader,
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  FrameType,
  newFrameHeader,
} from "../../shared/backbone/frame.ts";
import { HintVerifier, mintHint } from "../../shared/hint/codec.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { encodeBindingRequest, encodeStunMessage } from "../../shared/stun/writer.ts";

export const HINT_KEYS = `3:${Buffer.alloc(32, 7).toString("base64")},1:${Buffer.alloc(32, 9).toString("base64")}`;
export const OTHER_KEYS = `3:${Buffer.alloc(32, 8).toString("base64")}`;
export const mac = nodeMac(parseKeyring(HINT_KEYS, "GR_HINT_KEYS", 15));
export const verifier = (): HintVerifier => new HintVerifier(mac);

export function hint(clusterId: number, transceiverId: number, keys = HINT_KEYS): string {
  const m = keys === HINT_KEYS ? mac : nodeMac(parseKeyring(keys, "keys", 15));
  return mintHint({ clusterId, transceiverId, random: randomBytes(4) }, m);
}

export function txid(): Uint8Array {
  return new Uint8Array(randomBytes(12));
}

/** A client's connectivity check: USERNAME "<serverUfrag>:<clientUfrag>". */
export function bindingRequest(serverUfrag: string, id = txid()): Buffer {
  return Buffer.from(
    encodeBindingRequest({
      transactionId: id,
      username: `${serverUfrag}:cli1`,
      password: "0123456789abcdefghijkl",
      hmacSha1,
    }),
  );
}

/** A Binding success response (what the transceiver or the client answers). */
export function bindingSuccess(id: Uint8Array): Buffer {
  const xma = new Uint8Array([0, 1, 0x21 ^ 0x12, 0x34, 1, 2, 3, 4]);
  return Buffer.from(
    encodeStunMessage({
      type: 0x0101,
      transactionId: id,
      attributes: [{ type: 0x0020, value: xma }],
      integrityKey: new TextEncoder().encode("0123456789abcdefghijkl"),
      hmacSha1,
      fingerprint: true,
    }),
  );
}

export interface FrameSpec {
  type?: number;
  popId: number;
  clusterId: number;
  transceiverId: number;
  clientIp: string;
  clientPort: number;
  /** TCP-borne flag. */
  tcp?: boolean;
}

export function frame(spec: FrameSpec, payload: Uint8Array): Buffer {
  const h = newFrameHeader();
  h.type = spec.type ?? FrameType.data;
  h.popId = spec.popId;
  h.clusterId = spec.clusterId;
  h.transceiverId = spec.transceiverId;
  h.clientPort = spec.clientPort;
  h.clientIpv6 = false;
  h.clientTcp = spec.tcp === true;
  writeIpv4(h.clientIp, parseIpv4(spec.clientIp));
  const buf = Buffer.alloc(FRAME_HEADER_BYTES + payload.length);
  encodeFrameHeader(buf, 0, h);
  buf.set(payload, FRAME_HEADER_BYTES);
  return buf;
}

export function readFrame(buf: Uint8Array): (FrameSpec & { type: number; payload: Buffer }) | null {
  const h = newFrameHeader();
  if (decodeFrameHeader(buf, buf.length, h) !== "ok") return null;
  return {
    type: h.type,
    popId: h.popId,
    clusterId: h.clusterId,
    transceiverId: h.transceiverId,
    clientIp: `${h.clientIp[12]}.${h.clientIp[13]}.${h.clientIp[14]}.${h.clientIp[15]}`,
    clientPort: h.clientPort,
    tcp: h.clientTcp,
    payload: Buffer.from(buf.subarray(FRAME_HEADER_BYTES)),
  };
}

/** An RTP-looking datagram (version 2, payload type 111). */
export function rtp(size = 200, seq = 1): Buffer {
  const b = Buffer.alloc(size);
  b[0] = 0x80;
  b[1] = 111;
  b.writeUInt16BE(seq & 0xffff, 2);
  return b;
}

/** A DTLS-looking datagram (content type 22). */
export function dtls(size = 120): Buffer {
  const b = Buffer.alloc(size, 1);
  b[0] = 22;
  return b;
}
