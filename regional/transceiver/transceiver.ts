// One transceiver process: the shared backbone socket and mux, the sessions, the signalling API,
// heartbeats, timers, drain and stop. startTransceiver() runs it embedded (tests, benchmarks);
// main.ts runs it from the environment.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { RTCDtlsTransport } from "werift";
import { mintCallId, verifyCallId } from "../../shared/callid/callid.ts";
import type { MacSync } from "../../shared/hint/codec.ts";
import { HEARTBEAT_TTL_MS, type TransceiverHeartbeat } from "../../shared/membership.ts";
import { inspectOffer } from "../../shared/sdp/offer.ts";
import type { Caller } from "../../shared/signing/caller.ts";
import { parseHostPort } from "../../shared/topology/address.ts";
import { hmacSha1, nodeMac } from "../common/hmac.ts";
import { createLogger, type Logger } from "../common/log.ts";
import { attachApi } from "./api.ts";
import { type BackendConnector, INTERNAL_ECHO } from "./backend-link.ts";
import type { TransceiverConfig } from "./config.ts";
import { type CoarseClock, Mux } from "./core/mux.ts";
import type { PathLimits } from "./core/paths.ts";
import { ApiError } from "./errors.ts";
import type { MembershipStore } from "./membership.ts";
import { TransceiverMetrics } from "./metrics.ts";
import { SetupLimiter } from "./setup-limit.ts";
import { BackboneSocket } from "./shell/backbone.ts";
import { webSocketBackend } from "./shell/bridge.ts";
import { type EndReason, Session, type SessionStatus } from "./shell/session.ts";
import { assertGlueCompatible } from "./shell/werift-glue.ts";
import { RequestVerifier } from "./signing.ts";

export interface CreateRequest {
  sdp: string;
  session?: Record<string, unknown>;
  client?: {
    region?: string;
    country?: string;
    continent?: string;
    colo?: string;
    latitude?: number;
    longitude?: number;
  };
  ingress?: { vip?: string; popId?: number };
  /** From the signed x-gr-caller header: counted against the setup limits. */
  caller?: Caller;
}

export interface CreateResult {
  callId: string;
  sdp: string;
  etag: string;
  clusterId: number;
  transceiverId: number;
  session: Session;
}

export interface TransceiverOptions {
  log?: Logger;
  membership?: MembershipStore;
  /** Path book limits for every session (tests; the defaults are in core/paths.ts). */
  pathLimits?: Partial<PathLimits>;
  /** The backend each session opens (main.ts chooses); default: the WebSocket bridge to BACKEND_URL. */
  backend?: BackendConnector;
}

const ENDED_KEEP_MS = 5 * 60_000;
const ENDED_KEEP_MAX = 10_000;

export class Transceiver {
  readonly config: TransceiverConfig;
  readonly metrics: TransceiverMetrics;
  readonly log: Logger;
  readonly clock: CoarseClock = { now: Date.now() };
  readonly sessions = new Map<string, Session>();
  /** Recently ended sessions (status stays readable for a few minutes). */
  readonly ended = new Map<string, { status: SessionStatus; at: number }>();
  readonly #byClientUfrag = new Map<string, string>();
  readonly #callIdMac: MacSync;
  readonly #hintMac: MacSync;
  #socket!: BackboneSocket;
  #mux!: Mux;
  #server!: Server;
  verifier!: RequestVerifier;
  readonly setupLimiter: SetupLimiter;
  readonly #membership: MembershipStore | undefined;
  readonly #pathLimits: Partial<PathLimits> | undefined;
  readonly #backend: BackendConnector;
  #pending = 0;
  draining = false;
  #stopped = false;
  #ticker: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #ticks = 0;
  #drainWaiters: (() => void)[] = [];
  readonly #closing = new Set<Promise<void>>();

  private constructor(config: TransceiverConfig, o: TransceiverOptions) {
    this.config = config;
    this.metrics = new TransceiverMetrics(config.clusterId);
    this.log =
      o.log ??
      createLogger({ svc: "transceiver", cluster: config.clusterId, transceiver: config.transceiverId });
    this.#callIdMac = nodeMac(config.callIdKeys);
    this.#hintMac = nodeMac(config.hintKeys);
    this.#membership = o.membership;
    this.setupLimiter = new SetupLimiter(
      config.setupLimitPerKey,
      config.setupLimitPerNetwork,
      config.setupTimeoutMs,
    );
    this.#pathLimits = o.pathLimits;
    if (!o.backend && config.backendUrl.startsWith(INTERNAL_ECHO)) {
      throw new Error(`BACKEND_URL ${config.backendUrl} is an in-process backend: the caller must inject it`);
    }
    this.#backend =
      o.backend ??
      webSocketBackend({
        url: config.backendUrl,
        queueBytes: config.backendQueueBytes,
        connectTimeoutMs: config.backendConnectTimeoutMs,
      });
  }

  static async start(config: TransceiverConfig, o: TransceiverOptions = {}): Promise<Transceiver> {
    assertGlueCompatible();
    const t = new Transceiver(config, o);
    // One DTLS certificate per process (werift caches it); make it before the first offer.
    await RTCDtlsTransport.SetupCertificate();
    t.verifier = await RequestVerifier.create(
      config.clusterKeys,
      { clusterId: config.clusterId, transceiverId: config.transceiverId },
      { windowMs: config.replayWindowMs },
    );
    t.#socket = await BackboneSocket.open(
      config.udp,
      config.clusterId,
      config.transceiverId,
      t.metrics,
      config.socketBufferBytes,
      config.socketCount,
      config.connectRelays,
    );
    const unspecified = (h: string) => h === "0.0.0.0" || h === "::";
    if (unspecified(config.udp.host) && !config.udpAdvertise) {
      t.log.warn(
        "TRANSCEIVER_UDP binds every address: set TRANSCEIVER_UDP_ADVERTISE to the address relays reach",
      );
    }
    if (unspecified(config.http.host) && !config.httpAdvertise) {
      t.log.warn(
        "TRANSCEIVER_HTTP binds every address: set TRANSCEIVER_HTTP_ADVERTISE to the URL the gateway reaches",
      );
    }
    const granted = t.#socket.receiveBufferBytes;
    if (granted < config.socketBufferBytes) {
      t.log.warn("backbone socket receive buffer is smaller than asked: raise net.core.rmem_max", {
        askedBytes: config.socketBufferBytes,
        grantedBytes: granted,
      });
    }
    const m = t.metrics;
    const sock = t.#socket;
    t.#mux = new Mux(
      sock.send,
      hmacSha1,
      { drop: (reason) => m.drops[reason].inc() },
      t.clock,
      config.connectRelays ? (host, port) => sock.peerFor(host, port) : undefined,
    );
    t.#socket.attach(t.#mux);
    t.#server = createServer();
    attachApi(t.#server, t);
    await new Promise<void>((resolve, reject) => {
      t.#server.once("error", reject);
      t.#server.listen(config.http.port, config.http.host, () => {
        t.#server.off("error", reject);
        resolve();
      });
    });
    t.#ticker = setInterval(() => t.#tick(), 250);
    t.#ticker.unref();
    if (t.#membership) {
      await t.#beat().catch(() => {});
      t.#heartbeat = setInterval(() => void t.#beat().catch(() => {}), config.heartbeatIntervalMs);
      t.#heartbeat.unref();
    }
    return t;
  }

  get udpAddress(): { host: string; port: number } {
    return this.#socket.address;
  }
  get backbone(): string {
    if (this.config.udpAdvertise) return this.config.udpAdvertise;
    const a = this.udpAddress;
    return a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
  }
  get httpUrl(): string {
    if (this.config.httpAdvertise) return this.config.httpAdvertise;
    const a = this.#server.address() as AddressInfo;
    return a.family === "IPv6" ? `http://[${a.address}]:${a.port}` : `http://${a.address}:${a.port}`;
  }
  get mux(): Mux {
    return this.#mux;
  }
  get load(): number {
    return this.sessions.size + this.#pending;
  }

  heartbeat(): TransceiverHeartbeat {
    return {
      clusterId: this.config.clusterId,
      transceiverId: this.config.transceiverId,
      backbone: this.backbone,
      signallingUrl: this.httpUrl,
      load: this.load,
      capacity: this.config.capacity,
      draining: this.draining,
      sentAt: Date.now(),
    };
  }

  async #beat(): Promise<void> {
    if (this.#stopped || !this.#membership) return;
    await this.#membership.publish(
      this.heartbeat(),
      Math.max(HEARTBEAT_TTL_MS, this.config.heartbeatIntervalMs * 3),
    );
  }

  #tick(): void {
    const now = Date.now();
    this.clock.now = now;
    if (++this.#ticks % 4 !== 0) return;
    for (const s of this.sessions.values()) s.tick(now);
    for (const [id, e] of this.ended) {
      if (now - e.at < ENDED_KEEP_MS && this.ended.size <= ENDED_KEEP_MAX) break;
      this.ended.delete(id);
    }
  }

  // ---- signalling operations (called by api.ts) ------------------------------------------

  async create(req: CreateRequest, receivedAt: number): Promise<CreateResult> {
    const m = this.metrics;
    try {
      if (this.draining) throw new ApiError("draining", "this transceiver is draining", 5);
      if (this.load >= this.config.capacity) {
        throw new ApiError("at_capacity", `this transceiver holds ${this.config.capacity} sessions`, 2);
      }
      const offer = inspectOffer(req.sdp);
      if (!offer.ok) throw new ApiError(offer.code, offer.message);
      const dupKey = `${offer.iceUfrag}:${offer.icePwd}`;
      const dup = this.#byClientUfrag.get(dupKey);
      if (dup !== undefined && this.sessions.has(dup)) {
        throw new ApiError(
          "duplicate_offer",
          `this offer (ice-ufrag ${offer.iceUfrag}) already has a session`,
        );
      }
      let vip = this.config.globalVip;
      if (req.ingress?.vip !== undefined) {
        const hp = parseHostPort(req.ingress.vip);
        if (typeof hp === "string") throw new ApiError("body_malformed", `ingress.vip: ${hp}`);
        vip = hp;
      }
      const callId = mintCallId(
        this.config.clusterId,
        this.config.transceiverId,
        randomBytes(15),
        this.#callIdMac,
      );
      const ticket = req.caller ? this.setupLimiter.admit(req.caller, Date.now()) : undefined;
      this.#pending++;
      let created: { session: Session; answer: string };
      try {
        created = await Session.create(
          {
            config: this.config,
            mux: this.#mux,
            metrics: m,
            hintMac: this.#hintMac,
            hmacSha1,
            log: this.log,
            backend: this.#backend,
            ...(this.#pathLimits ? { pathLimits: this.#pathLimits } : {}),
            onEnded: (s) => {
              if (ticket) this.setupLimiter.release(ticket);
              this.#onEnded(s, dupKey);
            },
          },
          {
            callId,
            region: regionOf(req.client?.continent),
            client: { ...(req.client ?? {}) },
            ingressVip: vip,
            popId: req.ingress?.popId,
            sessionConfig: req.session,
            offer,
            receivedAt,
          },
        );
      } catch (e) {
        if (ticket) this.setupLimiter.release(ticket);
        throw e;
      } finally {
        this.#pending--;
      }
      if (ticket) ticket.session = created.session;
      if (this.#stopped) {
        created.session.end("shutdown");
        throw new ApiError("draining", "this transceiver is stopping", 5);
      }
      const { session, answer } = created;
      this.sessions.set(callId, session);
      this.#byClientUfrag.set(dupKey, callId);
      m.sessionsActive.set(this.sessions.size);
      m.region(session.region).created.inc();
      this.log.info("session created", {
        callId: redactCallId(callId),
        region: session.region,
        mdnsStripped: offer.mdnsCandidatesStripped,
      });
      return {
        callId,
        sdp: answer,
        etag: session.etag,
        clusterId: this.config.clusterId,
        transceiverId: this.config.transceiverId,
        session,
      };
    } catch (e) {
      const reason = e instanceof ApiError ? e.code : "internal";
      m.failed(reason);
      if (!(e instanceof ApiError)) {
        this.log.error("session create failed", { error: e as Error });
        throw new ApiError("internal", "the session could not be created");
      }
      throw e;
    }
  }

  #onEnded(s: Session, dupKey: string): void {
    this.sessions.delete(s.callId);
    if (this.#byClientUfrag.get(dupKey) === s.callId) this.#byClientUfrag.delete(dupKey);
    this.ended.set(s.callId, { status: s.status(), at: Date.now() });
    this.metrics.sessionsActive.set(this.sessions.size);
    const closing = s.closed;
    this.#closing.add(closing);
    void closing.then(() => this.#closing.delete(closing));
    this.log.info("session ended", { callId: redactCallId(s.callId), reason: s.endReason });
    if (this.sessions.size === 0) for (const w of this.#drainWaiters.splice(0)) w();
  }

  /** Resolves a call id to this transceiver's live session, or throws the precise 4xx. */
  lookup(callId: string): Session {
    const v = verifyCallId(callId, this.#callIdMac);
    if (!v.ok) {
      if (v.reason === "malformed" || v.reason === "unsupported-version") {
        throw new ApiError("call_id_malformed", `call id is ${v.reason}`);
      }
      throw new ApiError("call_id_unknown", "no such call");
    }
    if (
      v.callId.clusterId !== this.config.clusterId ||
      v.callId.transceiverId !== this.config.transceiverId
    ) {
      throw new ApiError(
        "wrong_transceiver",
        `call belongs to cluster ${v.callId.clusterId} transceiver ${v.callId.transceiverId}`,
      );
    }
    const s = this.sessions.get(callId);
    if (s) return s;
    if (this.ended.has(callId)) throw new ApiError("call_ended", "the call has ended");
    throw new ApiError("call_id_unknown", "no such call on this transceiver");
  }

  status(callId: string): SessionStatus {
    try {
      return this.lookup(callId).status();
    } catch (e) {
      const ended = this.ended.get(callId);
      if (e instanceof ApiError && e.code === "call_ended" && ended) return ended.status;
      throw e;
    }
  }

  hangup(callId: string, reason: EndReason = "hangup"): void {
    this.lookup(callId).end(reason);
  }

  health(): Record<string, unknown> {
    return {
      status: this.draining ? "draining" : "ok",
      clusterId: this.config.clusterId,
      transceiverId: this.config.transceiverId,
      load: this.load,
      capacity: this.config.capacity,
      transceivers: 1,
      backbone: this.backbone,
    };
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** No new sessions; waits for the existing ones to end, at most drainDeadlineMs, then stops. */
  async drain(deadlineMs = this.config.drainDeadlineMs): Promise<void> {
    if (this.#stopped) return;
    this.draining = true;
    this.log.info("draining", { sessions: this.sessions.size, deadlineMs });
    await this.#beat().catch(() => {});
    if (this.sessions.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadlineMs);
        this.#drainWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    for (const s of [...this.sessions.values()]) s.end("drain");
    await this.stop();
  }

  /** Ends every session now (flowClose sent), closes the sockets and the API. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const s of [...this.sessions.values()]) s.end("shutdown");
    // Peer connections close in the background; do not let a stuck one hold the process.
    await Promise.race([Promise.all([...this.#closing]), new Promise((r) => setTimeout(r, 3000).unref())]);
    await new Promise((r) => setTimeout(r, 20));
    clearInterval(this.#ticker);
    clearInterval(this.#heartbeat);
    await this.#membership?.remove(this.config.clusterId, this.config.transceiverId).catch(() => {});
    this.#server.closeAllConnections?.();
    await new Promise<void>((r) => this.#server.close(() => r()));
    await this.#socket.close();
  }
}

export function regionOf(continent: unknown): string {
  return typeof continent === "string" && /^(AF|AN|AS|EU|NA|OC|SA)$/.test(continent) ? continent : "unknown";
}

/** Call ids are bearer-like; logs keep only a prefix. */
export function redactCallId(callId: string): string {
  return `${callId.slice(0, 12)}…`;
}

export async function startTransceiver(
  config: TransceiverConfig,
  o: TransceiverOptions = {},
): Promise<Transceiver> {
  return Transceiver.start(config, o);
}
