// The cluster's signalling entry (the `signallingUrl` the edge calls). It spreads new sessions
// over the cluster's transceiver processes (least loaded first, from heartbeats or /healthz
// polls; the next one on a 503) and routes every follow-up by the transceiver id inside the call
// id. It verifies the edge's signature (signed for "gateway:<cluster>", 401 otherwise) and signs
// each forwarded request again for the one transceiver it goes to ("transceiver:<cluster>/<id>",
// the same cluster keyring), so a request captured on the way in works nowhere else. WebSocket
// upgrades are piped through to one transceiver.
//
// Run: `npx node regional/transceiver/gateway.ts` with CLUSTER_ID, GATEWAY_HTTP, GR_CLUSTER_SECRET
// and either GATEWAY_TRANSCEIVERS="1=http://127.0.0.1:7111,2=http://127.0.0.1:7112" (polls their
// /healthz) or REDIS_URL (reads transceiver heartbeats). docs/transceiver.md has the details.
import {
  Agent,
  createServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { decodeBase64 } from "../../shared/bytes/base64.ts";
import { CALL_ID_BYTES, CALL_ID_LENGTH, CALL_ID_PREFIX } from "../../shared/callid/callid.ts";
import type { Keyring } from "../../shared/keys.ts";
import type { TransceiverHeartbeat } from "../../shared/membership.ts";
import { DEFAULT_REPLAY_WINDOW_MS, SIGNING_HEADERS } from "../../shared/signing/request.ts";
import type { HostPort } from "../../shared/topology/address.ts";
import { createLogger, type Logger } from "../common/log.ts";
import { type CounterHandle, PROMETHEUS_CONTENT_TYPE, Registry } from "../common/metrics.ts";
import { ConfigError, EnvReader } from "./config.ts";
import { ApiError } from "./errors.ts";
import { readBody, sendError, sendJson } from "./http.ts";
import { type MembershipStore, RedisMembership } from "./membership.ts";
import { RedisNonces } from "./nonce-store.ts";
import { sidebandCallId } from "./sideband.ts";
import { RequestSigner, RequestVerifier, type SharedNonces } from "./signing.ts";

export interface GatewayConfig {
  clusterId: number;
  http: HostPort;
  /** GR_CLUSTER_SECRET: verifies the edge, signs what is forwarded to the transceivers. */
  clusterKeys: Keyring;
  /** Static members: id → base URL (polled at /healthz). */
  transceivers: Map<number, string>;
  /** Used when `transceivers` is empty. */
  membership: MembershipStore | undefined;
  pollMs: number;
  /** A member not heard from for this long is not used. */
  staleMs: number;
  replayWindowMs: number;
  upstreamTimeoutMs: number;
  /** Nonces shared with the cluster's other gateway replicas (Redis when REDIS_URL is set). */
  nonces?: SharedNonces & { close(): Promise<void> };
}

interface Member {
  id: number;
  url: URL;
  load: number;
  capacity: number;
  draining: boolean;
  healthy: boolean;
  seenAt: number;
}

const MAX_BODY = 256 * 1024;
const FORWARD_HEADERS = ["content-type", "if-match"];
const RETURN_HEADERS = ["content-type", "etag", "location", "retry-after", "allow"];

/** The transceiver id inside a call id (layout only; the transceiver checks the MAC). */
export function transceiverOfCallId(callId: string): number | undefined {
  if (callId.length !== CALL_ID_LENGTH || !callId.startsWith(CALL_ID_PREFIX)) return undefined;
  const b = decodeBase64(callId.slice(CALL_ID_PREFIX.length), "url");
  if (!b || b.length !== CALL_ID_BYTES) return undefined;
  return (b[3]! << 8) | b[4]!;
}

export function parseMembers(text: string, what = "GATEWAY_TRANSCEIVERS"): Map<number, string> | string {
  const out = new Map<number, string>();
  for (const [i, part] of text.split(",").entries()) {
    const m = /^\s*(\d{1,5})\s*=\s*(https?:\/\/\S+?)\/?\s*$/.exec(part);
    if (!m) return `${what}[${i}]: expected "<transceiverId>=http://host:port"`;
    const id = Number(m[1]);
    if (id < 1 || id > 65535) return `${what}[${i}]: transceiver id ${id} is outside 1-65535`;
    if (out.has(id)) return `${what}[${i}]: transceiver id ${id} is repeated`;
    out.set(id, m[2]!);
  }
  return out;
}

export class Gateway {
  readonly config: GatewayConfig;
  readonly log: Logger;
  readonly members = new Map<number, Member>();
  readonly registry = new Registry();
  readonly #server: Server;
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 256 });
  #verifier!: RequestVerifier;
  #signer!: RequestSigner;
  #poller: NodeJS.Timeout | undefined;
  readonly #requests = new Map<string, CounterHandle>();
  readonly #requestsMetric;
  readonly #retries: CounterHandle;

  private constructor(config: GatewayConfig, log: Logger) {
    this.config = config;
    this.log = log;
    this.#server = createServer((req, res) => {
      this.#route(req, res).catch((e: unknown) => {
        if (res.headersSent) return res.destroy();
        sendError(res, e instanceof ApiError ? e : new ApiError("internal", "internal error"));
        if (!(e instanceof ApiError)) log.error("gateway request failed", { error: e as Error });
      });
    });
    this.#server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.#upgrade(req, socket, head),
    );
    this.#requestsMetric = this.registry.counter(
      "gr_gateway_requests_total",
      "Requests at the cluster gateway",
      ["route", "status"],
    );
    this.#retries = this.registry
      .counter("gr_gateway_retries_total", "Session creations retried on another transceiver")
      .with({});
    const g = this.registry.gauge("gr_gateway_transceivers", "Transceivers by state", ["state"]);
    const usable = g.with({ state: "usable" });
    const known = g.with({ state: "known" });
    this.#refreshGauges = () => {
      known.set(this.members.size);
      usable.set([...this.members.values()].filter((m) => this.#usable(m)).length);
    };
  }
  readonly #refreshGauges: () => void;

  static async start(config: GatewayConfig, log?: Logger): Promise<Gateway> {
    const g = new Gateway(config, log ?? createLogger({ svc: "gateway", cluster: config.clusterId }));
    const rejected = g.registry.counter(
      "gr_gateway_signatures_rejected_total",
      "Signed requests refused, by reason (docs/wire-formats.md §6)",
      ["reason"],
    );
    const storeErrors = g.registry
      .counter("gr_gateway_nonce_store_errors_total", "Nonce claims skipped because Redis failed")
      .with({});
    g.#verifier = await RequestVerifier.create(
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
    for (const [id, url] of config.transceivers) {
      g.members.set(id, {
        id,
        url: new URL(url),
        load: 0,
        capacity: 0,
        draining: false,
        healthy: false,
        seenAt: 0,
      });
    }
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
    const a = this.#server.address() as AddressInfo;
    return a.family === "IPv6" ? `http://[${a.address}]:${a.port}` : `http://${a.address}:${a.port}`;
  }

  /** Refreshes member state (static: /healthz of each; Redis: heartbeats). */
  async poll(): Promise<void> {
    const now = Date.now();
    if (this.config.transceivers.size > 0) {
      await Promise.all(
        [...this.members.values()].map(async (m) => {
          try {
            const res = await fetch(new URL("/healthz", m.url), {
              signal: AbortSignal.timeout(this.config.upstreamTimeoutMs),
            });
            const j = (await res.json()) as { status?: string; load?: number; capacity?: number };
            m.load = Number(j.load ?? 0);
            m.capacity = Number(j.capacity ?? 0);
            m.draining = j.status === "draining";
            m.healthy = res.ok;
            m.seenAt = now;
          } catch {
            m.healthy = false;
          }
        }),
      );
    } else if (this.config.membership) {
      let beats: TransceiverHeartbeat[];
      try {
        beats = await this.config.membership.list(this.config.clusterId);
      } catch {
        return;
      }
      const seen = new Set<number>();
      for (const b of beats) {
        seen.add(b.transceiverId);
        let m = this.members.get(b.transceiverId);
        if (!m || m.url.href !== new URL(b.signallingUrl).href) {
          m = {
            id: b.transceiverId,
            url: new URL(b.signallingUrl),
            load: 0,
            capacity: 0,
            draining: false,
            healthy: true,
            seenAt: 0,
          };
          this.members.set(b.transceiverId, m);
        }
        m.load = b.load;
        m.capacity = b.capacity;
        m.draining = b.draining;
        m.healthy = true;
        m.seenAt = now;
      }
      for (const [id] of this.members) if (!seen.has(id)) this.members.delete(id);
    }
    this.#refreshGauges();
  }

  #usable(m: Member): boolean {
    return m.healthy && !m.draining && m.load < m.capacity && Date.now() - m.seenAt <= this.config.staleMs;
  }

  /** Members that may take a new session, least loaded (by fill ratio) first. */
  candidates(): Member[] {
    return [...this.members.values()]
      .filter((m) => this.#usable(m))
      .sort((a, b) => a.load / a.capacity - b.load / b.capacity || a.load - b.load || a.id - b.id);
  }

  #count(route: string, status: number): void {
    const key = `${route}|${status}`;
    let c = this.#requests.get(key);
    if (!c) {
      c = this.#requestsMetric.with({ route, status: String(status) });
      this.#requests.set(key, c);
    }
    c.inc();
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    const path = url.split("?")[0]!;
    const method = req.method ?? "GET";
    if (method === "GET" && path === "/healthz") return sendJson(res, 200, this.health());
    if (method === "GET" && path === "/readyz") {
      const ready = this.candidates().length > 0;
      return sendJson(res, ready ? 200 : 503, { ready });
    }
    if (method === "GET" && path === "/metrics") {
      const text = this.registry.render();
      res.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE }).end(text);
      return;
    }
    const route =
      path === "/v1/sessions" ? "sessions" : path.startsWith("/v1/sessions/") ? "session" : "other";
    try {
      if (route === "other") throw new ApiError("not_found", `no route for ${method} ${path}`);
      const body = await readBody(req, MAX_BODY);
      const caller = await this.#verifier.verify(method, url, body, req.headers);
      if (route === "sessions") {
        if (method !== "POST")
          throw new ApiError("method_not_allowed", `${method} is not allowed on /v1/sessions`);
        return await this.#create(req, url, body, caller, res);
      }
      const callId = path.slice("/v1/sessions/".length);
      const tid = transceiverOfCallId(callId);
      if (tid === undefined) throw new ApiError("call_id_malformed", "call id is malformed");
      const m = this.members.get(tid);
      if (!m) throw new ApiError("call_id_unknown", "no such call in this cluster");
      const up = await this.#forward(m, method, url, req, body, caller);
      this.#count(route, up.status);
      this.#reply(res, up);
    } catch (e) {
      if (e instanceof ApiError) this.#count(route, e.status);
      throw e;
    }
  }

  async #create(
    req: IncomingMessage,
    url: string,
    body: Buffer,
    caller: string,
    res: ServerResponse,
  ): Promise<void> {
    const tried = this.candidates();
    if (tried.length === 0) {
      const all = [...this.members.values()];
      const draining = all.length > 0 && all.every((m) => m.draining);
      throw draining
        ? new ApiError("draining", "every transceiver of this cluster is draining", 5)
        : new ApiError("no_transceiver", "no transceiver of this cluster can take a session", 2);
    }
    let last: Upstream | undefined;
    for (const [i, m] of tried.entries()) {
      if (i > 0) this.#retries.inc();
      let up: Upstream;
      try {
        up = await this.#forward(m, "POST", url, req, body, caller);
      } catch {
        m.healthy = false;
        continue;
      }
      last = up;
      if (up.status === 503) {
        m.load = Math.max(m.load, m.capacity);
        continue;
      }
      if (up.status === 201) m.load++;
      this.#count("sessions", up.status);
      this.#reply(res, up);
      return;
    }
    if (last) {
      this.#count("sessions", last.status);
      this.#reply(res, last);
      return;
    }
    throw new ApiError("no_transceiver", "no transceiver of this cluster answered", 2);
  }

  async #forward(
    m: Member,
    method: string,
    url: string,
    req: IncomingMessage,
    body: Buffer,
    caller: string,
  ): Promise<Upstream> {
    const headers = await this.#signer.sign(
      { method, pathAndQuery: url, body, target: "", caller },
      { clusterId: this.config.clusterId, transceiverId: m.id },
    );
    for (const h of FORWARD_HEADERS) {
      const v = req.headers[h];
      if (typeof v === "string") headers[h] = v;
    }
    if (body.length > 0 || method === "POST" || method === "PATCH")
      headers["content-length"] = String(body.length);
    return new Promise((resolve, reject) => {
      const r = request(
        {
          host: m.url.hostname.replace(/^\[|\]$/g, ""),
          port: m.url.port || 80,
          method,
          path: url,
          headers,
          agent: this.#agent,
          timeout: this.config.upstreamTimeoutMs,
        },
        (up) => {
          const chunks: Buffer[] = [];
          up.on("data", (c: Buffer) => chunks.push(c));
          up.on("end", () => {
            const h: Record<string, string> = {};
            for (const name of RETURN_HEADERS) {
              const v = up.headers[name];
              if (typeof v === "string") h[name] = v;
            }
            resolve({ status: up.statusCode ?? 502, headers: h, body: Buffer.concat(chunks) });
          });
          up.on("error", reject);
        },
      );
      r.on("timeout", () => r.destroy(new Error("upstream timeout")));
      r.on("error", reject);
      r.end(body);
    });
  }

  #reply(res: ServerResponse, up: Upstream): void {
    res.writeHead(up.status, { ...up.headers, "content-length": up.body.length });
    res.end(up.body);
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", () => {});
    const url = req.url ?? "/";
    const fail = (e: ApiError): void => {
      const body = JSON.stringify(e.toJSON());
      socket.end(
        `HTTP/1.1 ${e.status} ${e.code}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${e.retryAfter ? `Retry-After: ${e.retryAfter}\r\n` : ""}Connection: close\r\n\r\n${body}`,
      );
    };
    // A call's sideband goes to the transceiver its call id names; /v1/ws to the least loaded.
    const sideband = sidebandCallId(url.split("?")[0]!);
    if (url.split("?")[0] !== "/v1/ws" && sideband === undefined) {
      fail(new ApiError("not_found", "no such path"));
      return;
    }
    const method = req.method ?? "GET";
    this.#verifier
      .verify(method, url, new Uint8Array(0), req.headers)
      .then(async (caller) => {
        const tid = sideband === undefined ? undefined : transceiverOfCallId(sideband);
        const m = sideband === undefined ? this.candidates()[0] : this.members.get(tid ?? -1);
        if (!m && sideband !== undefined)
          return fail(new ApiError("call_id_unknown", "no such call in this cluster"));
        if (!m)
          return fail(new ApiError("no_transceiver", "no transceiver of this cluster can take a session", 2));
        const signed = await this.#signer.sign(
          { method, pathAndQuery: url, body: new Uint8Array(0), target: "", caller },
          { clusterId: this.config.clusterId, transceiverId: m.id },
        );
        if (sideband === undefined) m.load++;
        const up = connect(Number(m.url.port || 80), m.url.hostname.replace(/^\[|\]$/g, ""));
        up.on("error", () => socket.destroy());
        socket.on("close", () => up.destroy());
        up.on("close", () => socket.destroy());
        up.on("connect", () => {
          const lines = [`${req.method} ${url} HTTP/1.1`];
          const raw = req.rawHeaders;
          for (let i = 0; i < raw.length; i += 2) {
            if (!SIGNING_HEADERS.includes(raw[i]!.toLowerCase())) lines.push(`${raw[i]}: ${raw[i + 1]}`);
          }
          for (const [k, v] of Object.entries(signed)) lines.push(`${k}: ${v}`);
          up.write(`${lines.join("\r\n")}\r\n\r\n`);
          if (head.length > 0) up.write(head);
          socket.pipe(up);
          up.pipe(socket);
        });
        this.#count("ws", 101);
      })
      .catch((e: unknown) => {
        const err = e instanceof ApiError ? e : new ApiError("internal", "error");
        this.#count("ws", err.status);
        fail(err);
      });
  }

  health(): Record<string, unknown> {
    const all = [...this.members.values()];
    const live = all.filter((m) => m.healthy && Date.now() - m.seenAt <= this.config.staleMs);
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
    this.#agent.destroy();
  }
}

interface Upstream {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export function loadGatewayConfig(env: Record<string, string | undefined>): GatewayConfig {
  const r = new EnvReader(env);
  const clusterId = r.int("CLUSTER_ID", 1, 65535);
  const http = r.hostPort("GATEWAY_HTTP", "127.0.0.1:7101");
  const clusterKeys = r.clusterKeys("GR_CLUSTER_SECRET");
  const list = r.optional("GATEWAY_TRANSCEIVERS");
  const redisUrl = r.optional("REDIS_URL");
  let transceivers = new Map<number, string>();
  if (list !== undefined) {
    const parsed = parseMembers(list);
    if (typeof parsed === "string") r.problems.push(parsed);
    else transceivers = parsed;
  } else if (redisUrl === undefined) {
    r.problems.push("GATEWAY_TRANSCEIVERS or REDIS_URL: one is required to find the transceivers");
  }
  const cfg: GatewayConfig = {
    clusterId,
    http,
    clusterKeys,
    transceivers,
    membership: undefined,
    pollMs: r.int("GATEWAY_POLL_MS", 100, 60_000, 1000),
    staleMs: r.int("GATEWAY_STALE_MS", 500, 600_000, 6000),
    replayWindowMs: r.int("REPLAY_WINDOW_MS", 1000, 60_000, DEFAULT_REPLAY_WINDOW_MS),
    upstreamTimeoutMs: r.int("GATEWAY_UPSTREAM_TIMEOUT_MS", 100, 120_000, 10_000),
  };
  r.done();
  if (list === undefined && redisUrl !== undefined) cfg.membership = new RedisMembership(redisUrl);
  if (redisUrl !== undefined) cfg.nonces = new RedisNonces(redisUrl);
  return cfg;
}

async function main(): Promise<void> {
  const log = createLogger({ svc: "gateway", cluster: process.env.CLUSTER_ID });
  let cfg: GatewayConfig;
  try {
    cfg = loadGatewayConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      log.error("invalid configuration", { problems: e.problems });
      process.exit(2);
    }
    throw e;
  }
  const g = await Gateway.start(cfg, log);
  const stop = async (signal: string): Promise<void> => {
    log.info("stopping", { signal });
    await g.stop();
    await cfg.membership?.close();
    await cfg.nonces?.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // Handlers first: a supervisor may signal as soon as it reads the ready line.
  process.stdout.write(
    `${JSON.stringify({
      msg: "ready",
      svc: "gateway",
      clusterId: cfg.clusterId,
      http: g.url,
      transceivers: [...g.members.keys()],
      membership: cfg.transceivers.size > 0 ? "static" : "redis",
    })}\n`,
  );
}

if (import.meta.main) await main();
