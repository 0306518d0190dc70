// SRTP and SRTCP unprotect with RFC 3711 3.3.2's replay check, in place of werift 0.25.2's
// SrtpContext.decryptRtp and SrtcpContext.decryptRTCP (install.ts swaps them in with the packet
// index estimate, pinned by the same fingerprint). werift keeps no replay list: an authenticated
// packet received again was decrypted and delivered again.
//
// Every profile passes here, since the context calls whichever cipher it holds (ours for AES-CM,
// werift's for AES-GCM). The packet's index is checked against its SSRC's window before the
// cipher authenticates it, and the window (and the ROC state) moves only once it did. A replay
// throws an SrtpAuthenticationError, which werift's DTLS transport catches and drops silently;
// one error instance per kind, so a flood of replays captures no stack per packet.
//
// Only contexts given a sink (guardReplays, done by the transceiver for each call once SRTP
// starts) check: other werift peers in the process (test clients) keep werift's behaviour, in
// which a packet asked for again by NACK and received twice is delivered twice.

import { ProtectionProfileAeadAes128Gcm, type RtcpHeader, RtpHeader, SrtpAuthenticationError } from "werift";
import { commitIndex, packetRoc, type SrtpSsrcState } from "./packet-index.ts";
import { FRESH, ReplayWindow } from "./replay-window.ts";
import { parseRtpHeader, rememberDecrypted } from "./rtp-header.ts";

/** Called once per packet dropped as a replay. */
export type ReplaySink = () => void;

/**
 * SSRCs a guarded context keeps state for (a call has one or two): a client holding the call's
 * keys cannot make werift's per-SSRC table or our windows grow without end. A packet of one more
 * is dropped before its tag is checked.
 */
export const MAX_SSRCS_PER_CONTEXT = 16;

export class SrtpReplayError extends SrtpAuthenticationError {
  constructor(message: string) {
    super(message);
    this.name = "SrtpReplayError";
  }
}

const RTP_REPLAYED = new SrtpReplayError("SRTP packet replayed or too old (RFC 3711 3.3.2)");
const RTCP_REPLAYED = new SrtpReplayError("SRTCP packet replayed or too old (RFC 3711 3.3.2)");
const TOO_MANY_SSRCS = new SrtpReplayError(`more than ${MAX_SSRCS_PER_CONTEXT} SSRCs on one SRTP context`);
const RTP_FAILED = "Failed to authenticate SRTP packet";
const RTP_HEADER = 12;
const RTCP_HEADER = 8;
const SRTCP_INDEX = 4;
const CM_TAG = 10;

const GUARD = Symbol("srtp replay guard");

interface Guard {
  readonly onReplay: ReplaySink;
  readonly onTooManySsrcs: ReplaySink;
  /** SSRCs of werift's per-SSRC SRTP table added since the guard (bounded by MAX_SSRCS_PER_CONTEXT). */
  rtpSsrcs: number;
  /** SRTCP windows by sender SSRC (SRTP keeps its own on werift's per-SSRC state). */
  readonly rtcp: Map<number, ReplayWindow>;
}

interface Cipher {
  decryptRtp(packet: Buffer, roc: number, header: RtpHeader): [Buffer, RtpHeader];
  decryptRTCP(packet: Buffer): [Buffer, RtcpHeader];
}

/** werift's per-SSRC state on the receiving context, with the replay window added. */
interface RtpState extends SrtpSsrcState {
  ssrc: number;
  window: ReplayWindow | undefined;
}

/** The members of werift's SrtpContext / SrtcpContext used here. */
interface Ctx {
  cipher: Cipher;
  profile: number;
  srtpSSRCStates: Record<number, RtpState | undefined>;
  readonly rtpAuthTagLength: number;
  [GUARD]?: Guard;
}

/**
 * From now on, `context` (a werift SrtpContext or SrtcpContext) drops replays and packets of an
 * SSRC past MAX_SSRCS_PER_CONTEXT, and reports each.
 */
export function guardReplays(
  context: object,
  onReplay: ReplaySink,
  onTooManySsrcs: ReplaySink = onReplay,
): void {
  const ctx = context as Ctx;
  const known = Object.keys(ctx.srtpSSRCStates ?? {}).length;
  ctx[GUARD] = { onReplay, onTooManySsrcs, rtpSsrcs: known, rtcp: new Map() };
}

/** True when `context` was given a sink. */
export function isGuarded(context: object): boolean {
  return (context as Ctx)[GUARD] !== undefined;
}

function fail(message: string): never {
  throw new SrtpAuthenticationError(message);
}

// werift's parseSrtpRtpHeader (not exported): the lengths, then the header (rtp-header.ts, or
// werift's RtpHeader.deSerialize where that one declines), with werift's errors.
function parseHeader(packet: Buffer, tag: number): RtpHeader {
  const tagAt = packet.length - tag;
  if (packet.length < RTP_HEADER + tag) fail(RTP_FAILED);
  let h: RtpHeader | undefined = parseRtpHeader(packet, tagAt);
  if (h === undefined) {
    try {
      h = RtpHeader.deSerialize(packet.subarray(0, tagAt));
    } catch {
      fail(RTP_FAILED);
    }
  }
  h.paddingSize = 0;
  if (h.payloadOffset < RTP_HEADER || h.payloadOffset > tagAt) fail(RTP_FAILED);
  return h;
}

/** The replacement for werift's `SrtpContext.prototype.decryptRtp(packet)`. */
export function decryptRtp(this: Ctx, packet: Buffer): [Buffer, RtpHeader] {
  const header = parseHeader(packet, this.rtpAuthTagLength);
  const ssrc = header.ssrc;
  const seq = header.sequenceNumber;
  let s = this.srtpSSRCStates[ssrc];
  const roc = packetRoc(s, seq);
  const index = roc * 0x10000 + seq;
  const guard = this[GUARD];
  const w = s?.window;
  if (guard !== undefined) {
    if (w !== undefined && w.check(index) !== FRESH) {
      guard.onReplay();
      throw RTP_REPLAYED;
    }
    if (s === undefined && guard.rtpSsrcs >= MAX_SSRCS_PER_CONTEXT) {
      guard.onTooManySsrcs();
      throw TOO_MANY_SSRCS;
    }
  }
  // Throws on a failed tag: nothing below runs for a forged packet.
  const out = this.cipher.decryptRtp(packet, roc, header);
  if (s === undefined) {
    s = {
      ssrc,
      rolloverCounter: 0,
      lastSequenceNumber: 0,
      rolloverHasProcessed: false,
      roc: undefined,
      window: undefined,
    };
    this.srtpSSRCStates[ssrc] = s;
    if (guard !== undefined) guard.rtpSsrcs++;
  }
  commitIndex(s, seq, roc);
  if (guard !== undefined) {
    s.window ??= new ReplayWindow();
    s.window.commit(index);
  }
  // The ciphers copy the header into their output unchanged and read its padding from the plaintext.
  rememberDecrypted(out[0], out[1]);
  return out;
}

/** The replacement for werift's `SrtcpContext.prototype.decryptRTCP(packet)`. */
export function decryptRTCP(this: Ctx, packet: Buffer): [Buffer, RtcpHeader] {
  const guard = this[GUARD];
  // E flag and 31-bit index: before the tag (RFC 3711 3.4), or after it (AEAD, RFC 7714 9.2).
  const at = packet.length - SRTCP_INDEX - (this.profile === ProtectionProfileAeadAes128Gcm ? 0 : CM_TAG);
  // Too short to hold an index: the cipher rejects it.
  if (guard === undefined || at < RTCP_HEADER) return this.cipher.decryptRTCP(packet);
  const ssrc = packet.readUInt32BE(4);
  const index = packet.readUInt32BE(at) & 0x7fffffff;
  let w = guard.rtcp.get(ssrc);
  if (w !== undefined && w.check(index) !== FRESH) {
    guard.onReplay();
    throw RTCP_REPLAYED;
  }
  if (w === undefined && guard.rtcp.size >= MAX_SSRCS_PER_CONTEXT) {
    guard.onTooManySsrcs();
    throw TOO_MANY_SSRCS;
  }
  const out = this.cipher.decryptRTCP(packet);
  if (w === undefined) {
    w = new ReplayWindow();
    guard.rtcp.set(ssrc, w);
  }
  w.commit(index);
  return out;
}
