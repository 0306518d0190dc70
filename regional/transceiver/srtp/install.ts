// Swaps the fast AES-CM/HMAC-SHA1 methods (ctr-cipher.ts) into werift's CipherAesCtr, through the
// class werift's exported SrtpSession builds, and the RTP/RTCP header parsers (rtp-header.ts) into
// the exported RtpHeader/RtcpHeader: no file in node_modules is touched. Pinned to
// werift 0.25.2 by a fingerprint of the replaced code's source; when werift changes underneath, nothing
// is swapped (werift's own, slower, code keeps running) and the caller warns, while
// test/transceiver/srtp-install.test.ts fails until the swap is checked against the new source.
//
// It also replaces werift's SRTP packet index estimate (Context.updateRolloverCount) with RFC 3711
// 3.3.1's (packet-index.ts), and its SRTP/SRTCP unprotect with one that keeps 3.3.2's replay
// window (unprotect.ts), pinned the same way by their own fingerprint: installPacketIndexEstimate.
//
// It also orders the SRTP profiles this process offers in DTLS (RFC 5764 4.1.1): AES-CM first,
// or AES-CM alone, since the DTLS server picks by its own preference and werift (like Chromium)
// prefers AES-GCM, which node:crypto can only do with a cipher object per packet.

import { createHash } from "node:crypto";
import {
  ProtectionProfileAeadAes128Gcm,
  ProtectionProfileAes128CmHmacSha1_80,
  RTCDtlsTransport,
  RtcpHeader,
  RtpHeader,
  RtpPacket,
  SrtcpSession,
  SrtpSession,
} from "werift";
import { decryptRTCP, decryptRtp, encryptRTCP, encryptRtp } from "./ctr-cipher.ts";
import { updateRolloverCount } from "./packet-index.ts";
import { fastRtcpHeaderParser, fastRtpHeaderParser, fastRtpPacketParser } from "./rtp-header.ts";
import { decryptRTCP as unprotectRtcp, decryptRtp as unprotectRtp } from "./unprotect.ts";

/** sha256 of werift 0.25.2's CipherAesCtr class and RTP/RTCP header and RTP packet parsers (see fingerprint()). */
export const WERIFT_CTR_FINGERPRINT = "9a1ab6caeda5654925df656e8806944bfb9c687b316de8a8b2673e3285b71827";

/** Which SRTP profiles this process offers, in order ("werift": AES-GCM first, as shipped). */
export const SRTP_PROFILE_ORDERS = ["aes-cm-only", "aes-cm-first", "werift"] as const;
export type SrtpProfileOrder = (typeof SRTP_PROFILE_ORDERS)[number];

export type InstallResult = { ok: true; swapped: boolean } | { ok: false; reason: string };

type Proto = Record<string, unknown>;

function probeSession(): SrtpSession {
  const z = (n: number) => Buffer.alloc(n);
  const keys = {
    localMasterKey: z(16),
    localMasterSalt: z(14),
    remoteMasterKey: z(16),
    remoteMasterSalt: z(14),
  };
  return new SrtpSession({ keys, profile: ProtectionProfileAes128CmHmacSha1_80 });
}

function ctrClass(): { prototype: Proto; toString(): string } {
  const cipher = probeSession().localContext.cipher as object;
  return cipher.constructor as unknown as { prototype: Proto; toString(): string };
}

/** The fingerprint of the code the swap replaces, as werift has it right now. */
export function fingerprint(): string {
  return createHash("sha256").update(ctrClass().toString()).update(parserSource).digest("hex");
}

// werift's own parsers, as imported (the fingerprint is of these, before or after the swap).
const rtpParse = RtpHeader.deSerialize.bind(RtpHeader);
const rtcpParse = RtcpHeader.deSerialize.bind(RtcpHeader);
const packetParse = RtpPacket.deSerialize.bind(RtpPacket);
const parserSource =
  RtpHeader.deSerialize.toString() + RtcpHeader.deSerialize.toString() + RtpPacket.deSerialize.toString();

let installed: InstallResult | undefined;
// The profile order of this process: the last install call sets it (the swap itself happens once).
let offered: number[] | undefined;

/** Idempotent swap; each call sets the profile order. `expected` is for tests. */
export function installFastSrtp(
  order: SrtpProfileOrder = "aes-cm-only",
  expected = WERIFT_CTR_FINGERPRINT,
): InstallResult {
  if (installed?.ok) {
    offered = profilesOf(order);
    return installed;
  }
  const cls = ctrClass();
  const seen = fingerprint();
  if (seen !== expected) {
    return { ok: false, reason: `werift's CipherAesCtr changed (fingerprint ${seen.slice(0, 12)})` };
  }
  const p = cls.prototype;
  p.encryptRtp = encryptRtp;
  p.decryptRtp = decryptRtp;
  p.encryptRTCP = encryptRTCP;
  p.decryptRTCP = decryptRTCP;
  RtpHeader.deSerialize = fastRtpHeaderParser(rtpParse);
  RtcpHeader.deSerialize = fastRtcpHeaderParser(rtcpParse);
  RtpPacket.deSerialize = fastRtpPacketParser(packetParse);
  offered = profilesOf(order);
  const proto = RTCDtlsTransport.prototype as unknown as { start: (...a: unknown[]) => unknown };
  const start = proto.start;
  // werift reads srtpProfiles when start() builds its DtlsClient/DtlsServer.
  proto.start = function (this: { srtpProfiles: number[] }, ...a: unknown[]) {
    if (offered !== undefined) this.srtpProfiles = offered.slice();
    return start.apply(this, a);
  };
  installed = { ok: true, swapped: true };
  return installed;
}

function profilesOf(order: SrtpProfileOrder): number[] | undefined {
  if (order === "werift") return undefined;
  if (order === "aes-cm-only") return [ProtectionProfileAes128CmHmacSha1_80];
  return [ProtectionProfileAes128CmHmacSha1_80, ProtectionProfileAeadAes128Gcm];
}

/**
 * sha256 of the werift 0.25.2 code the receive-side swap replaces or relies on (see
 * packetIndexFingerprint): Context.updateRolloverCount, the SrtpContext and SrtcpContext classes,
 * CipherAesGcm and CipherAesCtr, and RTCDtlsTransport's startSrtp / updateSrtpSession.
 */
export const WERIFT_ROC_FINGERPRINT = "031e7df128673e6ea84886653b947fb628b91a8ffb333a1f631dd5b60e3169a3";

// The prototypes the receive-side swap writes to (updateRolloverCount's owner, Context; the
// SrtpContext and SrtcpContext prototypes), and the source of what it replaces or relies on as
// first seen (before the swap).
interface ReceiveProtos {
  owner: Proto;
  srtp: Proto;
  srtcp: Proto;
  source: string;
}
let rocProtos: ReceiveProtos | undefined;

function rocPrototypes(): ReceiveProtos {
  if (rocProtos !== undefined) return rocProtos;
  const srtp = Object.getPrototypeOf(probeSession().localContext) as Proto;
  let owner: Proto | null = srtp;
  while (owner !== null && !Object.hasOwn(owner, "updateRolloverCount")) {
    owner = Object.getPrototypeOf(owner) as Proto | null;
  }
  const [k, salt] = [Buffer.alloc(16), Buffer.alloc(14)];
  const keys = { localMasterKey: k, localMasterSalt: salt, remoteMasterKey: k, remoteMasterSalt: salt };
  const srtcp = Object.getPrototypeOf(
    new SrtcpSession({ keys, profile: ProtectionProfileAes128CmHmacSha1_80 }).remoteContext,
  ) as Proto;
  const gcm = new SrtpSession({ keys, profile: ProtectionProfileAeadAes128Gcm }).localContext.cipher;
  const dtls = RTCDtlsTransport.prototype as unknown as Proto;
  // Replaced: updateRolloverCount, SrtpContext.decryptRtp, SrtcpContext.decryptRTCP. Relied on:
  // encryptRtp's use of the state, the tag lengths (rtpAuthTagLength), where werift's ciphers put
  // the SRTCP index and that they throw before returning on a failed tag (its AES-CM runs when
  // installFastSrtp refused), that startSrtp drops what throws an SrtpAuthenticationError, and
  // that updateSrtpSession makes the contexts once.
  const source = [
    owner?.updateRolloverCount,
    srtp.constructor,
    srtcp.constructor,
    (gcm as object).constructor,
    ctrClass(),
    dtls.startSrtp,
    dtls.updateSrtpSession,
  ]
    .map(String)
    .join("\n");
  rocProtos = { owner: owner ?? srtp, srtp, srtcp, source };
  return rocProtos;
}

/** The fingerprint of werift's SRTP receive code the swap replaces or relies on (before any swap). */
export function packetIndexFingerprint(): string {
  return createHash("sha256").update(rocPrototypes().source).digest("hex");
}

let rocInstalled: InstallResult | undefined;

/**
 * Idempotent swap of werift's SRTP receive side for RFC 3711 3.3's: the packet index estimate
 * (3.3.1, packet-index.ts, protect and unprotect) and unprotect with a replay window (3.3.2,
 * unprotect.ts; enforced on the contexts guardReplays names). `expected` is for tests.
 */
export function installPacketIndexEstimate(expected = WERIFT_ROC_FINGERPRINT): InstallResult {
  if (rocInstalled?.ok) return rocInstalled;
  const seen = packetIndexFingerprint();
  if (seen !== expected) {
    return {
      ok: false,
      reason: `werift's SRTP receive code changed (fingerprint ${seen.slice(0, 12)}): no RFC 3711 index estimate, no replay window`,
    };
  }
  const p = rocPrototypes();
  p.owner.updateRolloverCount = updateRolloverCount;
  p.srtp.decryptRtp = unprotectRtp;
  p.srtcp.decryptRTCP = unprotectRtcp;
  rocInstalled = { ok: true, swapped: true };
  return rocInstalled;
}
