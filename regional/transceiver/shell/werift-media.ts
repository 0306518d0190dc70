// werift's per-call media state, used directly where its public paths cost per packet or per
// sample. Read instead of getStats(): the receiver's RFC 3550 statistics (werift's
// StreamStatistics, the figures its receiver reports and its `inbound-rtp` stats carry) and the
// sender's RTCP round-trip time (its `remote-inbound-rtp`); getStats() builds the whole report
// (transports, certificates, candidate pairs) as objects and promises to read four numbers.
// Written instead of sender.sendRtp(): RtpOut, the audio send path. These are private members of
// werift 0.25.2 (pinned), listed in MEDIA_MEMBERS / SEND_MEMBERS and checked by
// assertMediaCompatible() at start-up and in test/transceiver/werift-glue.test.ts; RtpOut falls
// back to werift's sendRtp when they are missing. Facts in docs/werift.md.
import { RTCRtpReceiver, RTCRtpSender, type RTCRtpTransceiver, RtpHeader, RtpPacket } from "werift";

/** werift's StreamStatistics (media/receiver/statistics.ts), the members read here. */
interface StreamStatisticsInternals {
  readonly packets_received: number;
  /** Expected (highest sequence − first + cycles + 1) minus received, floored at 0. */
  readonly packets_lost: number;
  /** RFC 3550 interarrival jitter in timestamp units. */
  readonly jitter: number;
  readonly clockRate: number;
}

interface ReceiverInternals {
  readonly tracks: readonly { ssrc?: number }[];
  readonly remoteStreams: Record<number, StreamStatisticsInternals | undefined>;
}

interface SenderInternals {
  /** Smoothed RTCP RTT in seconds, from receiver reports on what this sender sent. */
  readonly rtt?: number;
}

/** Members read here, by owner; checked at start-up. */
export const MEDIA_MEMBERS = {
  "RTCRtpReceiver instance": ["remoteStreams", "tracks"],
  "RTCRtpSender instance": ["rtt"],
  "StreamStatistics instance": ["packets_received", "packets_lost", "jitter", "clockRate"],
} as const;

/** Inbound audio counters, as getStats()'s inbound-rtp would report them. */
export interface InboundState {
  packetsReceived: number;
  packetsLost: number;
  /** Seconds. */
  jitter: number;
}

export interface MediaStats {
  /** RTCP round-trip time in seconds, once a receiver report on our packets measured one. */
  rtcpRtt(): number | undefined;
  /** Sums the inbound streams of the call's tracks into `out`; false before the first packet. */
  inbound(out: InboundState): boolean;
}

export class MediaStatsError extends Error {
  override readonly name = "MediaStatsError";
}

const isNum = (v: unknown): v is number => typeof v === "number";

/** Reads a transceiver's receiver and sender state. */
export function mediaStatsOf(t: RTCRtpTransceiver): MediaStats {
  const receiver = t.receiver as unknown as ReceiverInternals;
  const sender = t.sender as unknown as SenderInternals;
  return {
    rtcpRtt() {
      const rtt = sender.rtt;
      return isNum(rtt) && rtt > 0 ? rtt : undefined;
    },
    inbound(out) {
      let any = false;
      out.packetsReceived = 0;
      out.packetsLost = 0;
      out.jitter = 0;
      const tracks = receiver.tracks;
      for (let i = 0; i < tracks.length; i++) {
        const ssrc = tracks[i]!.ssrc;
        if (ssrc === undefined) continue;
        const s = receiver.remoteStreams[ssrc];
        if (s === undefined) continue;
        any = true;
        out.packetsReceived += s.packets_received;
        out.packetsLost += s.packets_lost;
        // One audio track per call; with several, the worst jitter.
        if (s.clockRate > 0) out.jitter = Math.max(out.jitter, s.jitter / s.clockRate);
      }
      return any;
    },
  };
}

/** Throws a MediaStatsError naming every member missing on a bare receiver and sender. */
export function assertMediaCompatible(): void {
  const missing: string[] = [];
  const receiver = new RTCRtpReceiver({ debug: {} } as never, "audio", 1) as unknown as Record<
    string,
    unknown
  >;
  const sender = new RTCRtpSender("audio") as unknown as Record<string, unknown>;
  for (const m of MEDIA_MEMBERS["RTCRtpReceiver instance"])
    if (!(m in receiver)) missing.push(`RTCRtpReceiver#${m}`);
  for (const m of MEDIA_MEMBERS["RTCRtpSender instance"])
    if (!(m in sender)) missing.push(`RTCRtpSender#${m}`);
  if (typeof receiver.remoteStreams !== "object" || receiver.remoteStreams === null)
    missing.push("RTCRtpReceiver#remoteStreams (object)");
  if (!Array.isArray(receiver.tracks)) missing.push("RTCRtpReceiver#tracks (array)");
  (sender as unknown as { stop(): void }).stop();
  if (missing.length > 0)
    throw new MediaStatsError(`werift media members changed; missing: ${missing.join(", ")}`);
}

/** werift's RTCRtpSender, the members the send path below reads and writes. */
interface SenderSendInternals {
  readonly stopped: boolean;
  readonly rtpContinuityPending: boolean;
  readonly pendingRtpEnabled: boolean;
  readonly headerExtensions: readonly unknown[];
  readonly redRedundantPayloadType?: number;
  readonly dtlsTransport?: {
    readonly state: string;
    sendRtp(payload: Buffer, header: RtpHeader): Promise<number>;
  };
  readonly codec?: { readonly payloadType?: number };
  readonly ssrc: number;
  readonly seqOffset: number;
  readonly timestampOffset: number;
  timestamp?: number;
  sequenceNumber?: number;
  ntpTimestamp: bigint;
  rtpTimestamp: number;
  octetCount: number;
  headerBytesSent: number;
  packetCount: number;
  readonly rtcpRunning: boolean;
  runRtcp(): Promise<void>;
}

export const SEND_MEMBERS = [
  "stopped",
  "rtpContinuityPending",
  "pendingRtpEnabled",
  "headerExtensions",
  "redRedundantPayloadType",
  "dtlsTransport",
  "codec",
  "ssrc",
  "seqOffset",
  "timestampOffset",
  "timestamp",
  "sequenceNumber",
  "ntpTimestamp",
  "rtpTimestamp",
  "octetCount",
  "headerBytesSent",
  "packetCount",
  "rtcpRunning",
  "runRtcp",
] as const;

const NTP_EPOCH_OFFSET_S = 2_208_988_800;
let ntpMs = -1;
let ntpValue = 0n;

/** The 64-bit NTP time of now (RFC 3550 4), one BigInt per millisecond for every call. */
function ntpNow(): bigint {
  const ms = Math.floor(performance.timeOrigin + performance.now());
  if (ms !== ntpMs) {
    ntpMs = ms;
    const s = Math.floor(ms / 1000) + NTP_EPOCH_OFFSET_S;
    const frac = Math.floor(((ms % 1000) / 1000) * 0x1_0000_0000);
    ntpValue = (BigInt(s) << 32n) | BigInt(frac);
  }
  return ntpValue;
}

/**
 * One call's audio RTP out, as werift's `sender.sendRtp(packet)` sends it when the call has no
 * RTP header extensions, no RED and no pending-RTP queue (what serverPeerConnection negotiates):
 * the same SSRC, payload type, sequence and timestamp offsets, sender-report counters and
 * SRTP/ICE path (werift's `dtlsTransport.sendRtp`), without its per-packet packet clone,
 * extension mapping, BigInt arithmetic, string-built NTP time and three promises. Not kept: the
 * NACK history (audio is answered without nack feedback) and the send-side bandwidth estimator's
 * bookkeeping (only transport-cc feedback reads it, never negotiated for audio). Anything else
 * goes through werift's own path.
 */
export class RtpOut {
  readonly #sender: RTCRtpSender;
  readonly #s: SenderSendInternals;
  readonly #header = new RtpHeader();
  readonly #fast: boolean;

  constructor(sender: RTCRtpSender) {
    this.#sender = sender;
    this.#s = sender as unknown as SenderSendInternals;
    const o = sender as unknown as Record<string, unknown>;
    this.#fast = SEND_MEMBERS.every((m) => m in o) && typeof o.runRtcp === "function";
  }

  /** Whether packets take the direct path (false: werift's sendRtp for each). */
  get direct(): boolean {
    return this.#fast;
  }

  send(payloadType: number, seq: number, ts: number, marker: boolean, payload: Buffer): void {
    const s = this.#s;
    if (
      !this.#fast ||
      s.rtpContinuityPending ||
      s.pendingRtpEnabled ||
      s.headerExtensions.length > 0 ||
      s.redRedundantPayloadType !== undefined
    ) {
      this.#viaWerift(payloadType, seq, ts, marker, payload);
      return;
    }
    // werift's canSendRtp: dropped until DTLS is up.
    const dtls = s.dtlsTransport;
    const codec = s.codec;
    if (s.stopped || dtls === undefined || dtls.state !== "connected" || codec === undefined) return;
    const h = this.#header;
    h.ssrc = s.ssrc;
    h.payloadType = codec.payloadType ?? payloadType;
    h.marker = marker;
    h.timestamp = (ts + s.timestampOffset) >>> 0;
    h.sequenceNumber = (seq + s.seqOffset) & 0xffff;
    s.timestamp = h.timestamp;
    s.sequenceNumber = h.sequenceNumber;
    s.ntpTimestamp = ntpNow();
    s.rtpTimestamp = h.timestamp;
    s.octetCount += payload.length;
    s.headerBytesSent += h.serializeSize;
    s.packetCount = (s.packetCount + 1) >>> 0;
    // Encrypts synchronously (the header is read before this returns), then sends; never rejects.
    void dtls.sendRtp(payload, h);
    if (!s.rtcpRunning) void s.runRtcp();
  }

  #viaWerift(payloadType: number, seq: number, ts: number, marker: boolean, payload: Buffer): void {
    const header = new RtpHeader({ payloadType, sequenceNumber: seq, timestamp: ts, marker });
    this.#sender.sendRtp(new RtpPacket(header, payload)).catch(noop);
  }
}

const noop = (): void => {};
