// One call: a werift peer connection on the shared socket, its client paths, timers and the backend
// link. Created from a checked offer; ended once (idempotent `end`): closes the peer connection,
// tells the relays (flowClose) and the backend (session.ended). Parts: peer.ts, call-paths.ts,
// audio.ts, call-backend.ts, stats.ts, timings.ts, core/lifetime.ts, core/ufrags.ts, core/answer.ts.
import { randomBytes } from "node:crypto";
import type { RTCPeerConnection, RTCRtpTransceiver } from "werift";
import type { BackendLink } from "../backend-link.ts";
import { type AudioFrameHeader, BridgeEvent, OWNER_SLOT } from "../backend-protocol.ts";
import { type CallState, type CallStatus, type EndReason, FLOW_CLOSE } from "../call-types.ts";
import { lifetimeEnd } from "../core/lifetime.ts";
import type { PathKey } from "../core/mux.ts";
import { DEFAULT_PATH_LIMITS, PathBook } from "../core/paths.ts";
import { ApiError } from "../errors.ts";
import type { RegionHandles } from "../metrics.ts";
import { CallAudio } from "./audio.ts";
import { startBackend } from "./call-backend.ts";
import type { CallDeps, CallInit } from "./call-deps.ts";
import { CallPaths } from "./call-paths.ts";
import type { CallTap } from "./call-tap.ts";
import { type CallListener, ClientEvents } from "./client-events.ts";
import { closePeer } from "./dtls-close.ts";
import { Negotiation } from "./negotiation.ts";
import { serverPeerConnection, watchPeer } from "./peer.ts";
import { CallStats } from "./stats.ts";
import { callStatus } from "./status.ts";
import { SetupTimings } from "./timings.ts";

export type { CallState, CallStatus, EndReason } from "../call-types.ts";
export type { CallDeps, CallInit } from "./call-deps.ts";
export type { CallListener } from "./client-events.ts";

const newTxid = (): Uint8Array => randomBytes(12);
const noop = (): void => {};
export class Call {
  readonly callId: string;
  readonly region: string;
  readonly #d: CallDeps;
  readonly #init: CallInit;
  readonly #rh: RegionHandles;
  readonly pc: RTCPeerConnection;
  readonly #audioT: RTCRtpTransceiver;
  readonly #audio: CallAudio;
  readonly #neg: Negotiation;
  #bridge!: BackendLink;
  /** The call's conference (call-tap.ts), if any: the hub side of an owner's call, or a leg's. */
  tap: CallTap | undefined;
  state: CallState = "connecting";
  endReason: EndReason | undefined;
  readonly paths: CallPaths;
  readonly #events: ClientEvents;
  readonly #stats = new CallStats();
  readonly #timings: SetupTimings;
  // Wall clock for status and timers; performance.now() for the setup timings.
  readonly createdAt = Date.now();
  endedAt = 0;
  /** Settles once the peer connection is closed and the relays were told (after end()). */
  closed: Promise<void> = Promise.resolve();
  #lastConsentAt = 0;
  iceRestarts = 0;
  addressChanges = 0;

  private constructor(d: CallDeps, init: CallInit) {
    this.#d = d;
    this.#init = init;
    this.callId = init.callId;
    this.region = init.region;
    this.#rh = d.metrics.region(init.region);
    this.#timings = new SetupTimings(this.#rh, init.receivedAt);
    this.pc = serverPeerConnection(init.offer);
    this.#audioT = this.pc.addTransceiver("audio", { direction: "sendrecv" });
    this.#audio = new CallAudio(this.#audioT, {
      now: () => d.mux.clock.now,
      frame: (f, payload) => this.#onClientAudio(f, payload),
      drop: (reason) => d.metrics.drops[reason].inc(),
    });
    this.#events = new ClientEvents(d.config.backendQueueBytes, () => d.metrics.backendDroppedToClient.inc());
    const limits = { ...DEFAULT_PATH_LIMITS, quietMs: d.config.pathQuietMs, ...d.pathLimits };
    const book = new PathBook<PathKey>(limits, newTxid);
    this.paths = new CallPaths(d.mux, d.metrics, d.hmacSha1, book, {
      remoteUfrag: () => this.#neg.remoteUfrag,
      localUfrag: () => this.#neg.ufrag,
      onMoved: () => {
        this.addressChanges++;
        this.#consent();
      },
      onConsent: () => this.#consent(),
    });
    const nd = { ...d, pc: this.pc, audio: this.#audio, paths: this.paths };
    this.#neg = new Negotiation(nd, init.offer, init.ingressVip);
  }

  get packetsFromClient(): number {
    return this.paths.packetsFromClient;
  }
  get packetsToClient(): number {
    return this.paths.packetsToClient;
  }

  /** Builds the session and its answer; throws ApiError on an offer werift cannot take. */
  static async create(d: CallDeps, init: CallInit): Promise<{ session: Call; answer: string }> {
    const s = new Call(d, init);
    try {
      const answer = await s.#negotiate();
      s.#startBackend();
      return { session: s, answer };
    } catch (e) {
      s.#discard();
      throw e;
    }
  }

  get etag(): string {
    return this.#neg.etag;
  }
  get ufrag(): string {
    return this.#neg.ufrag;
  }
  /** The client's current ice-ufrag. */
  get remoteUfrag(): string {
    return this.#neg.remoteUfrag;
  }
  /** The client's current address "ip:port" as the relays reported it. */
  get clientAddress(): string | undefined {
    return this.paths.mediaPath()?.address;
  }

  #consent(): void {
    this.#lastConsentAt = this.#d.mux.clock.now;
  }

  async #negotiate(): Promise<string> {
    this.#wirePeerEvents();
    const answer = await this.#neg.answer();
    this.#timings.answered();
    return answer;
  }

  #wirePeerEvents(): void {
    const t = this.#timings;
    const live = (): boolean => this.state !== "ended";
    const failed = (connected: boolean, before: EndReason): void => {
      if (live() && !this.#neg.restarting) this.end(connected ? "consent_lost" : before);
    };
    watchPeer(this.pc, this.#audioT, {
      iceConnected: () => live() && t.iceConnected() && this.#consent(),
      iceFailed: () => failed(t.iceConnectedAt > 0, "ice_failed"),
      dtlsConnected: () => {
        if (!live() || !t.dtlsConnected()) return;
        this.state = "connected";
        this.#consent();
      },
      dtlsFailed: () => failed(t.dtlsConnectedAt > 0, "dtls_failed"),
      closed: () => live() && this.end("client_closed"),
      rtp: (rtp) => this.#audio.fromTrack(rtp),
      dataChannel: (dc) => {
        if (!this.#events.adopt(dc)) return;
        dc.onMessage.subscribe((m) => this.sendClientEvent(typeof m === "string" ? m : m.toString("utf8")));
      },
    });
  }

  #startBackend(): void {
    const host = {
      callId: this.callId,
      ended: () => this.state === "ended",
      now: () => this.#d.mux.clock.now,
      onAudio: (h: AudioFrameHeader, payload: Buffer) => this.#onBackendAudio(h, payload),
      onEvent: (text: string) => this.tap?.backendEvent?.(text),
      end: (r: EndReason) => this.end(r),
    };
    this.#bridge = startBackend(this.#d, host, this.#events, this.#audio, this.#init);
  }

  #onClientAudio(f: AudioFrameHeader, payload: Uint8Array): void {
    if (this.state === "ended") return;
    this.#timings.firstAudio();
    this.#bridge.sendAudio(f, payload);
    this.tap?.clientAudio?.(f, payload);
  }

  #onBackendAudio(h: AudioFrameHeader, payload: Buffer): void {
    if (this.state === "ended" || this.tap?.backendAudio?.(h, payload)) return;
    // Never audio for a joiner the call lacks (a late echo): its numbering would cut into the RTP.
    if ((h.participant ?? 0) > OWNER_SLOT) this.#d.metrics.backendError("unknown_participant");
    else this.playToClient(h, payload);
  }

  /** A frame for the client: the backend's (source 0), or a conference mixer's output (1). */
  playToClient(h: AudioFrameHeader, payload: Uint8Array, source = 0): void {
    if (this.state === "ended") return;
    const r = this.#audio.toClient(h, payload, source);
    if (r === "codec_mismatch") this.#d.metrics.backendError(r);
  }

  /** A frame for the backend on this call's link (a joiner's audio, labelled with its slot). */
  sendToBackend(h: AudioFrameHeader, payload: Uint8Array): void {
    if (this.state !== "ended") this.#bridge.sendAudio(h, payload);
  }

  /** The codec the client receives and whether it offered Opus in-band FEC (a mixer encodes so). */
  get media(): { codec: number; opusFec: boolean } {
    return { codec: this.#audio.sendCodec, opusFec: this.#init.offer.opusFec };
  }

  /** An event for the client from the transceiver itself (data channel, signalling WebSocket). */
  notifyClient(text: string): void {
    this.#events.send(text);
  }

  /** An event for the backend (the sideband's, a conference's). */
  sendEventToBackend(text: string): void {
    if (this.state !== "ended") this.#bridge.sendEvent(text);
  }
  /** The client's own event (data channel, signalling WebSocket): through the conference, if any. */
  sendClientEvent = (text: string): void => this.sendEventToBackend(this.tap?.clientEvent?.(text) ?? text);

  addListener(l: CallListener): void {
    this.#events.addListener(l);
  }
  removeListener(l: CallListener): void {
    this.#events.removeListener(l);
  }

  /** WHIP ICE restart: new remote credentials in, sdpfrag answer and new ETag out. */
  async restartIce(remoteUfrag: string, remotePwd: string): Promise<{ frag: string; etag: string }> {
    if (this.state === "ended") throw new ApiError("call_ended", "the session has ended");
    const r = await this.#neg.restart(remoteUfrag, remotePwd);
    this.iceRestarts++;
    this.#consent();
    return r;
  }

  /** Called about once a second by the owner. */
  tick(now: number): void {
    if (this.state === "ended") return;
    const c = this.#d.config;
    const marks = {
      createdAt: this.createdAt,
      dtlsConnectedAt: this.#timings.dtlsConnectedAt,
      lastConsentAt: this.#lastConsentAt,
      restarting: this.#neg.restarting,
    };
    const over = lifetimeEnd(now, marks, c);
    if (over !== undefined) {
      this.end(over);
      return;
    }
    this.paths.tick(this.#d.mux.clock.now);
    this.#neg.retireUfrags(now);
    const att = this.#neg.attachment;
    if (this.state === "connected" && att)
      this.#stats.maybeSample(now, c.statsIntervalMs, this.#audioT, att, this.#rh);
  }

  /** Ends the session once; later calls do nothing. */
  end(reason: EndReason): void {
    if (this.state === "ended") return;
    this.state = "ended";
    this.endReason = reason;
    this.endedAt = Date.now();
    this.#neg.release();
    this.paths.stop();
    this.#bridge?.close(JSON.stringify({ type: BridgeEvent.ended, call_id: this.callId, reason }));
    this.#events.ended(reason);
    this.tap?.ended(reason);
    // The peer connection first (its SCTP ABORT, DTLS close_notify need the paths), then the relays.
    this.closed = closePeer(this.pc)
      .catch(noop)
      .finally(() => this.paths.closeAll(FLOW_CLOSE[reason]));
    this.#d.metrics.ended(reason);
    this.#d.onEnded(this);
  }

  /** Undo a failed create: nothing was announced yet. */
  #discard(): void {
    this.state = "ended";
    this.#neg.release();
    this.paths.stop();
    this.#bridge?.close();
    void this.pc.close().catch(noop);
  }

  status(): CallStatus {
    return callStatus({
      session: this,
      ids: this.#d.config,
      popId: this.#init.popId,
      opusFec: this.#init.offer.opusFec,
      path: this.paths.mediaPath(),
      codec: this.#audio.codecName,
      timings: this.#timings.status(),
      rtt: this.#neg.attachment?.selectedRtt(),
      bridge: this.#bridge,
      droppedToClient: this.#events.dropped,
      conference: this.tap?.status() ?? null,
      clientRepair: this.#audio.repair,
    });
  }
}
