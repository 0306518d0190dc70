// werift's per-call media state, used directly where its public paths cost per packet or per
// sample. Read instead of getStats(): the receiver's RFC 3550 statistics (werift's
// StreamStatistics, the figures its receiver reports and its `inbound-rtp` stats carry) and the
// sender's RTCP round-trip time (its `remote-inbound-rtp`); getStats() builds the whole report
// (transports, certificates, candidate pairs) as objects and promises to read four numbers.
// leanReceive: the receiver's per-packet handler without the work audio does not need. The send
// side is rtp-out.ts. These are private members of werift 0.25.2 (pinned), listed in
// MEDIA_MEMBERS / SEND_MEMBERS and checked by assertMediaCompatible() at start-up and in
// test/transceiver/werift-glue.test.ts; the per-packet paths fall back to werift's own when a
// member is missing. Facts in docs/werift.md.
import { RTCRtpReceiver, RTCRtpSender, type RTCRtpTransceiver, type RtpPacket } from "werift";
import { SEND_MEMBERS } from "./rtp-out.ts";

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
  for (const m of [...MEDIA_MEMBERS["RTCRtpReceiver instance"], ...RECEIVE_MEMBERS])
    if (!(m in receiver)) missing.push(`RTCRtpReceiver#${m}`);
  for (const m of [...MEDIA_MEMBERS["RTCRtpSender instance"], ...SEND_MEMBERS])
    if (!(m in sender)) missing.push(`RTCRtpSender#${m}`);
  if (typeof receiver.remoteStreams !== "object" || receiver.remoteStreams === null)
    missing.push("RTCRtpReceiver#remoteStreams (object)");
  if (!Array.isArray(receiver.tracks)) missing.push("RTCRtpReceiver#tracks (array)");
  (sender as unknown as { stop(): void }).stop();
  if (missing.length > 0)
    throw new MediaStatsError(`werift media members changed; missing: ${missing.join(", ")}`);
}

/** werift's RTCRtpReceiver, the members its per-packet handler below uses. */
interface ReceiveInternals {
  readonly kind: string;
  readonly stopped: boolean;
  readonly codecs: Record<
    number,
    { readonly mimeType: string; readonly rtcpFeedback: readonly { type: string }[] }
  >;
  readonly remoteStreams: Record<number, { add(p: RtpPacket): void } | undefined>;
  readonly receiverTWCC: unknown;
  readonly rtcpRunning: boolean;
  runRtcp(): Promise<void>;
  handleRTP(packet: RtpPacket, extensions: unknown, track: ReceiveTrack | undefined): void;
  prepareReceive(params: unknown): void;
}

interface ReceiveTrack {
  readonly kind: string;
  readonly onReceiveRtp: { execute(p: RtpPacket, extensions: unknown): void };
}

export const RECEIVE_MEMBERS = [
  "kind",
  "stopped",
  "codecs",
  "remoteStreams",
  "receiverTWCC",
  "rtcpRunning",
] as const;

/** Codecs werift's handleRTP treats specially (RTX unwrapping, RED), by mimeType. */
const plainCodec = new WeakMap<object, boolean>();
function isPlain(codec: { mimeType: string }): boolean {
  let v = plainCodec.get(codec);
  if (v === undefined) {
    const name = codec.mimeType.split("/")[1]?.toLowerCase();
    v = name !== "rtx" && name !== "red";
    plainCodec.set(codec, v);
  }
  return v;
}

/** werift's twccEnabled (transport-cc feedback on the lowest payload type) without its sort. */
function twccEnabled(codecs: ReceiveInternals["codecs"]): boolean {
  let lowest = -1;
  for (const k in codecs) if (lowest < 0 || Number(k) < lowest) lowest = Number(k);
  if (lowest < 0) return false;
  const fb = codecs[lowest]!.rtcpFeedback;
  for (let i = 0; i < fb.length; i++) if (fb[i]!.type === "transport-cc") return true;
  return false;
}

/**
 * Replaces the audio receiver's per-packet handler (on this instance) with werift's handleRTP
 * minus what a plain audio packet does not need: the sorted codec list built to read
 * twccEnabled, two string splits of the codec's name, and a clone of the packet werift just
 * parsed for the one subscriber (the call, which copies what it keeps). RTX, RED, transport-cc,
 * video and the first packet of a stream (werift makes its statistics) take werift's own path.
 * False when werift's receiver is not the shape this was written for (werift's handler stays).
 */
export function leanReceive(receiver: RTCRtpReceiver): boolean {
  const r = receiver as unknown as ReceiveInternals;
  const proto = Object.getPrototypeOf(receiver) as Partial<ReceiveInternals>;
  if (
    r.kind !== "audio" ||
    typeof proto.handleRTP !== "function" ||
    typeof proto.prepareReceive !== "function" ||
    typeof r.runRtcp !== "function"
  )
    return false;
  if (!RECEIVE_MEMBERS.every((m) => m in r)) return false;
  const werift = proto.handleRTP;
  const prepare = proto.prepareReceive;
  // twccEnabled depends only on the codec map, which only prepareReceive (and resyncCodecs,
  // through it) changes: computed once per change.
  let twcc: boolean | undefined;
  const lean = function (
    this: ReceiveInternals,
    packet: RtpPacket,
    extensions: unknown,
    track?: ReceiveTrack,
  ) {
    if (this.stopped) return;
    const codec = this.codecs[packet.header.payloadType];
    if (codec === undefined) return;
    const stream = this.remoteStreams[packet.header.ssrc];
    if (twcc === undefined) twcc = twccEnabled(this.codecs);
    if (
      stream === undefined ||
      track === undefined ||
      track.kind !== "audio" ||
      this.receiverTWCC !== undefined ||
      !isPlain(codec) ||
      twcc
    ) {
      werift.call(this, packet, extensions, track);
      return;
    }
    stream.add(packet);
    track.onReceiveRtp.execute(packet, extensions);
    if (!this.rtcpRunning) void this.runRtcp();
  };
  const prepareReceive = function (this: ReceiveInternals, params: unknown) {
    twcc = undefined;
    return prepare.call(this, params);
  };
  Object.defineProperty(receiver, "handleRTP", { value: lean, writable: true, configurable: true });
  Object.defineProperty(receiver, "prepareReceive", {
    value: prepareReceive,
    writable: true,
    configurable: true,
  });
  return true;
}

interface EventInternals {
  ended: boolean;
  readonly event: {
    readonly stack: { execute(...a: unknown[]): unknown }[];
    readonly promiseStack: unknown[];
  };
  execute: (...args: unknown[]) => void;
}

const leanEvents = new WeakSet<object>();

/**
 * werift's Event.execute, for one event object, without the async function it starts on every
 * call to run its promise subscribers (and the promise and rest-argument array that costs) when
 * it has none: the per-packet events (a datagram in, decrypted RTP, the track's RTP) have only
 * plain subscribers. With promise subscribers, or more than two arguments, werift's own runs.
 */
export function leanEvent(ev: unknown): boolean {
  const e = ev as EventInternals | undefined;
  if (
    e === undefined ||
    e === null ||
    typeof e.execute !== "function" ||
    typeof e.event !== "object" ||
    !Array.isArray(e.event?.stack) ||
    !Array.isArray(e.event.promiseStack)
  )
    return false;
  if (leanEvents.has(e)) return true;
  leanEvents.add(e);
  const werift = e.execute;
  // werift replaces `event` and its arrays on (un)subscribe: read them on every call.
  e.execute = function (a?: unknown, b?: unknown): void {
    const { stack, promiseStack } = e.event;
    // biome-ignore lint/complexity/noArguments: the arity picks the path; a rest array would be the allocation this avoids
    const n = arguments.length;
    if (promiseStack.length > 0 || n > 2) {
      // biome-ignore lint/complexity/noArguments: forwarded unchanged to werift's own
      werift(...arguments);
      return;
    }
    if (e.ended) return;
    for (const item of stack) {
      if (n === 1) item.execute(a);
      else if (n === 2) item.execute(a, b);
      else item.execute();
    }
  };
  return true;
}
