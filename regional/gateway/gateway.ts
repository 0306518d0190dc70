// The cluster's signalling entry (the `signallingUrl` the edge calls): spreads new calls over
// the cluster's transceivers, routes follow-ups by the call id, pipes /v1/ws upgrades, and answers
// for calls of a transceiver that failed. It verifies the edge's signature (signed for
// "gateway:<cluster>", 401 otherwise) and signs each forwarded request again for the one
// transceiver it goes to (the same cluster keyring), so a request captured on the way in works
// nowhere else.
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { createLogger, type Logger } from "../common/log.ts";
import { type CounterHandle, Registry } from "../common/metrics.ts";
import { serve, serverUrl } from "../common/node-server.ts";
import { ApiError } from "../transceiver/errors.ts";
import { sidebandCallId } from "../transceiver/sideband.ts";
import { RequestSigner, RequestVerifier } from "../transceiver/signing.ts";
import { gatewayApp } from "./app.ts";
import { type GatewayConfig, type GatewayInit, withDefaults } from "./config.ts";
import { type Member, Members } from "./members.ts";
import { MovedCalls } from "./moved.ts";
import { findMovedCall, resumeCall } from "./resume.ts";
import { transceiverOfCallId } from "./routing.ts";
import { type Upstream, UpstreamClient } from "./upstream.ts";
import { pipeUpgrade, rejectUpgrade } from "./ws-proxy.ts";

export class Gateway {
  readonly config: GatewayConfig;
  readonly log: Logger;
  readonly registry = new Registry();
  upstream!: UpstreamClient;
  /** Calls resumed on another transceiver than the one their id names. */
  readonly moved = new MovedCalls();
  readonly #members: Members;
  readonly #server: Server;
  verifier!: RequestVerifier;
  #signer!: RequestSigner;
  #poller: NodeJS.Timeout | undefined;
  #polling: Promise<void> | null = null;
  readonly #requests = new Map<string, CounterHandle>();
  readonly #requestsMetric;
  readonly #retries: CounterHandle;
  readonly #failures: CounterHandle;
  readonly #refreshGauges: () => void;

  private constructor(config: GatewayConfig, log: Logger) {
    this.config = config;
    this.log = log;
    this.#members = new Members(config, log);
    const app = gatewayApp(this);
    this.#server = serve(
      (req, env) => app.fetch(req, env),
      (req, socket, head) => this.#upgrade(req, socket, head),
      (e) => log.error("gateway request failed", { error: e as Error }),
    );
    this.#requestsMetric = this.registry.counter(
      "gr_gateway_requests_total",
      "Requests at the cluster gateway",
      ["route", "status"],
    );
    this.#retries = this.registry
      .counter("gr_gateway_retries_total", "Call creations retried on another transceiver")
      .with({});
    this.#failures = this.registry
      .counter("gr_gateway_transceiver_failures_total", "Transceivers seen going down while up")
      .with({});
    this.#members.onDown = () => this.#failures.inc();
    const g = this.registry.gauge("gr_gateway_transceivers", "Transceivers by state", ["state"]);
    const usable = g.with({ state: "usable" });
    const known = g.with({ state: "known" });
    this.#refreshGauges = () => {
      known.set(this.members.size);
      usable.set(this.candidates().length);
    };
  }

  static async start(init: GatewayInit, log?: Logger): Promise<Gateway> {
    const config = withDefaults(init);
    const g = new Gateway(config, log ?? createLogger({ svc: "gateway", cluster: config.clusterId }));
    const rejected = g.registry.counter(
      "gr_gateway_signatures_rejected_total",
      "Signed requests refused, by reason (docs/wire-formats.md §6)",
      ["reason"],
    );
    const storeErrors = g.registry
      .counter("gr_gateway_nonce_store_errors_total", "Nonce claims skipped because Redis failed")
      .with({});
    g.verifier = await RequestVerifier.create(
      config.clusterKeys,
      { clusterId: config.clusterId },
      {
        windowMs: config.replayWindowMs,
        ...(config.nonces ? { shared: config.nonces } : {}),
        onReject: (reason) => rejected.with({ reason: reason.replace(/-/g, "_") }).inc(),
        onSharedFailure: () => storeErrors.inc(),
      },
    );
    g.#signer = await RequestSigner.create(config.clusterKeys);
    g.upstream = new UpstreamClient(config.upstreamTimeoutMs, g.#signer, config.clusterId);
    await g.poll();
    g.#poller = setInterval(() => void g.poll(), config.pollMs);
    g.#poller.unref();
    await new Promise<void>((resolve, reject) => {
      g.#server.once("error", reject);
      g.#server.listen(config.http.port, config.http.host, () => resolve());
    });
    return g;
  }

  get url(): string {
    return serverUrl(this.#server);
  }

  get members(): Map<number, Member> {
    return this.#members.byId;
  }

  /** Refreshes member state (one refresh at a time). */
  poll(): Promise<void> {
    this.#polling ??= this.#pollOnce().finally(() => {
      this.#polling = null;
    });
    return this.#polling;
  }

  async #pollOnce(): Promise<void> {
    await this.#members.poll();
    this.#refreshGauges();
  }

  candidates(): Member[] {
    return this.#members.candidates();
  }

  failedAt(transceiverId: number): number | undefined {
    return this.#members.failedAt(transceiverId);
  }

  /** A request to `m` failed at the connection: it is down until a probe says otherwise. */
  lost(m: Member, e: unknown): void {
    if (!m.healthy) return;
    this.#members.markDown(m, (e as Error).message === "upstream timeout" ? "timeout" : "unreachable");
    this.#refreshGauges();
  }

  count(route: string, status: number): void {
    const key = `${route}|${status}`;
    let c = this.#requests.get(key);
    if (!c) {
      c = this.#requestsMetric.with({ route, status: String(status) });
      this.#requests.set(key, c);
    }
    c.inc();
  }

  /** POST /v1/calls: least loaded first, the next one on a 503 or a connection failure. */
  async create(target: string, headers: Headers, body: Uint8Array): Promise<Upstream> {
    const tried = this.candidates();
    if (tried.length === 0) {
      const all = [...this.members.values()];
      const draining = all.length > 0 && all.every((m) => m.draining);
      throw draining
        ? new ApiError("draining", "every transceiver of this cluster is draining", 5)
        : new ApiError("no_transceiver", "no transceiver of this cluster can take a call", 2);
    }
    let last: Upstream | undefined;
    for (const [i, m] of tried.entries()) {
      if (i > 0) this.#retries.inc();
      let up: Upstream;
      try {
        up = await this.upstream.forward(m, "POST", target, headers, body);
      } catch (e) {
        this.lost(m, e);
        continue;
      }
      last = up;
      if (up.status === 503) {
        m.load = Math.max(m.load, m.capacity);
        continue;
      }
      if (up.status === 201) m.load++;
      return up;
    }
    if (last) return last;
    throw new ApiError("no_transceiver", "no transceiver of this cluster answered", 2);
  }

  /** POST /v1/calls/{callId}: resume the call (resume.ts). */
  resume(
    callId: string,
    owner: number,
    target: string,
    headers: Headers,
    body: Uint8Array,
  ): Promise<Upstream> {
    return resumeCall(this, callId, owner, target, headers, body);
  }

  /** The call's transceiver is down and this replica knows no move: who has it now (resume.ts)? */
  findMoved(
    callId: string,
    owner: number,
    method: string,
    target: string,
    headers: Headers,
    body: Uint8Array,
  ): Promise<Upstream | undefined> {
    return findMovedCall(this, callId, owner, method, target, headers, body);
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", () => {});
    const url = req.url ?? "/";
    // A call's sideband goes to the transceiver its call id names; /v1/ws to the least loaded.
    const sideband = sidebandCallId(url.split("?")[0]!);
    if (url.split("?")[0] !== "/v1/ws" && sideband === undefined) {
      rejectUpgrade(socket, new ApiError("not_found", "no such path"));
      return;
    }
    const method = req.method ?? "GET";
    this.verifier
      .verify(method, url, new Uint8Array(0), req.headers)
      .then(async (caller) => {
        const owner = sideband === undefined ? undefined : transceiverOfCallId(sideband);
        const m =
          sideband === undefined
            ? this.candidates()[0]
            : this.members.get(this.moved.get(sideband) ?? owner ?? -1);
        if (!m && sideband !== undefined)
          return rejectUpgrade(socket, new ApiError("call_id_unknown", "no such call in this cluster"));
        if (!m)
          return rejectUpgrade(
            socket,
            new ApiError("no_transceiver", "no transceiver of this cluster can take a call", 2),
          );
        const signed = await this.#signer.sign(
          { method, pathAndQuery: url, body: new Uint8Array(0), target: "", caller },
          { clusterId: this.config.clusterId, transceiverId: m.id },
        );
        if (sideband === undefined) m.load++;
        pipeUpgrade(m, req, socket, head, signed, (lost) => this.lost(lost, new Error("connection lost")));
        this.count("ws", 101);
      })
      .catch((e: unknown) => {
        const err = e instanceof ApiError ? e : new ApiError("internal", "error");
        this.count("ws", err.status);
        rejectUpgrade(socket, err);
      });
  }

  health(): Record<string, unknown> {
    const all = [...this.members.values()];
    const live = all.filter((m) => this.#members.live(m));
    const usable = live.filter((m) => !m.draining);
    return {
      status: live.length > 0 && usable.length === 0 ? "draining" : "ok",
      clusterId: this.config.clusterId,
      load: live.reduce((s, m) => s + m.load, 0),
      capacity: usable.reduce((s, m) => s + m.capacity, 0),
      transceivers: live.length,
    };
  }

  async stop(): Promise<void> {
    clearInterval(this.#poller);
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
    this.upstream.close();
    await this.config.nonces?.close();
  }
}
