// One relay worker: its sockets, its engine, its timers. N of these share the VIP / backbone ports
// through SO_REUSEPORT; each also owns connected sockets to its upstream peers, so the answers to a
// flow come back to the worker that holds it. The data path never awaits, logs or allocates what
// it can avoid; everything per flow (mirror writes, lookups) runs beside it.
import type dgram from "node:dgram";
import { performance } from "node:perf_hooks";
import { FRAME_FLAG_TCP, FRAME_HEADER_BYTES } from "../../../shared/backbone/frame.ts";
import { HintVerifier } from "../../../shared/hint/codec.ts";
import { parseKeyring } from "../../../shared/keys.ts";
import { parseHostPort } from "../../../shared/topology/address.ts";
import { nodeMac } from "../../common/hmac.ts";
import type { Logger } from "../../common/log.ts";
import { chooseIoMode, type IoMode } from "../../common/native/index.ts";
import { ioMetrics } from "../../common/native/io-metrics.ts";
import type { RelayConfig } from "../config.ts";
import { ClusterEngine } from "../core/cluster-engine.ts";
import { PopEngine, type PopEngineConfig } from "../core/pop-engine.ts";
import { SourceList } from "../core/sources.ts";
import { Action, PeerKind } from "../core/types.ts";
import { Liveness, LiveRegistry, pingFrame } from "../registry/liveness.ts";
import { RedisRegistry } from "../registry/redis-registry.ts";
import { MemoryRegistry, type TransceiverRegistry } from "../registry/registry.ts";
import type { FlowStore } from "../store/flow-store.ts";
import { connectRedis, waitReady } from "../store/redis.ts";
import { RedisFlowStore } from "../store/redis-flow-store.ts";
import { BatchPath } from "./batch-path.ts";
import { RelayMetrics } from "./metrics.ts";
import { startTcp, type TcpListener } from "./tcp-hook.ts";
import { bindUdp, closeUdp, connectUdp, formatAddress } from "./udp.ts";

export interface WorkerAddresses {
  vip?: string;
  /** The ICE-TCP listener (a POP with vipTcpPort). */
  vipTcp?: string;
  backbone: string;
}

export interface FlowsReply {
  active: number;
  halfOpen: number;
  flow?: Record<string, unknown> | null;
}

const EMPTY_LOOKUP = { has: (): boolean => false };
const SCRATCH_BYTES = 65_536 + FRAME_HEADER_BYTES;
const MAX_CACHED_VIEW = 2_048;

/** Logs at most once per `ms` per key (socket errors can come per packet). */
function rateLimited(
  log: Logger,
  ms: number,
): (key: string, msg: string, fields: Record<string, unknown>) => void {
  const last = new Map<string, number>();
  return (key, msg, fields) => {
    const now = Date.now();
    if ((last.get(key) ?? 0) + ms > now) return;
    last.set(key, now);
    log.warn(msg, fields);
  };
}

export class RelayWorker {
  readonly cfg: RelayConfig;
  readonly metrics: RelayMetrics;
  readonly engine: PopEngine | ClusterEngine;
  readonly addresses: WorkerAddresses = { backbone: "" };
  /** Datagram I/O: batched (native addon) or Node's dgram; see native/index.ts chooseIoMode. */
  readonly io: { mode: IoMode; reason: string };
  #batch: BatchPath | null = null;
  readonly #ioCounters: (totals: Float64Array) => void;
  readonly #log: Logger;
  readonly #warn: ReturnType<typeof rateLimited>;
  readonly #registry: TransceiverRegistry | null;
  /** Pings and sightings of the transceivers; the engines read the registry through it. */
  #liveness: Liveness | null = null;
  #liveClusterId = 0;
  readonly #pings = new Map<number, Uint8Array>();
  readonly #store: FlowStore | null;
  readonly #localHost: string;
  #vip: dgram.Socket | null = null;
  #tcp: TcpListener | null = null;
  /** The POP engine's configuration (the ICE-TCP engine shares its verifier and registry). */
  #popCfg: PopEngineConfig | null = null;
  #backbone: dgram.Socket | null = null;
  /** Connected upstream sockets, indexed by cluster id / transceiver id. */
  readonly #clusterSocks: (dgram.Socket | undefined)[] = [];
  readonly #tSocks: (dgram.Socket | undefined)[] = [];
  readonly #tAddr = new Map<number, string>();
  /** Frame being sent upstream; the POP engine writes its header straight into the first 28 bytes. */
  #scratch: Buffer = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  /** Views of #scratch by total length (at most one per length). */
  #views: (Buffer | undefined)[] = [];
  #scratchHeader: Buffer = this.#scratch.subarray(0, FRAME_HEADER_BYTES);
  readonly #timers: NodeJS.Timeout[] = [];
  #closed = false;
  /**
   * Coarse clock for non-STUN datagrams (flow timers have tick resolution anyway); STUN, which
   * feeds the RTT histograms, reads performance.now() itself. Saves a clock read per media packet.
   */
  #coarseNow = performance.now();

  private constructor(cfg: RelayConfig, log: Logger) {
    this.cfg = cfg;
    this.#log = log;
    this.#warn = rateLimited(log, 10_000);
    this.io = chooseIoMode(process.env.GR_RELAY_IO);
    const topo = cfg.topology;
    const now = performance.now();
    const redis = cfg.redisUrl
      ? connectRedis({
          url: cfg.redisUrl,
          onError: (e) => this.#warn("redis", "redis error", { error: e.message }),
        })
      : null;
    if (cfg.role === "pop") {
      const pop = topo.pops.find((p) => p.id === cfg.id)!;
      this.metrics = new RelayMetrics("pop", pop.id);
      const colocated = pop.clusterId ?? 0;
      this.#registry =
        colocated === 0
          ? null
          : cfg.transceivers
            ? new MemoryRegistry(colocated, new Map(cfg.transceivers))
            : new RedisRegistry(redis!, colocated, this.metrics, false);
      this.#store = redis ? new RedisFlowStore(redis, this.metrics, Date.now, false) : null;
      this.#localHost = (parseHostPort(pop.backbone) as { host: string }).host;
      this.#popCfg = {
        popId: pop.id,
        clusters: topo.clusters.map((c) => c.id),
        clusterSources: new Map(topo.clusters.map((c) => [c.id, new SourceList(c.backboneCidrs)])),
        colocatedClusterId: colocated,
        transceivers: this.#liveView(colocated) ?? EMPTY_LOOKUP,
        hint: new HintVerifier(nodeMac(parseKeyring(cfg.hintKeys, "GR_HINT_KEYS", 15))),
        limits: cfg.limits,
        timers: cfg.timers,
        mirror: this.#store !== null,
        restore: this.#store !== null ? cfg.restore : null,
        rtt: this.metrics,
        now,
      };
      this.engine = new PopEngine(this.#popCfg);
      (this.engine as PopEngine).out.header = this.#scratchHeader;
    } else {
      const cluster = topo.clusters.find((c) => c.id === cfg.id)!;
      this.metrics = new RelayMetrics("cluster", 0);
      this.#registry = cfg.transceivers
        ? new MemoryRegistry(cluster.id, new Map(cfg.transceivers))
        : new RedisRegistry(redis!, cluster.id, this.metrics, false);
      this.#store = null;
      this.#localHost = (parseHostPort(cluster.backbone) as { host: string }).host;
      const popBackbone = new Map<number, { address: string; port: number }>();
      for (const p of topo.pops) {
        const hp = parseHostPort(p.backbone) as { host: string; port: number };
        popBackbone.set(p.id, { address: hp.host, port: hp.port });
      }
      this.engine = new ClusterEngine({
        clusterId: cluster.id,
        popSources: new Map(topo.pops.map((p) => [p.id, new SourceList(p.backboneCidrs)])),
        popBackbone,
        transceivers: this.#liveView(cluster.id)!,
        limits: cfg.limits,
        timers: cfg.timers,
        now,
      });
    }
    this.#redis = redis;
    this.#ioCounters = ioMetrics(this.metrics.registry, this.io.mode);
  }

  readonly #redis: ReturnType<typeof connectRedis> | null;

  static async start(cfg: RelayConfig, log: Logger): Promise<RelayWorker> {
    const w = new RelayWorker(cfg, log);
    try {
      await w.#open();
    } catch (e) {
      await w.close();
      throw e;
    }
    return w;
  }

  async #open(): Promise<void> {
    const cfg = this.cfg;
    const topo = cfg.topology;
    const buf = cfg.socketBufferBytes;
    if (this.io.mode === "batch") {
      this.#batch = new BatchPath(
        {
          engine: this.engine,
          metrics: this.metrics,
          coarseNow: () => this.#coarseNow,
          drainEvents: (e) => this.#drainEvents(e),
          warn: this.#warn,
          tcp: () => this.#tcp,
          heard: (id) => this.#liveness?.heard(id, this.#coarseNow),
        },
        buf,
      );
    }
    if (this.#redis !== null && !(await waitReady(this.#redis, 2_000))) {
      this.#log.warn("redis not reachable at start; running from memory until it is");
    }
    if (this.#registry) {
      try {
        await this.#registry.refresh();
      } catch (e) {
        this.#log.warn("transceiver registry not readable yet", { error: (e as Error).message });
      }
      this.#registry.onChange(() => void this.#reconcileTransceivers());
      await this.#reconcileTransceivers();
      if (this.#registry instanceof RedisRegistry) {
        const reg = this.#registry;
        this.#timers.push(
          setInterval(() => {
            reg
              .refresh()
              .catch((e: Error) => this.#warn("registry", "registry refresh failed", { error: e.message }));
          }, cfg.registryRefreshMs),
        );
      }
    }
    if (this.io.mode === "batch") this.#openBatch();
    else if (cfg.role === "pop") {
      const pop = topo.pops.find((p) => p.id === cfg.id)!;
      const e = this.engine as PopEngine;
      for (const c of topo.clusters) {
        if (c.id === pop.clusterId) continue;
        const sock = await connectUdp(this.#localHost, c.backbone, buf);
        this.#watch(sock, `cluster ${c.id}`);
        const id = c.id;
        sock.on("message", (msg: Buffer) => this.#onUpstream(e, PeerKind.cluster, id, msg));
        this.#clusterSocks[id] = sock;
      }
      this.#vip = await this.#listen(pop.vip, "vip");
      this.#vip.on("message", (msg: Buffer, rinfo: dgram.RemoteInfo) => this.#onClient(e, msg, rinfo));
      this.#backbone = await this.#listen(pop.backbone, "backbone");
      this.#backbone.on("message", (msg: Buffer, rinfo: dgram.RemoteInfo) =>
        this.#onPopBackbone(e, msg, rinfo),
      );
      this.addresses.vip = formatAddress(this.#vip);
      this.addresses.backbone = formatAddress(this.#backbone);
    } else {
      const cluster = topo.clusters.find((c) => c.id === cfg.id)!;
      const e = this.engine as ClusterEngine;
      this.#backbone = await this.#listen(cluster.backbone, "backbone");
      this.#backbone.on("message", (msg: Buffer, rinfo: dgram.RemoteInfo) =>
        this.#onClusterBackbone(e, msg, rinfo),
      );
      this.addresses.backbone = formatAddress(this.#backbone);
    }
    if (cfg.role === "pop") await this.#openTcp();
    this.#timers.push(setInterval(() => this.#tick(), cfg.timers.tickMs));
  }

  /** The POP's ICE-TCP listener (when the topology gives it a port), on either datagram path. */
  async #openTcp(): Promise<void> {
    const pop = this.cfg.topology.pops.find((p) => p.id === this.cfg.id)!;
    const e = this.engine as PopEngine;
    const b = this.#batch;
    this.#tcp = await startTcp(
      this.cfg,
      pop,
      this.#popCfg!,
      this.metrics.registry,
      b !== null
        ? (k, id, h, p) => b.sendWrapped(k, id, h, p)
        : (k, id, h, p) => this.#sendWrapped(e, k, id, h, p),
    );
    if (this.#tcp !== null) this.addresses.vipTcp = this.#tcp.address;
  }

  /** The same sockets as below, on the batched path. */
  #openBatch(): void {
    const cfg = this.cfg;
    const b = this.#batch!;
    const bind = (address: string, what: "vip" | "backbone"): string => {
      const hp = parseHostPort(address) as { host: string; port: number };
      const a = b.listen(this.cfg.bindHost ?? hp.host, hp.port, what).address();
      return a.family === 6 ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
    };
    if (cfg.role === "pop") {
      const pop = cfg.topology.pops.find((p) => p.id === cfg.id)!;
      for (const c of cfg.topology.clusters) {
        if (c.id !== pop.clusterId) b.connect(PeerKind.cluster, c.id, this.#localHost, c.backbone);
      }
      this.addresses.vip = bind(pop.vip, "vip");
      this.addresses.backbone = bind(pop.backbone, "backbone");
    } else {
      const cluster = cfg.topology.clusters.find((c) => c.id === cfg.id)!;
      this.addresses.backbone = bind(cluster.backbone, "backbone");
    }
  }

  /** Binds a topology address's port (on RELAY_BIND_HOST when set), shared by the workers. */
  async #listen(address: string, what: string): Promise<dgram.Socket> {
    const hp = parseHostPort(address) as { host: string; port: number };
    const sock = await bindUdp({
      host: this.cfg.bindHost ?? hp.host,
      port: hp.port,
      reusePort: true,
      bufferBytes: this.cfg.socketBufferBytes,
    });
    this.#watch(sock, what);
    return sock;
  }

  #watch(sock: dgram.Socket, what: string): void {
    sock.on("error", (err: Error) => {
      this.metrics.sendErrors++;
      this.#warn(what, "socket error", { socket: what, error: err.message });
    });
  }

  // ---- data path (POP) ---------------------------------------------------------------------------

  #onClient(e: PopEngine, msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const now = msg[0]! < 4 ? performance.now() : this.#coarseNow;
    const a = e.fromClient(now, rinfo.address, rinfo.port, msg, msg.length);
    if (a === Action.forwardWrapped) this.#sendWrapped(e, e.out.peerKind, e.out.peerId, e.out.header, msg);
    if (e.events.length > 0) this.#drainEvents(e);
  }

  #sendWrapped(e: PopEngine, kind: number, id: number, header: Uint8Array, msg: Uint8Array): void {
    const sock = kind === PeerKind.cluster ? this.#clusterSocks[id] : this.#tSocks[id];
    if (sock === undefined) {
      this.metrics.sendErrors++;
      return;
    }
    // Header and datagram go out as one exact-length view of a scratch buffer: one iovec, and
    // no per-send Buffer objects beyond the view cached for each length.
    const total = FRAME_HEADER_BYTES + msg.length;
    let scratch = this.#scratch;
    if (header !== this.#scratchHeader) scratch.set(header, 0);
    scratch.set(msg, FRAME_HEADER_BYTES);
    let view = this.#views[total];
    if (view === undefined) {
      view = scratch.subarray(0, total);
      if (total <= MAX_CACHED_VIEW) this.#views[total] = view; // bounded: MTU-sized datagrams
    }
    sock.send(view);
    // Queued by libuv (kernel buffer full): that send still references the scratch memory.
    if (sock.getSendQueueCount() !== 0) {
      scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
      this.#scratch = scratch;
      this.#views = [];
      this.#scratchHeader = scratch.subarray(0, FRAME_HEADER_BYTES);
      e.out.header = this.#scratchHeader;
    }
  }

  #onUpstream(e: PopEngine, kind: number, id: number, msg: Buffer): void {
    const now =
      msg.length > FRAME_HEADER_BYTES && msg[FRAME_HEADER_BYTES]! < 4 ? performance.now() : this.#coarseNow;
    if (this.#tcp !== null && msg.length > 2 && (msg[2]! & FRAME_FLAG_TCP) !== 0) {
      this.#tcp.fromUpstream(now, kind, id, msg);
      return;
    }
    if (e.fromUpstream(now, kind, id, msg, msg.length) === Action.toClient) {
      this.#vip!.send(msg, FRAME_HEADER_BYTES, msg.length - FRAME_HEADER_BYTES, e.out.port, e.out.address);
    }
    if (e.events.length > 0) this.#drainEvents(e);
  }

  #onPopBackbone(e: PopEngine, msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.#tcp !== null && msg.length > 2 && (msg[2]! & FRAME_FLAG_TCP) !== 0) {
      this.#tcp.fromBackbone(performance.now(), rinfo.address, rinfo.port, msg);
      return;
    }
    const a = e.fromBackbone(performance.now(), rinfo.address, rinfo.port, msg, msg.length);
    if (a === Action.toClient) {
      this.#vip!.send(msg, FRAME_HEADER_BYTES, msg.length - FRAME_HEADER_BYTES, e.out.port, e.out.address);
    } else if (a === Action.toBackbone) {
      this.#backbone!.send(msg, e.out.port, e.out.address);
    }
    if (e.events.length > 0) this.#drainEvents(e);
  }

  // ---- data path (cluster relay) -----------------------------------------------------------------

  #onClusterBackbone(e: ClusterEngine, msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const a = e.fromBackbone(this.#coarseNow, rinfo.address, rinfo.port, msg, msg.length);
    if (a === Action.forwardFrame) {
      const sock = this.#tSocks[e.out.peerId];
      if (sock !== undefined) sock.send(msg);
      else this.metrics.sendErrors++;
    } else if (a === Action.toBackbone) {
      this.#backbone!.send(msg, e.out.port, e.out.address);
    }
  }

  #onTransceiver(id: number, msg: Buffer): void {
    this.#liveness?.heard(id, this.#coarseNow);
    const e = this.engine;
    if (e instanceof ClusterEngine) {
      const a = e.fromTransceiver(this.#coarseNow, id, msg, msg.length);
      if (a === Action.toBackbone) this.#backbone!.send(msg, e.out.port, e.out.address);
      else if (a === Action.forwardFrame) this.#tSocks[id]?.send(msg);
    } else {
      this.#onUpstream(e, PeerKind.transceiver, id, msg);
    }
  }

  // ---- beside the data path ----------------------------------------------------------------------

  async #reconcileTransceivers(): Promise<void> {
    const reg = this.#registry;
    if (reg === null || this.#closed) return;
    const want = reg.entries();
    const b = this.#batch;
    for (const [id, addr] of this.#tAddr) {
      if (want.get(id) === addr) continue;
      b?.disconnect(PeerKind.transceiver, id);
      const sock = this.#tSocks[id];
      this.#tSocks[id] = undefined;
      this.#tAddr.delete(id);
      this.#liveness?.forget(id);
      if (sock) void closeUdp(sock);
    }
    const pending: Promise<void>[] = [];
    for (const [id, addr] of want) {
      if (this.#tAddr.has(id)) continue;
      this.#tAddr.set(id, addr);
      if (b !== null) {
        try {
          b.connect(PeerKind.transceiver, id, this.#localHost, addr);
        } catch (err) {
          this.#tAddr.delete(id);
          this.#warn(`t${id}`, "cannot open transceiver socket", {
            transceiverId: id,
            error: (err as Error).message,
          });
        }
        continue;
      }
      pending.push(
        connectUdp(this.#localHost, addr, this.cfg.socketBufferBytes).then(
          (sock) => {
            if (this.#closed || this.#tAddr.get(id) !== addr) {
              void closeUdp(sock);
              return;
            }
            this.#watch(sock, `transceiver ${id}`);
            sock.on("error", (err: NodeJS.ErrnoException) => {
              if (err.code === "ECONNREFUSED") this.#liveness?.refused(id);
            });
            sock.on("message", (msg: Buffer) => this.#onTransceiver(id, msg));
            this.#tSocks[id] = sock;
          },
          (err: Error) => {
            this.#tAddr.delete(id);
            this.#warn(`t${id}`, "cannot open transceiver socket", { transceiverId: id, error: err.message });
          },
        ),
      );
    }
    await Promise.all(pending);
  }

  #tick(): void {
    const e = this.engine;
    this.#coarseNow = performance.now();
    e.tick(this.#coarseNow);
    if (this.#liveness) this.#checkTransceivers(this.#liveness);
    this.#tcp?.engine.tick(this.#coarseNow);
    this.#tcp?.tick(this.#coarseNow);
    if (e instanceof PopEngine && e.events.length > 0) this.#drainEvents(e);
  }

  // ---- transceiver liveness (beside the data path) ------------------------------------------------

  #liveView(clusterId: number): TransceiverRegistry | null {
    if (this.#registry === null) return null;
    this.#liveness = new Liveness();
    this.#liveClusterId = clusterId;
    return new LiveRegistry(this.#registry, this.#liveness);
  }

  #checkTransceivers(l: Liveness): void {
    const b = this.#batch;
    if (b !== null) {
      // dgram reports ECONNREFUSED as a socket error event; the addon counts it per socket.
      for (const id of this.#tAddr.keys()) if (b.refusedSince(id)) l.refused(id);
    }
    const changes = l.tick(this.#coarseNow, this.#tAddr.keys(), (id) => {
      const b = this.#batch;
      if (b !== null) {
        b.sendFrame(PeerKind.transceiver, id, this.#ping(id));
        return;
      }
      const sock = this.#tSocks[id];
      if (sock) sock.send(this.#ping(id));
    });
    for (const c of changes) {
      if (c.up) this.#log.info("transceiver up", { transceiverId: c.transceiverId });
      else this.#log.warn("transceiver down", { transceiverId: c.transceiverId, reason: c.reason });
    }
  }

  #ping(id: number): Uint8Array {
    let ping = this.#pings.get(id);
    if (!ping) {
      ping = pingFrame(this.#liveClusterId, id);
      this.#pings.set(id, ping);
    }
    return ping;
  }

  #drainEvents(e: PopEngine): void {
    const store = this.#store;
    const events = e.events.splice(0);
    if (store === null) return;
    for (const ev of events) {
      if (ev.type === "lookup") {
        store.get(ev.address, ev.port).then(
          (rec) => this.#restored(e, ev.id, rec),
          () => this.#restored(e, ev.id, "error"),
        );
      } else if (ev.type === "mirror") {
        store.put(ev.address, ev.port, ev.record, this.cfg.mirrorTtlMs).catch(() => {});
      } else {
        store.delete(ev.address, ev.port).catch(() => {});
      }
    }
  }

  #restored(e: PopEngine, id: number, rec: Parameters<PopEngine["restoreResult"]>[2]): void {
    if (this.#closed) return;
    e.restoreResult(performance.now(), id, rec);
    const b = this.#batch;
    for (const q of e.queued.splice(0)) {
      if (b !== null) b.sendWrapped(q.peerKind, q.peerId, q.header, q.buf.subarray(0, q.len));
      else this.#sendWrapped(e, q.peerKind, q.peerId, q.header, q.buf.subarray(0, q.len));
    }
    if (e.events.length > 0) this.#drainEvents(e);
  }

  // ---- control ------------------------------------------------------------------------------------

  metricsText(): string {
    if (this.#batch !== null) this.#ioCounters(this.#batch.totals());
    this.metrics.sync(this.engine);
    this.#tcp?.syncMetrics();
    return this.metrics.registry.render();
  }

  flows(client?: string): FlowsReply {
    const t = this.engine.table;
    const reply: FlowsReply = { active: t.size, halfOpen: t.halfOpen };
    if (client !== undefined) {
      const hp = parseHostPort(client);
      reply.flow =
        typeof hp === "string"
          ? null
          : (this.engine.lookup(hp.host, hp.port) as Record<string, unknown> | null);
      // An ICE-TCP client (its TCP port): the TCP engine's flow, marked so.
      const tcp = this.#tcp;
      if (reply.flow === null && tcp !== null && typeof hp !== "string") {
        const f = tcp.engine.lookup(hp.host, hp.port);
        if (f !== null) reply.flow = { ...f, transport: "tcp" };
      }
    }
    return reply;
  }

  drain(): void {
    this.engine.drain();
    this.#tcp?.engine.drain();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of this.#timers) clearInterval(t);
    this.#batch?.close();
    await this.#tcp?.close();
    const socks = [this.#vip, this.#backbone, ...this.#clusterSocks, ...this.#tSocks].filter(
      (s): s is dgram.Socket => s !== undefined && s !== null,
    );
    await Promise.all(socks.map(closeUdp));
    await this.#registry?.close();
    await this.#store?.close();
    this.#redis?.disconnect();
  }
}
