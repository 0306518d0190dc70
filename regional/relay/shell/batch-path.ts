// The data path on batched UDP (native/batch_udp.c): every socket hands over up to `batch`
// datagrams per readiness callback; each goes through the same engine call as on dgram, and what
// the engine decides is queued in place on the destination socket's outgoing batch (slot, offset,
// length, header row, address), then every touched socket is flushed with one sendmmsg before the
// callback returns (the slots are reused by the next batch). Header i of the shared arena belongs
// to received datagram i: the POP engine writes its 28-byte header straight into it.
import { performance } from "node:perf_hooks";
import { formatIpv4, formatIpv6 } from "../../../shared/backbone/address.ts";
import { FRAME_FLAG_TCP, FRAME_HEADER_BYTES } from "../../../shared/backbone/frame.ts";
import { parseHostPort } from "../../../shared/topology/address.ts";
import {
  BatchSocket,
  DEFAULT_BATCH,
  FLAG_TRUNCATED,
  NO_HEADER,
  RX_META,
  Stat,
  TX_META,
} from "../../common/native/index.ts";
import { ipv4Of, ipv6Into } from "../core/address.ts";
import { ClusterEngine } from "../core/cluster-engine.ts";
import type { PopEngine } from "../core/pop-engine.ts";
import { Action, PeerKind } from "../core/types.ts";
import type { RelayMetrics } from "./metrics.ts";

/** What the worker lends the data path. */
export interface PathHost {
  readonly engine: PopEngine | ClusterEngine;
  readonly metrics: RelayMetrics;
  /** Coarse clock (updated by the worker's tick). */
  coarseNow(): number;
  drainEvents(e: PopEngine): void;
  warn(key: string, msg: string, fields: Record<string, unknown>): void;
  /** The POP's ICE-TCP engine (frames with the TCP-borne flag go there), when it listens. */
  tcp(): TcpFrames | null;
  /** Something arrived from transceiver `id` (its liveness; once per batch, not per datagram). */
  heard(id: number): void;
}

/** What the batched path hands TCP-borne frames to (tcp.ts); each call owns its `msg`. */
export interface TcpFrames {
  fromUpstream(now: number, kind: number, id: number, msg: Buffer): void;
  fromBackbone(now: number, address: string, port: number, msg: Buffer): void;
}

/** A TCP-borne frame leaves the batch: the connection may queue it past this batch's slots. */
function isTcpBorne(buf: Buffer, len: number): boolean {
  return len > 2 && (buf[2]! & FRAME_FLAG_TCP) !== 0;
}

/** Address texts by IPv4 number, as dgram would report them; cleared when full (bounded). */
const MAX_CACHED_ADDRESSES = 16_384;
const SEND_SCRATCH = 65_536 + FRAME_HEADER_BYTES;
const STAT_COUNT = 11;

export class BatchPath {
  readonly #h: PathHost;
  readonly #bufferBytes: number;
  readonly #headers = Buffer.allocUnsafeSlow(DEFAULT_BATCH * FRAME_HEADER_BYTES);
  readonly #headerViews: Buffer[] = [];
  vip: BatchSocket | null = null;
  backbone: BatchSocket | null = null;
  readonly #clusterSocks: (BatchSocket | undefined)[] = [];
  readonly #tSocks: (BatchSocket | undefined)[] = [];
  /** Sockets with queued datagrams, flushed at the end of the batch. */
  readonly #dirty: BatchSocket[] = [];
  #dirtyCount = 0;
  readonly #plain = new Map<number, string>();
  readonly #mapped = new Map<number, string>();
  readonly #ip6 = new Uint8Array(16);
  readonly #sendScratch = Buffer.allocUnsafeSlow(SEND_SCRATCH);
  /** Stats of sockets already closed (transceivers come and go). */
  readonly #retired = new Float64Array(STAT_COUNT);
  /** Each transceiver socket's refused count at the last `refusedSince` (liveness, per tick). */
  readonly #refusedSeen = new Float64Array(65_536);

  constructor(host: PathHost, bufferBytes: number) {
    this.#h = host;
    this.#bufferBytes = bufferBytes;
    for (let i = 0; i < DEFAULT_BATCH; i++) {
      this.#headerViews.push(this.#headers.subarray(i * FRAME_HEADER_BYTES, (i + 1) * FRAME_HEADER_BYTES));
    }
  }

  #open(host: string, port: number, reusePort: boolean, what: string): BatchSocket {
    const s = BatchSocket.open({
      host,
      port,
      reusePort,
      bufferBytes: this.#bufferBytes,
      headers: this.#headers,
    });
    const got = s.bufferSizes();
    // The kernel grants at most net.core.rmem_max (and reports double): say when it is short.
    if (this.#bufferBytes > 0 && got.receive < this.#bufferBytes) {
      this.#h.warn(`buf-${what}`, "socket receive buffer smaller than asked (raise net.core.rmem_max)", {
        socket: what,
        asked: this.#bufferBytes,
        granted: got.receive,
      });
    }
    return s;
  }

  /** Binds a shared (SO_REUSEPORT) topology address and starts its role's handler. */
  listen(host: string, port: number, what: "vip" | "backbone"): BatchSocket {
    const s = this.#open(host, port, true, what);
    const e = this.#h.engine;
    if (what === "vip") {
      this.vip = s;
      s.start((n) => this.#onClient(e as PopEngine, s, n));
    } else {
      this.backbone = s;
      if (e instanceof ClusterEngine) s.start((n) => this.#onClusterBackbone(e, s, n));
      else s.start((n) => this.#onPopBackbone(e, s, n));
    }
    return s;
  }

  /** A socket on `localHost:0` connected to the upstream peer `remote` ("ip:port"). */
  connect(kind: number, id: number, localHost: string, remote: string): void {
    const hp = parseHostPort(remote);
    if (typeof hp === "string") throw new RangeError(`upstream address: ${hp}`);
    const s = this.#open(
      localHost,
      0,
      false,
      kind === PeerKind.cluster ? `cluster ${id}` : `transceiver ${id}`,
    );
    try {
      s.connect(hp.host, hp.port);
    } catch (err) {
      s.close();
      throw err;
    }
    const e = this.#h.engine;
    if (e instanceof ClusterEngine) s.start((n) => this.#onTransceiver(e, id, s, n));
    else s.start((n) => this.#onUpstream(e, kind, id, s, n));
    const table = kind === PeerKind.cluster ? this.#clusterSocks : this.#tSocks;
    this.disconnect(kind, id);
    table[id] = s;
    if (kind === PeerKind.transceiver) this.#refusedSeen[id] = 0;
  }

  /**
   * Did the socket to transceiver `id` meet ECONNREFUSED (its port closed) since the last call?
   * Read once per tick: the addon counts it, the data path never looks.
   */
  refusedSince(id: number): boolean {
    const t = this.#tSocks[id];
    if (t === undefined || t.closed) return false;
    const n = t.stats[Stat.refused]!;
    const was = this.#refusedSeen[id]!;
    this.#refusedSeen[id] = n;
    return n > was;
  }

  disconnect(kind: number, id: number): void {
    const table = kind === PeerKind.cluster ? this.#clusterSocks : this.#tSocks;
    const s = table[id];
    table[id] = undefined;
    if (s !== undefined) this.#retire(s);
  }

  #retire(s: BatchSocket): void {
    if (s.closed) return;
    for (let i = 0; i < STAT_COUNT; i++) this.#retired[i]! += s.stats[i]!;
    s.close();
  }

  // ---- per batch ---------------------------------------------------------------------------------

  #address(s: BatchSocket, o: number): string {
    const m = s.rxMeta;
    if (m[o + 2] === 4) {
      const ip = m[o + 4]!;
      const cache = s.family === 6 ? this.#mapped : this.#plain;
      let t = cache.get(ip);
      if (t === undefined) {
        if (cache.size >= MAX_CACHED_ADDRESSES) cache.clear();
        t = s.family === 6 ? `::ffff:${formatIpv4(ip)}` : formatIpv4(ip);
        cache.set(ip, t);
      }
      return t;
    }
    const b = s.rxMetaBytes;
    const at = (o + 4) * 4;
    for (let i = 0; i < 16; i++) this.#ip6[i] = b[at + i]!;
    return formatIpv6(this.#ip6); // IPv6 sources: one string per datagram, as dgram does
  }

  #upstream(kind: number, id: number): BatchSocket | undefined {
    return kind === PeerKind.cluster ? this.#clusterSocks[id] : this.#tSocks[id];
  }

  /** Queues on a connected socket. */
  #queue(t: BatchSocket | undefined, slot: number, offset: number, len: number, header: number): void {
    if (t === undefined || t.closed) {
      this.#h.metrics.sendErrors++;
      return;
    }
    if (t.txCount === 0) this.#dirty[this.#dirtyCount++] = t;
    if (t.queue(slot, offset, len, header, 0, 0, 0) < 0) this.#h.metrics.sendErrors++;
  }

  /** Queues to an address the engine chose (out.address / out.port). */
  #queueTo(t: BatchSocket, slot: number, offset: number, len: number, address: string, port: number): void {
    const ip4 = ipv4Of(address);
    if (ip4 < 0 && !ipv6Into(address, this.#ip6)) {
      this.#h.metrics.sendErrors++;
      return;
    }
    if (t.txCount === 0) this.#dirty[this.#dirtyCount++] = t;
    const row = t.queue(slot, offset, len, NO_HEADER, ip4 >= 0 ? 4 : 6, port, Math.max(ip4, 0));
    if (row < 0) this.#h.metrics.sendErrors++;
    else if (ip4 < 0) t.txMetaBytes.set(this.#ip6, (row * TX_META + 6) * 4);
  }

  #flush(src: BatchSocket): void {
    const d = this.#dirty;
    for (let i = 0; i < this.#dirtyCount; i++) {
      const t = d[i]!;
      const queued = t.txCount;
      const sent = t.flush(src);
      if (sent < queued) this.#h.metrics.sendErrors += queued - sent;
    }
    this.#dirtyCount = 0;
  }

  #onClient(e: PopEngine, s: BatchSocket, n: number): void {
    const m = s.rxMeta;
    const coarse = this.#h.coarseNow();
    for (let i = 0; i < n; i++) {
      const o = i * RX_META;
      if ((m[o + 1]! & FLAG_TRUNCATED) !== 0) continue; // counted by the addon
      const buf = s.datagram(i);
      const len = m[o]!;
      e.out.header = this.#headerViews[i]!;
      const a = e.fromClient(
        buf[0]! < 4 ? performance.now() : coarse,
        this.#address(s, o),
        m[o + 3]!,
        buf,
        len,
        m[o + 2] === 4 ? m[o + 4]! : -1,
      );
      if (a === Action.forwardWrapped)
        this.#queue(this.#upstream(e.out.peerKind, e.out.peerId), i, 0, len, i);
      else if (a === Action.held) s.replaceSlot(i); // the engine keeps this slot's view
      if (e.events.length > 0) this.#h.drainEvents(e);
    }
    this.#flush(s);
  }

  #onUpstream(e: PopEngine, kind: number, id: number, s: BatchSocket, n: number): void {
    if (kind === PeerKind.transceiver) this.#h.heard(id);
    const m = s.rxMeta;
    const coarse = this.#h.coarseNow();
    const vip = this.vip;
    if (vip === null) {
      this.#notYet(n); // answers before the VIP is bound (start-up)
      return;
    }
    for (let i = 0; i < n; i++) {
      const o = i * RX_META;
      if ((m[o + 1]! & FLAG_TRUNCATED) !== 0) continue;
      const buf = s.datagram(i);
      const len = m[o]!;
      const now = len > FRAME_HEADER_BYTES && buf[FRAME_HEADER_BYTES]! < 4 ? performance.now() : coarse;
      const tcp = isTcpBorne(buf, len) ? this.#h.tcp() : null;
      if (tcp !== null) {
        tcp.fromUpstream(now, kind, id, Buffer.copyBytesFrom(buf, 0, len));
        continue;
      }
      if (e.fromUpstream(now, kind, id, buf, len) === Action.toClient) {
        this.#queueTo(vip, i, FRAME_HEADER_BYTES, len - FRAME_HEADER_BYTES, e.out.address, e.out.port);
      }
      if (e.events.length > 0) this.#h.drainEvents(e);
    }
    this.#flush(s);
  }

  #onPopBackbone(e: PopEngine, s: BatchSocket, n: number): void {
    const m = s.rxMeta;
    const vip = this.vip;
    if (vip === null) {
      this.#notYet(n);
      return;
    }
    for (let i = 0; i < n; i++) {
      const o = i * RX_META;
      if ((m[o + 1]! & FLAG_TRUNCATED) !== 0) continue;
      const buf = s.datagram(i);
      const len = m[o]!;
      const tcp = isTcpBorne(buf, len) ? this.#h.tcp() : null;
      if (tcp !== null) {
        tcp.fromBackbone(
          performance.now(),
          this.#address(s, o),
          m[o + 3]!,
          Buffer.copyBytesFrom(buf, 0, len),
        );
        continue;
      }
      const a = e.fromBackbone(performance.now(), this.#address(s, o), m[o + 3]!, buf, len);
      if (a === Action.toClient) {
        this.#queueTo(vip, i, FRAME_HEADER_BYTES, len - FRAME_HEADER_BYTES, e.out.address, e.out.port);
      } else if (a === Action.toBackbone) this.#queueTo(s, i, 0, len, e.out.address, e.out.port);
      if (e.events.length > 0) this.#h.drainEvents(e);
    }
    this.#flush(s);
  }

  #onClusterBackbone(e: ClusterEngine, s: BatchSocket, n: number): void {
    const m = s.rxMeta;
    const coarse = this.#h.coarseNow();
    for (let i = 0; i < n; i++) {
      const o = i * RX_META;
      if ((m[o + 1]! & FLAG_TRUNCATED) !== 0) continue;
      const buf = s.datagram(i);
      const len = m[o]!;
      const a = e.fromBackbone(coarse, this.#address(s, o), m[o + 3]!, buf, len);
      if (a === Action.forwardFrame) this.#queue(this.#tSocks[e.out.peerId], i, 0, len, NO_HEADER);
      else if (a === Action.toBackbone) this.#queueTo(s, i, 0, len, e.out.address, e.out.port);
    }
    this.#flush(s);
  }

  #onTransceiver(e: ClusterEngine, id: number, s: BatchSocket, n: number): void {
    this.#h.heard(id);
    const m = s.rxMeta;
    const coarse = this.#h.coarseNow();
    const backbone = this.backbone;
    if (backbone === null) {
      this.#notYet(n);
      return;
    }
    for (let i = 0; i < n; i++) {
      const o = i * RX_META;
      if ((m[o + 1]! & FLAG_TRUNCATED) !== 0) continue;
      const len = m[o]!;
      const a = e.fromTransceiver(coarse, id, s.datagram(i), len);
      if (a === Action.toBackbone) this.#queueTo(backbone, i, 0, len, e.out.address, e.out.port);
      else if (a === Action.forwardFrame) this.#queue(this.#tSocks[id], i, 0, len, NO_HEADER);
    }
    this.#flush(s);
  }

  #notYet(n: number): void {
    this.#h.metrics.sendErrors += n;
  }

  // ---- beside the batches ------------------------------------------------------------------------

  /** A whole frame of the relay's own (a liveness ping) to an upstream peer, outside a batch. */
  sendFrame(kind: number, id: number, frame: Uint8Array): void {
    const t = this.#upstream(kind, id);
    if (t === undefined || t.closed || !t.sendOne(frame, 0, frame.length, 0, 0, 0))
      this.#h.metrics.sendErrors++;
  }

  /** Header + datagram to an upstream peer, outside a batch (held datagrams of restored flows). */
  sendWrapped(kind: number, id: number, header: Uint8Array, msg: Uint8Array): void {
    const t = this.#upstream(kind, id);
    const total = FRAME_HEADER_BYTES + msg.length;
    if (t === undefined || t.closed || total > SEND_SCRATCH) {
      this.#h.metrics.sendErrors++;
      return;
    }
    const b = this.#sendScratch; // the kernel copies during the call: reusable at once
    b.set(header, 0);
    b.set(msg, FRAME_HEADER_BYTES);
    if (!t.sendOne(b, 0, total, 0, 0, 0)) this.#h.metrics.sendErrors++;
  }

  /** Addon counters summed over live and closed sockets, by Stat index. */
  totals(): Float64Array {
    const sum = Float64Array.from(this.#retired);
    const live = [this.vip, this.backbone, ...this.#clusterSocks, ...this.#tSocks];
    for (const s of live) {
      if (s === null || s === undefined || s.closed) continue;
      for (let i = 0; i < STAT_COUNT; i++) sum[i]! += s.stats[i]!;
    }
    sum[Stat.lastErrno] = 0;
    return sum;
  }

  close(): void {
    for (const s of [this.vip, this.backbone, ...this.#clusterSocks, ...this.#tSocks]) {
      if (s !== null && s !== undefined) this.#retire(s);
    }
  }
}
