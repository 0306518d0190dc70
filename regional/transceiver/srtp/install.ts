// Swaps the fast AES-CM/HMAC-SHA1 methods (ctr-cipher.ts) into werift's CipherAesCtr, through the
// class werift's exported SrtpSession builds, and the RTP/RTCP header parsers (rtp-header.ts) into
// the exported RtpHeader/RtcpHeader: no file in node_modules is touched. Pinned to
// werift 0.25.2 by a fingerprint of the replaced code's source; when werift changes underneath, nothing
// is swapped (werift's own, slower, code keeps running) and the caller warns, while
// test/transceiver/srtp-install.test.ts fails until the swap is checked against the new source.
//
// It also replaces werift's SRTP packet index estimate (Context.updateRolloverCount) with RFC 3711
// 3.3.1's (packet-index.ts), pinned the same way by its own fingerprint: installPacketIndexEstimate.
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
  SrtpSession,
} from "werift";
import { decryptRTCP, decryptRtp, encryptRTCP, encryptRtp } from "./ctr-cipher.ts";
import { updateRolloverCount } from "./packet-index.ts";
import { fastRtcpHeaderParser, fastRtpHeaderParser } from "./rtp-header.ts";

/** sha256 of werift 0.25.2's CipherAesCtr class and RTP/RTCP header parsers (see fingerprint()). */
export const WERIFT_CTR_FINGERPRINT = "d614e09fc3cfe83efba1d7ac295bca0d7d8c55228db745ab7f0a65525d8f3415";

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
const parserSource = RtpHeader.deSerialize.toString() + RtcpHeader.deSerialize.toString();

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

/** sha256 of werift 0.25.2's Context.updateRolloverCount and SrtpContext.encryptRtp/decryptRtp. */
export const WERIFT_ROC_FINGERPRINT = "7455284072e46485b69c77c695a8901b1db40b66110ed16c620f138b01362777";

// The prototype that defines updateRolloverCount (SrtpContext's Context base), and the source of
// werift's own method and its callers as first seen (before the swap).
let rocProtos: { owner: Proto; source: string } | undefined;

function rocPrototypes(): { owner: Proto; source: string } {
  if (rocProtos !== undefined) return rocProtos;
  const srtp = Object.getPrototypeOf(probeSession().localContext) as Proto;
  let owner: Proto | null = srtp;
  while (owner !== null && !Object.hasOwn(owner, "updateRolloverCount")) {
    owner = Object.getPrototypeOf(owner) as Proto | null;
  }
  // Both decryptRtp's commit-after-authentication and encryptRtp's use of the state are part of
  // what the replacement relies on, so their source is in the fingerprint too.
  const source = [owner?.updateRolloverCount, srtp.encryptRtp, srtp.decryptRtp].map(String).join("\n");
  rocProtos = { owner: owner ?? srtp, source };
  return rocProtos;
}

/** The fingerprint of werift's packet index estimate and its two callers (before any swap). */
export function packetIndexFingerprint(): string {
  return createHash("sha256").update(rocPrototypes().source).digest("hex");
}

let rocInstalled: InstallResult | undefined;

/** Idempotent swap of werift's SRTP packet index estimate for RFC 3711's. `expected` is for tests. */
export function installPacketIndexEstimate(expected = WERIFT_ROC_FINGERPRINT): InstallResult {
  if (rocInstalled?.ok) return rocInstalled;
  const seen = packetIndexFingerprint();
  if (seen !== expected) {
    return {
      ok: false,
      reason: `werift's SRTP rollover counter code changed (fingerprint ${seen.slice(0, 12)})`,
    };
  }
  rocPrototypes().owner.updateRolloverCount = updateRolloverCount;
  rocInstalled = { ok: true, swapped: true };
  return rocInstalled;
}
