// One call: a werift peer connection on the shared socket, its client paths, timers and the
// backend bridge. Created from a checked offer; ended exactly once (idempotent `end`), which
// closes the peer connection, tells the relays (flowClose) and the backend (session.ended).
import { randomBytes } from "node:crypto";
import {
  RTCPeerConnection,
  RTCRtpCodecParameters,
  type RTCRtpTransceiver,
  RtpHeader,
  RtpPacket,
  useOPUS,
  usePCMU,
} from "werift";
import type { MacSync } from "../../shared/hint/codec.ts";
import { mintHint } from "../../shared/hint/codec.ts";
import type { HmacSha1 } from "../../shared/stun/integrity.ts";
import type { HostPort } from "../../shared/topology/address.ts";
import type { Logger } from "../common/log.ts";
import { InProcessEcho, internalEchoDelay } from "../echo-agent/in-process.ts";
import {
  AUDIO_CODEC_NAMES,
  AudioFlags,
  type AudioFrameHeader,
  BridgeEvent,
  ClientNotice,
  codecOfMime,
  newAudioFrameHeader,
} from "./backend-protocol.ts";
import { BackendBridge, type BackendLink, type BridgeErrorReason, INTERNAL_ECHO } from "./bridge.ts";
import { ClientEvents, type SessionListener } from "./client-events.ts";
import type { TransceiverConfig } from "./config.ts";
import type { Mux, PathKey } from "./core/mux.ts";
import { DEFAULT_PATH_LIMITS, PathBook, type PathLimits } from "./core/paths.ts";
import { closePeer } from "./dtls-close.ts";
import { guardRecordSequence } from "./dtls-sequence.ts";
import { ApiError } from "./errors.ts";
import type { RegionHandles, TransceiverMetrics } from "./metrics.ts";
import { finishAnswer, type OfferInfo, replaceIceCredentials, restartAnswerFrag } from "./sdp.ts";
import { SessionPaths } from "./session-paths.ts";
import { type EndReason, FLOW_CLOSE, type SessionState, type SessionStatus } from "./session-types.ts";
import { attachSharedSocket, type IceAttachment, iceTransportCount } from "./werift-glue.ts";

export type { SessionListener } from "./client-events.ts";
export type { EndReason, SessionState, SessionStatus } from "./session-types.ts";

export interface SessionDeps {
  config: TransceiverConfig;
  mux: Mux;
  metrics: TransceiverMetrics;
  hintMac: MacSync;
  hmacSha1: HmacSha1;
  log: Logger;
  /** Overrides of the path book's limits (tests); `quietMs` comes from PATH_QUIET_MS. */
  pathLimits?: Partial<PathLimits>;
  onEnded(s: Session): void;
}

export interface SessionInit {
  callId: string;
  region: string;
  client: Record<string, unknown>;
  ingressVip: HostPort;
  popId: number | undefined;
  sessionConfig: unknown;
  offer: OfferInfo;
  /** performance.now() when the request arrived. */
  receivedAt: number;
  /** The call was resumed here after its transceiver failed (told to the backend). */
  resumed?: boolean;
}

const OLD_UFRAG_GRACE_MS = 30_000;
const enc = new TextEncoder();
const newTxid = (): Uint8Array => randomBytes(12);
const noop = (): void => {};

/** 128+ random bits as ice-chars: 24 bytes → 32 base64 characters (no padding). */
export function newIcePwd(): string {
  return randomBytes(24).toString("base64");
}

export function newEtag(): string {
  return randomBytes(12).toString("base64url");
}

/**
 * The server's peer connection for an offer. Audio codecs follow the offer's order (RFC 3264
 * §6.1 recommends the answer keep the offerer's preference: a client that lists PCMU first gets
 * PCMU). `taggedVideo` is the codec of a video m-line the offer tagged for BUNDLE: werift needs it
 * in common to accept that m-line (answered inactive, see sdp.ts).
 */
export function serverPeerConnection(
  offer?: Pick<OfferInfo, "audioCodecs" | "taggedVideo">,
): RTCPeerConnection {
  const opus = (): RTCRtpCodecParameters => useOPUS({ parameters: "minptime=10;useinbandfec=1" });
  const names = offer?.audioCodecs.map((c) => c.name.toLowerCase()) ?? [];
  const pcmuFirst =
    names.includes("pcmu") && (!names.includes("opus") || names.indexOf("pcmu") < names.indexOf("opus"));
  const video = offer?.taggedVideo?.codec;
  const videoCodecs = video
    ? [
        new RTCRtpCodecParameters({
          mimeType: `video/${video.name}`,
          clockRate: video.clockRate,
          ...(video.fmtp ? { parameters: video.fmtp } : {}),
        }),
      ]
    : [];
  return new RTCPeerConnection({
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceLite: false,
    // Full ICE restricted to the addresses learned from the client's checks (docs/werift.md).
    iceFilterCandidatePair: () => false,
    bundlePolicy: "max-bundle",
    codecs: { audio: pcmuFirst ? [usePCMU(), opus()] : [opus(), usePCMU()], video: videoCodecs },
    headerExtensions: { audio: [], video: [] },
  });
}

export class Session {
  readonly callId: string;
  readonly region: string;
  readonly #d: SessionDeps;
  readonly #init: SessionInit;
  readonly #rh: RegionHandles;
  readonly pc: RTCPeerConnection;
  readonly #audio: RTCRtpTransceiver;
  #att!: IceAttachment;
  #bridge!: BackendLink;
  #offerSdp: string;
  #remoteUfrag: string;
  #ufrag = "";
  readonly #ufrags: { ufrag: string; retireAt: number }[] = [];
  #etag = newEtag();
  state: SessionState = "connecting";
  endReason: EndReason | undefined;
  readonly paths: SessionPaths;
  #restarting = false;
  readonly #events: ClientEvents;
  #ptToCodec = new Map<number, number>();
  #sendCodec = 0;
  #sendPt = 0;
  /** The negotiated audio direction lets us send (false for a sendonly client, e.g. WHIP). */
  #clientReceives = true;
  readonly #frame = newAudioFrameHeader();
  #nextStatsAt = 0;
  #lastLost = 0;
  #lastReceived = 0;
  // Timings: wall clock for status, performance.now() for metrics.
  readonly createdAt = Date.now();
  #answeredAt = 0;
  #iceConnectedAt = 0;
  #dtlsConnectedAt = 0;
  #firstAudioAt = 0;
  endedAt = 0;
  /** Settles once the peer connection is closed and the relays were told (after end()). */
  closed: Promise<void> = Promise.resolve();
  #lastConsentAt = 0;
  iceRestarts = 0;
  addressChanges = 0;

  private constructor(d: SessionDeps, init: SessionInit) {
    this.#d = d;
    this.#init = init;
    this.callId = init.callId;
    this.region = init.region;
    this.#rh = d.metrics.region(init.region);
    this.#offerSdp = init.offer.sdp;
    this.#remoteUfrag = init.offer.iceUfrag;
    this.pc = serverPeerConnection(init.offer);
    this.#audio = this.pc.addTransceiver("audio", { direction: "sendrecv" });
    this.#events = new ClientEvents(d.config.backendQueueBytes, () => d.metrics.backendDroppedToClient.inc());
    const limits = { ...DEFAULT_PATH_LIMITS, quietMs: d.config.pathQuietMs, ...d.pathLimits };
    const book = new PathBook<PathKey>(limits, newTxid);
    this.paths = new SessionPaths(d.mux, d.metrics, d.hmacSha1, book, {
      remoteUfrag: () => this.#remoteUfrag,
      localUfrag: () => this.#ufrag,
      onMoved: () => {
        this.addressChanges++;
        this.#lastConsentAt = this.#d.mux.clock.now;
      },
      onConsent: () => {
        this.#lastConsentAt = this.#d.mux.clock.now;
      },
    });
  }

  get packetsFromClient(): number {
    return this.paths.packetsFromClient;
  }
  get packetsToClient(): number {
    return this.paths.packetsToClient;
  }

  /** Builds the session and its answer; throws ApiError on an offer werift cannot take. */
  static async create(d: SessionDeps, init: SessionInit): Promise<{ session: Session; answer: string }> {
    const s = new Session(d, init);
    try {
      const answer = await s.#negotiate();
      s.#startBridge();
      return { session: s, answer };
    } catch (e) {
      s.#discard();
      throw e;
    }
  }

  get etag(): string {
    return this.#etag;
  }
  get ufrag(): string {
    return this.#ufrag;
  }
  /** The client's current ice-ufrag. */
  get remoteUfrag(): string {
    return this.#remoteUfrag;
  }

  #mintCredentials(): { ufrag: string; pwd: string } {
    const { clusterId, transceiverId } = this.#d.config;
    const ufrag = mintHint({ clusterId, transceiverId, random: randomBytes(4) }, this.#d.hintMac);
    return { ufrag, pwd: newIcePwd() };
  }

  #useCredentials(ufrag: string, pwd: string): void {
    this.#ufrag = ufrag;
    this.#ufrags.push({ ufrag, retireAt: Number.POSITIVE_INFINITY });
    this.#d.mux.addUfrag(ufrag, enc.encode(pwd), this.paths);
  }

  async #negotiate(): Promise<string> {
    const { pc } = this;
    const offer = this.#init.offer;
    this.#wirePeerEvents();
    try {
      await pc.setRemoteDescription({ type: "offer", sdp: offer.sdp });
    } catch (e) {
      throw new ApiError("offer_rejected", `the offer was not accepted: ${(e as Error).message}`);
    }
    if (iceTransportCount(pc) !== 1) {
      throw new ApiError("bundle_required", "every m-line must share one transport (a=group:BUNDLE)");
    }
    guardRecordSequence(pc);
    // werift answers a=setup:active whatever the offer says; an offer that is itself active (or
    // passive) needs the opposite (RFC 5763 §5), or both ends would send (or wait for) a ClientHello.
    const role =
      offer.dtlsSetup === "active" ? "server" : offer.dtlsSetup === "passive" ? "client" : undefined;
    if (role !== undefined) {
      for (const t of pc.getTransceivers()) if (t.dtlsTransport) t.dtlsTransport.role = role;
      if (pc.sctpTransport) pc.sctpTransport.dtlsTransport.role = role;
    }
    // Video is never received or sent: a tagged video m-line stays in the BUNDLE group, inactive.
    const tagged = offer.taggedVideo?.mid;
    for (const t of pc.getTransceivers()) {
      if (t.kind === "video" && t.mid === tagged) t.setDirection("inactive");
    }
    const { ufrag, pwd } = this.#mintCredentials();
    const vip = this.#init.ingressVip;
    this.#att = attachSharedSocket(pc, {
      ufrag,
      pwd,
      candidateHost: vip.host,
      candidatePort: vip.port,
      send: (data, addr) => this.paths.sendTo(data, addr),
      onClose: noop,
    });
    this.paths.attach(this.#att);
    this.#useCredentials(ufrag, pwd);
    await pc.setLocalDescription(await pc.createAnswer());
    const codecs = this.#audio.codecs;
    if (codecs.length === 0 || this.#audio.stopped || this.#audio.rejected) {
      throw new ApiError("no_acceptable_codec", "no audio codec in common (opus/48000/2 or PCMU/8000)");
    }
    for (const c of codecs) {
      const id = codecOfMime(c.mimeType);
      if (id !== 0 && c.payloadType !== undefined) this.#ptToCodec.set(c.payloadType, id);
    }
    const dir = this.#audio.currentDirection;
    this.#clientReceives = dir === "sendrecv" || dir === "sendonly";
    const send = this.#audio.sender.codec ?? codecs[0]!;
    this.#sendCodec = codecOfMime(send.mimeType);
    this.#sendPt = send.payloadType ?? 0;
    this.#answeredAt = performance.now();
    this.#rh.setup.offer_to_answer.observe((this.#answeredAt - this.#init.receivedAt) / 1000);
    return this.#finish(pc.localDescription!.sdp);
  }

  #finish(localSdp: string): string {
    const cv = this.#d.config.clusterVip;
    const vip = this.#init.ingressVip;
    const second =
      cv && !(cv.host === vip.host && cv.port === vip.port) ? { host: cv.host, port: cv.port } : undefined;
    const tcpPort = this.#d.config.vipTcpPort;
    return finishAnswer(localSdp, {
      opusFec: this.#init.offer.opusFec,
      ...(second ? { secondCandidate: second } : {}),
      ...(tcpPort !== undefined ? { tcpCandidate: { host: vip.host, port: tcpPort } } : {}),
    });
  }

  #wirePeerEvents(): void {
    const { pc } = this;
    pc.iceConnectionStateChange.subscribe((st) => {
      if (this.state === "ended") return;
      if (st === "connected" && this.#iceConnectedAt === 0) {
        this.#iceConnectedAt = performance.now();
        this.#lastConsentAt = this.#d.mux.clock.now;
        this.#rh.setup.answer_to_ice_connected.observe((this.#iceConnectedAt - this.#answeredAt) / 1000);
      } else if (st === "failed" && !this.#restarting) {
        this.end(this.#iceConnectedAt > 0 ? "consent_lost" : "ice_failed");
      }
    });
    pc.connectionStateChange.subscribe((st) => {
      if (this.state === "ended") return;
      if (st === "connected" && this.#dtlsConnectedAt === 0) {
        this.#dtlsConnectedAt = performance.now();
        this.state = "connected";
        this.#lastConsentAt = this.#d.mux.clock.now;
        this.#rh.setup.answer_to_dtls_connected.observe((this.#dtlsConnectedAt - this.#answeredAt) / 1000);
      } else if (st === "failed" && !this.#restarting) {
        this.end(this.#dtlsConnectedAt > 0 ? "consent_lost" : "dtls_failed");
      } else if (st === "closed") {
        this.end("client_closed");
      }
    });
    this.#audio.onTrack.subscribe((track) => {
      track.onReceiveRtp.subscribe((rtp) => this.#onClientAudio(rtp));
    });
    pc.onDataChannel.subscribe((dc) => {
      if (!this.#events.adopt(dc)) return;
      dc.onMessage.subscribe((m) => {
        if (this.state === "ended") return;
        this.#bridge.sendEvent(typeof m === "string" ? m : m.toString("utf8"));
      });
    });
  }

  #startBridge(): void {
    const d = this.#d;
    const m = d.metrics;
    const url = d.config.backendUrl;
    const open = (
      o: ConstructorParameters<typeof BackendBridge>[0],
      h: ConstructorParameters<typeof BackendBridge>[1],
    ) =>
      url.startsWith(INTERNAL_ECHO) ? new InProcessEcho(internalEchoDelay(url), h) : new BackendBridge(o, h);
    this.#bridge = open(
      {
        url,
        headers: {
          "x-gr-call-id": this.callId,
          "x-gr-cluster-id": String(d.config.clusterId),
          "x-gr-transceiver-id": String(d.config.transceiverId),
        },
        queueBytes: d.config.backendQueueBytes,
        connectTimeoutMs: d.config.backendConnectTimeoutMs,
      },
      {
        onAudio: (h, payload) => this.#onBackendAudio(h, payload),
        onEvent: (text) => this.#events.send(text),
        onDrop: () => {
          m.backendDroppedToBackend.inc();
          this.#events.noticeDropped(this.#d.mux.clock.now, this.#bridge.droppedToBackend);
        },
        onError: (reason: BridgeErrorReason) => m.backendError(reason),
        onClose: (code) => {
          if (this.state === "ended") return;
          const never = this.#bridge.framesFromBackend === 0 && code === 1006;
          this.#events.send(
            JSON.stringify({
              type: ClientNotice.backendUnavailable,
              reason: never ? "backend connection failed" : `backend closed (${code})`,
            }),
          );
          this.end(never ? "backend_unavailable" : "backend_closed");
        },
      },
    );
    const codec = AUDIO_CODEC_NAMES[this.#sendCodec] ?? "unknown";
    this.#bridge.sendEvent(
      JSON.stringify({
        type: BridgeEvent.started,
        call_id: this.callId,
        cluster_id: d.config.clusterId,
        transceiver_id: d.config.transceiverId,
        audio: {
          codec,
          clock_rate: this.#sendCodec === 1 ? 48000 : 8000,
          channels: this.#sendCodec === 1 ? 2 : 1,
          frame_ms: 20,
          fec: this.#init.offer.opusFec,
        },
        client: this.#init.client,
        session: this.#init.sessionConfig ?? null,
        data_channel: this.#init.offer.hasDataChannel,
        resumed: this.#init.resumed === true,
      }),
    );
  }

  // ---- media ----------------------------------------------------------------------------

  #onClientAudio(rtp: RtpPacket): void {
    if (this.state === "ended") return;
    const codec = this.#ptToCodec.get(rtp.header.payloadType);
    if (codec === undefined) {
      this.#d.metrics.drops.not_rtp.inc();
      return;
    }
    if (this.#firstAudioAt === 0) {
      this.#firstAudioAt = performance.now();
      this.#rh.setup.answer_to_first_audio.observe((this.#firstAudioAt - this.#answeredAt) / 1000);
    }
    const f = this.#frame;
    f.codec = codec;
    f.flags = rtp.header.marker ? AudioFlags.marker : 0;
    f.sequenceNumber = rtp.header.sequenceNumber;
    f.timestamp = rtp.header.timestamp;
    this.#bridge.sendAudio(f, rtp.payload);
  }

  #onBackendAudio(h: AudioFrameHeader, payload: Buffer): void {
    // A client that only sends (a WHIP publisher) gets no RTP: werift would send it regardless.
    if (this.state === "ended" || !this.#clientReceives) return;
    if (h.codec !== this.#sendCodec) {
      this.#d.metrics.backendError("codec_mismatch");
      return;
    }
    const header = new RtpHeader({
      payloadType: this.#sendPt,
      sequenceNumber: h.sequenceNumber,
      timestamp: h.timestamp,
      marker: (h.flags & AudioFlags.marker) !== 0,
    });
    this.#audio.sender.sendRtp(new RtpPacket(header, payload)).catch(noop);
  }

  // ---- events ---------------------------------------------------------------------------

  /** An event from the signalling WebSocket, for the backend. */
  /** An event for the client from the transceiver itself (data channel, signalling WebSocket). */
  notifyClient(text: string): void {
    this.#events.send(text);
  }

  sendEventToBackend(text: string): void {
    if (this.state !== "ended") this.#bridge.sendEvent(text);
  }

  addListener(l: SessionListener): void {
    this.#events.addListener(l);
  }
  removeListener(l: SessionListener): void {
    this.#events.removeListener(l);
  }

  // ---- paths ---------------------------------------------------------------------------

  /** The client's current address "ip:port" as the relays reported it. */
  get clientAddress(): string | undefined {
    return this.paths.mediaPath()?.address;
  }

  // ---- ICE restart ----------------------------------------------------------------------

  /** WHIP ICE restart: new remote credentials in, sdpfrag answer and new ETag out. */
  async restartIce(remoteUfrag: string, remotePwd: string): Promise<{ frag: string; etag: string }> {
    if (this.state === "ended") throw new ApiError("call_ended", "the session has ended");
    if (this.#restarting) throw new ApiError("unsupported_patch", "an ICE restart is already in progress");
    this.#restarting = true;
    try {
      const offer = replaceIceCredentials(this.#offerSdp, remoteUfrag, remotePwd);
      await this.pc.setRemoteDescription({ type: "offer", sdp: offer });
      this.#offerSdp = offer;
      this.#remoteUfrag = remoteUfrag;
      const { ufrag, pwd } = this.#mintCredentials();
      this.#att.setLocalCredentials(ufrag, pwd);
      const now = this.#d.mux.clock.now;
      for (const u of this.#ufrags) u.retireAt = Math.min(u.retireAt, now + OLD_UFRAG_GRACE_MS);
      this.#useCredentials(ufrag, pwd);
      await this.pc.setLocalDescription(await this.pc.createAnswer());
      this.#att.restartChecks().catch(noop);
      this.#etag = newEtag();
      this.iceRestarts++;
      this.#lastConsentAt = now;
      return { frag: restartAnswerFrag(this.#finish(this.pc.localDescription!.sdp)), etag: this.#etag };
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw new ApiError("unsupported_patch", `ICE restart failed: ${(e as Error).message}`);
    } finally {
      this.#restarting = false;
    }
  }

  // ---- timers ---------------------------------------------------------------------------

  /** Called about once a second by the owner. */
  tick(now: number): void {
    if (this.state === "ended") return;
    const c = this.#d.config;
    if (now - this.createdAt >= c.maxSessionMs) {
      this.end("max_duration");
      return;
    }
    if (this.#dtlsConnectedAt === 0 && now - this.createdAt >= c.setupTimeoutMs) {
      this.end("setup_timeout");
      return;
    }
    if (this.#lastConsentAt > 0 && !this.#restarting && now - this.#lastConsentAt >= c.consentTimeoutMs) {
      this.end("consent_lost");
      return;
    }
    this.paths.tick(this.#d.mux.clock.now);
    for (let i = this.#ufrags.length - 1; i >= 0; i--) {
      const u = this.#ufrags[i]!;
      if (u.retireAt <= now) {
        this.#d.mux.removeUfrag(u.ufrag, this.paths);
        this.#ufrags.splice(i, 1);
      }
    }
    if (this.state === "connected" && now >= this.#nextStatsAt) {
      this.#nextStatsAt = now + c.statsIntervalMs * (0.75 + Math.random() * 0.5);
      this.#sampleStats().catch(noop);
    }
  }

  async #sampleStats(): Promise<void> {
    const rtt = this.#att.selectedRtt();
    if (rtt !== undefined) this.#rh.iceRtt.observe(rtt);
    const report = await this.pc.getStats();
    for (const s of report.values() as Iterable<Record<string, unknown>>) {
      if (s.type === "remote-inbound-rtp" && typeof s.roundTripTime === "number" && s.roundTripTime > 0) {
        this.#rh.rtcpRtt.observe(s.roundTripTime);
      } else if (s.type === "inbound-rtp") {
        if (typeof s.jitter === "number") this.#rh.jitter.observe(s.jitter);
        const lost = typeof s.packetsLost === "number" ? s.packetsLost : 0;
        const received = typeof s.packetsReceived === "number" ? s.packetsReceived : 0;
        const dl = Math.max(0, lost - this.#lastLost);
        const dr = Math.max(0, received - this.#lastReceived);
        this.#lastLost = lost;
        this.#lastReceived = received;
        if (dl + dr > 0) this.#rh.loss.observe(dl / (dl + dr));
      }
    }
  }

  // ---- end ------------------------------------------------------------------------------

  /** Ends the session once; later calls do nothing. */
  end(reason: EndReason): void {
    if (this.state === "ended") return;
    this.state = "ended";
    this.endReason = reason;
    this.endedAt = Date.now();
    const mux = this.#d.mux;
    for (const u of this.#ufrags) mux.removeUfrag(u.ufrag, this.paths);
    this.paths.stop();
    this.#bridge?.close(JSON.stringify({ type: BridgeEvent.ended, call_id: this.callId, reason }));
    this.#events.ended(reason);
    // Close the peer connection first: its goodbyes (SCTP ABORT, DTLS close_notify) still need
    // the paths. Then tell the relays to drop the flows, current address first.
    this.closed = closePeer(this.pc)
      .catch(noop)
      .finally(() => this.paths.closeAll(FLOW_CLOSE[reason]));
    this.#d.metrics.ended(reason);
    this.#d.onEnded(this);
  }

  /** Undo a failed create: nothing was announced yet. */
  #discard(): void {
    this.state = "ended";
    for (const u of this.#ufrags) this.#d.mux.removeUfrag(u.ufrag, this.paths);
    this.paths.stop();
    this.#bridge?.close();
    void this.pc.close().catch(noop);
  }

  status(): SessionStatus {
    const ms = (t: number): number | null =>
      t > 0 && this.#answeredAt > 0 ? Math.round(t - this.#answeredAt) : null;
    const path = this.paths.mediaPath();
    return {
      callId: this.callId,
      state: this.state,
      clusterId: this.#d.config.clusterId,
      transceiverId: this.#d.config.transceiverId,
      popId: path?.popId ?? this.#init.popId ?? null,
      region: this.region,
      clientAddress: path?.address ?? null,
      codec: AUDIO_CODEC_NAMES[this.#sendCodec] ?? null,
      opusFec: this.#init.offer.opusFec,
      createdAt: new Date(this.createdAt).toISOString(),
      durationMs: (this.endedAt || Date.now()) - this.createdAt,
      timings: {
        offerToAnswerMs: this.#answeredAt > 0 ? Math.round(this.#answeredAt - this.#init.receivedAt) : null,
        answerToIceConnectedMs: ms(this.#iceConnectedAt),
        answerToDtlsConnectedMs: ms(this.#dtlsConnectedAt),
        answerToFirstAudioMs: ms(this.#firstAudioAt),
      },
      iceRttMs: (() => {
        const r = this.#att?.selectedRtt();
        return r === undefined ? null : Math.round(r * 1000 * 10) / 10;
      })(),
      iceRestarts: this.iceRestarts,
      addressChanges: this.addressChanges,
      packets: { fromClient: this.packetsFromClient, toClient: this.packetsToClient },
      backend: {
        state: this.#bridge?.state ?? "closed",
        framesToBackend: this.#bridge?.framesToBackend ?? 0,
        framesFromBackend: this.#bridge?.framesFromBackend ?? 0,
        droppedToBackend: this.#bridge?.droppedToBackend ?? 0,
        droppedToClient: this.#events.dropped,
      },
      endReason: this.endReason ?? null,
      endedAt: this.endedAt > 0 ? new Date(this.endedAt).toISOString() : null,
    };
  }
}
