// werift's per-call media state, read directly instead of through getStats(): the receiver's
// RFC 3550 statistics (werift's StreamStatistics, the same figures its receiver reports and its
// `inbound-rtp` stats carry) and the sender's RTCP round-trip time (its `remote-inbound-rtp`).
// getStats() builds the whole report (transports, certificates, candidate pairs) as objects and
// promises to read four numbers. These are private members of werift 0.25.2 (pinned), listed in
// MEDIA_MEMBERS and checked by assertMediaCompatible() at start-up and in
// test/transceiver/werift-glue.test.ts; facts in docs/werift.md.
import { RTCRtpReceiver, RTCRtpSender, type RTCRtpTransceiver } from "werift";

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
