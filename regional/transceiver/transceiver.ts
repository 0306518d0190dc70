// One transceiver process: the shared backbone socket and mux, the call table (calls.ts),
// the signalling API, heartbeats, timers, drain and stop. startTransceiver() runs it embedded
// (tests, benchmarks); main.ts runs it from the environment and injects the backend.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { RTCDtlsTransport } from "werift";
import { HEARTBEAT_TTL_MS, type TransceiverHeartbeat } from "../../shared/membership.ts";
import { hmacSha1, nodeMac } from "../common/hmac.ts";
import { createLogger, type Logger } from "../common/log.ts";
import { apiServer } from "./api.ts";
import type { ApiHost } from "./api-host.ts";
import { type BackendConnector, INTERNAL_ECHO } from "./backend-link.ts";
import type { CallStatus, EndReason } from "./call-types.ts";
import { CallTable, type CreateRequest, type CreateResult } from "./calls.ts";
import { Conferences } from "./conference/conferences.ts";
import type { TransceiverConfig } from "./config.ts";
import { type CoarseClock, Mux } from "./core/mux.ts";
import type { PathLimits } from "./core/paths.ts";
import { ApiError } from "./errors.ts";
import { tuneHeapGrowing } from "./heap-tuning.ts";
import type { MembershipStore } from "./membership.ts";
import { TransceiverMetrics } from "./metrics.ts";
import { RESUME_REQUIRED } from "./resume.ts";
import { SetupLimiter } from "./setup-limit.ts";
import type { Backbone } from "./shell/backbone.ts";
import { openBackbone } from "./shell/backbone-open.ts";
import type { Call } from "./shell/call.ts";
import { webSocketBackend } from "./shell/websocket-backend.ts";
import { assertGlueCompatible } from "./shell/werift-glue.ts";
import { RequestVerifier } from "./signing.ts";
import { installFastSrtp, installPacketIndexEstimate } from "./srtp/install.ts";
import { warnAtStart } from "./startup-warnings.ts";

export type { CreateRequest, CreateResult } from "./calls.ts";
export { redactCallId, regionOf } from "./calls.ts";

export interface TransceiverOptions {
  log?: Logger;
  membership?: MembershipStore;
  /** Path book limits for every session (tests; the defaults are in core/paths.ts). */
  pathLimits?: Partial<PathLimits>;
  /** The backend each session opens (main.ts chooses); default: the WebSocket bridge to BACKEND_URL. */
  backend?: BackendConnector;
}

export class Transceiver implements ApiHost {
  readonly config: TransceiverConfig;
  readonly metrics: TransceiverMetrics;
  readonly log: Logger;
  readonly clock: CoarseClock = { now: Date.now() };
  readonly #table: CallTable;
  #socket!: Backbone;
  #mux!: Mux;
  #server!: Server;
  verifier!: RequestVerifier;
  /** Conferences (docs/cascade.md); undefined without GR_BACKBONE_KEYS. */
  conferences: Conferences | undefined;
  readonly setupLimiter: SetupLimiter;
  readonly #membership: MembershipStore | undefined;
  draining = false;
  #stopped = false;
  readonly #ownBackend: BackendConnector | undefined;
  #ticker: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #ticks = 0;
  #drainWaiters: (() => void)[] = [];

  private constructor(config: TransceiverConfig, o: TransceiverOptions) {
    this.config = config;
    this.metrics = new TransceiverMetrics(config.clusterId);
    this.log =
      o.log ??
      createLogger({ svc: "transceiver", cluster: config.clusterId, transceiver: config.transceiverId });
    this.#membership = o.membership;
    this.setupLimiter = new SetupLimiter(
      config.setupLimitPerKey,
      config.setupLimitPerNetwork,
      config.setupTimeoutMs,
    );
    if (!o.backend && config.backendUrl.startsWith(INTERNAL_ECHO)) {
      throw new Error(`BACKEND_URL ${config.backendUrl} is an in-process backend: the caller must inject it`);
    }
    // An injected backend is the embedder's to close; the one built here closes with the transceiver.
    this.#ownBackend = o.backend ? undefined : webSocketBackend(config, this.metrics);
    const backend = o.backend ?? this.#ownBackend!;
    this.#table = new CallTable({
      config,
      metrics: this.metrics,
      log: this.log,
      hintMac: nodeMac(config.hintKeys),
      callIdMac: nodeMac(config.callIdKeys),
      setupLimiter: this.setupLimiter,
      backend,
      pathLimits: o.pathLimits,
      mux: () => this.#mux,
      admit: (load) => {
        if (this.draining) throw new ApiError("draining", "this transceiver is draining", 5);
        if (load >= config.capacity) {
          throw new ApiError("at_capacity", `this transceiver holds ${config.capacity} calls`, 2);
        }
      },
      stopped: () => this.#stopped,
      onEmpty: () => {
        for (const w of this.#drainWaiters.splice(0)) w();
      },
    });
  }

  get calls(): Map<string, Call> {
    return this.#table.live;
  }
  /** Recently ended sessions (status stays readable for a few minutes). */
  get ended(): Map<string, { status: CallStatus; at: number }> {
    return this.#table.ended;
  }

  static async start(config: TransceiverConfig, o: TransceiverOptions = {}): Promise<Transceiver> {
    assertGlueCompatible();
    const t = new Transceiver(config, o);
    tuneHeapGrowing(config.heapGrowingPercent);
    const srtp = installFastSrtp(config.srtpProfiles);
    if (!srtp.ok)
      t.log.warn("fast SRTP not installed, werift's own SRTP runs (slower)", { reason: srtp.reason });
    const index = installPacketIndexEstimate();
    if (!index.ok)
      t.log.warn("werift's SRTP index estimate runs (breaks on long gaps) and no SRTP replay window", {
        reason: index.reason,
      });
    // One DTLS certificate per process (werift caches it); make it before the first offer.
    await RTCDtlsTransport.SetupCertificate();
    t.verifier = await RequestVerifier.create(
      config.clusterKeys,
      { clusterId: config.clusterId, transceiverId: config.transceiverId },
      { windowMs: config.replayWindowMs },
    );
    const opened = await openBackbone(config, t.metrics);
    t.#socket = opened.socket;
    t.metrics.datagramIo(opened.io, opened.totals);
    // Falling back to dgram (no addon) is a warning, as for the relay: about half the rate per core.
    const fellBack = opened.io === "dgram" && config.io === "auto";
    t.log[fellBack ? "warn" : "info"]("backbone datagram I/O", { io: opened.io, reason: opened.reason });
    warnAtStart(config, t.log, t.#socket.receiveBufferBytes, opened.io);
    if (config.conference) {
      const ids = { clusterId: config.clusterId, transceiverId: config.transceiverId };
      t.conferences = await Conferences.open(config.conference, t.metrics, ids, (r, at) => t.create(r, at));
    }
    const m = t.metrics;
    const sock = t.#socket;
    t.#mux = new Mux(
      sock.send,
      hmacSha1,
      { drop: (reason) => m.drops[reason].inc() },
      t.clock,
      config.connectRelays || opened.io === "batch" ? (host, port) => sock.peerFor(host, port) : undefined,
    );
    t.#socket.attach(t.#mux);
    t.#server = apiServer(t);
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
    return this.#table.load;
  }

  heartbeat(): TransceiverHeartbeat {
    return {
      clusterId: this.config.clusterId,
      transceiverId: this.config.transceiverId,
      backbone: this.backbone,
      apiUrl: this.httpUrl,
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
    this.#table.tick(now);
  }

  // ---- signalling operations (called by api.ts) ------------------------------------------

  create(req: CreateRequest, receivedAt: number): Promise<CreateResult> {
    return this.#table.create(req, receivedAt);
  }
  /** Resolves a call id to this transceiver's live session, or throws the precise 4xx. */
  lookup(callId: string): Call {
    return this.#table.lookup(callId);
  }
  status(callId: string): CallStatus {
    return this.#table.status(callId);
  }
  hangup(callId: string, reason: EndReason = "hangup"): void {
    this.#table.hangup(callId, reason);
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
    this.log.info("draining", { calls: this.calls.size, deadlineMs });
    await this.#beat().catch(() => {});
    for (const s of this.calls.values()) s.notifyClient(RESUME_REQUIRED);
    if (this.calls.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadlineMs);
        this.#drainWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.#table.endAll("drain");
    await this.stop();
  }

  /** Ends every session now (flowClose sent), closes the sockets and the API. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#table.endAll("shutdown");
    // Peer connections close in the background; do not let a stuck one hold the process.
    await Promise.race([
      Promise.all([...this.#table.closing]),
      new Promise((r) => setTimeout(r, 3000).unref()),
    ]);
    await new Promise((r) => setTimeout(r, 20));
    this.#ownBackend?.close?.();
    clearInterval(this.#ticker);
    clearInterval(this.#heartbeat);
    await this.#membership?.remove(this.config.clusterId, this.config.transceiverId).catch(() => {});
    this.#server.closeAllConnections?.();
    await new Promise<void>((r) => this.#server.close(() => r()));
    await this.#socket.close();
    await this.conferences?.close();
  }
}

export async function startTransceiver(
  config: TransceiverConfig,
  o: TransceiverOptions = {},
): Promise<Transceiver> {
  return Transceiver.start(config, o);
}
