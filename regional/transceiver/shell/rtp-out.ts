// One call's audio RTP out without werift's sender.sendRtp() per-packet path (see RtpOut). The
// sender members used are private to werift 0.25.2 (pinned): SEND_MEMBERS, checked at start-up
// by werift-media.ts's assertMediaCompatible(); facts in docs/werift.md.
import { type RTCRtpSender, RtpHeader, RtpPacket } from "werift";
import { isSharedTransport } from "./werift-glue.ts";

/** werift's RTCRtpSender, the members the send path below reads and writes. */
interface SenderSendInternals {
  readonly stopped: boolean;
  readonly rtpContinuityPending: boolean;
  readonly pendingRtpEnabled: boolean;
  readonly headerExtensions: readonly unknown[];
  readonly redRedundantPayloadType?: number;
  readonly dtlsTransport?: DtlsSendInternals;
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

/** werift's RTCDtlsTransport, what its sendRtp reads and writes. */
interface DtlsSendInternals {
  readonly state: string;
  /** Set once DTLS is up; its encrypt is the project's (srtp/install.ts), synchronous. */
  readonly srtp?: { encrypt(payload: Buffer, header: RtpHeader): Buffer };
  readonly config?: { readonly debug?: { readonly outboundPacketLoss?: number } };
  readonly iceTransport?: { readonly connection?: ConnectionSendInternals };
  bytesSent: number;
  packetsSent: number;
  sendRtp(payload: Buffer, header: RtpHeader): Promise<number>;
}

/** werift's ICE Connection, what its send(data) reads and writes. */
interface ConnectionSendInternals {
  readonly nominated?: {
    readonly protocol?: { readonly transport?: PairTransport };
    readonly remoteAddr: readonly [string, number];
    packetsSent: number;
    bytesSent: number;
  };
  canSendApplicationData(): boolean;
}

/** The pair's transport when it is the shared socket's (werift-glue.ts): synchronous send. */
interface PairTransport {
  readonly closed: boolean;
  send(data: Buffer, addr: readonly [string, number]): unknown;
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
 * SRTP/ICE checks and counters (werift's `dtlsTransport.sendRtp` chain, done in one synchronous
 * call on the shared socket), without its per-packet packet clone, extension mapping, BigInt
 * arithmetic, string-built NTP time and three promises. Not kept: the
 * NACK history (a client that negotiated audio NACK gets werift's path: `keepHistory`) and the send-side bandwidth estimator's
 * bookkeeping (only transport-cc feedback reads it, never negotiated for audio). Anything else
 * goes through werift's own path.
 */
export class RtpOut {
  readonly #sender: RTCRtpSender;
  readonly #s: SenderSendInternals;
  readonly #header = new RtpHeader();
  readonly #fast: boolean;
  /** Packets sent by the direct chain (#protectAndSend), and packets SRTP refused to protect. */
  directSends = 0;
  encryptFailures = 0;

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

  /** `keepHistory`: the client can NACK, so the packet goes by werift's path, which keeps it. */
  send(
    payloadType: number,
    seq: number,
    ts: number,
    marker: boolean,
    payload: Buffer,
    keepHistory = false,
  ): void {
    const s = this.#s;
    if (
      keepHistory ||
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
    this.#protectAndSend(dtls, payload, h);
    if (!s.rtcpRunning) void s.runRtcp();
  }

  /**
   * werift's dtlsTransport.sendRtp, then connection.send, then the protocol's sendData: the same
   * checks and counters, without the three async functions and the promise each makes per packet
   * (a quarter of the transceiver's allocations per echo, measured). Only on the shared socket's
   * UDP transport, whose send is synchronous; ICE-TCP, TURN and werift's own sockets frame or
   * route the data themselves and take werift's chain.
   */
  #protectAndSend(dtls: DtlsSendInternals, payload: Buffer, h: RtpHeader): void {
    const srtp = dtls.srtp;
    const conn = dtls.iceTransport?.connection;
    const pair = conn?.nominated;
    const transport = pair?.protocol?.transport;
    if (
      srtp === undefined ||
      conn === undefined ||
      pair === undefined ||
      typeof conn.canSendApplicationData !== "function" ||
      !isSharedTransport(transport) ||
      dtls.config?.debug?.outboundPacketLoss
    ) {
      // Encrypts synchronously (the header is read before this returns), then sends; never rejects.
      void dtls.sendRtp(payload, h);
      return;
    }
    let enc: Buffer;
    try {
      enc = srtp.encrypt(payload, h);
    } catch {
      this.encryptFailures++; // werift logs "failed to send" and drops the packet
      return;
    }
    dtls.bytesSent += enc.length;
    dtls.packetsSent++;
    if (!conn.canSendApplicationData() || transport.closed) return;
    transport.send(enc, pair.remoteAddr);
    pair.packetsSent++;
    pair.bytesSent += enc.length;
    this.directSends++;
  }

  #viaWerift(payloadType: number, seq: number, ts: number, marker: boolean, payload: Buffer): void {
    const header = new RtpHeader({ payloadType, sequenceNumber: seq, timestamp: ts, marker });
    this.#sender.sendRtp(new RtpPacket(header, payload)).catch(noop);
  }
}

const noop = (): void => {};
