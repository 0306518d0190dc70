// The POP's ICE-TCP listener (RFC 6544, passive side) on the VIP's address. Each connection is one
// client: RFC 4571 packets are read off the stream and handed to a POP engine of its own
// (transport "tcp": the same hint verifier, drops and half-open rules as UDP, frames marked
// TCP-borne), whose flow is keyed by the connection's remote address. Replies marked TCP-borne come
// back through `fromUpstream`/`fromBackbone` and are written, framed, onto that connection.
//
// Bounds: connections in total and per source address, time to the first routable packet,
// the largest packet, bytes queued toward a client (a slow reader loses its own packets, then its
// connection), and any end of the stream (FIN or reset) ends the flow. Nothing is queued upstream:
// each packet goes out as a UDP frame in the same tick.
import net from "node:net";
import { FRAME_HEADER_BYTES } from "../../../shared/backbone/frame.ts";
import { type ReadResult, Rfc4571Reader, writeLength } from "../../../shared/tcp/rfc4571.ts";
import type { PopEngine } from "../core/pop-engine.ts";
import { Action, FlowState } from "../core/types.ts";
import type { TcpLimits } from "./tcp-limits.ts";
import { type TcpClosed, TcpCounters } from "./tcp-metrics.ts";

export interface TcpListenerOptions {
  host: string;
  port: number;
  /** A POP engine constructed with transport "tcp". */
  engine: PopEngine;
  limits: TcpLimits;
  /** Sends header + packet to the upstream peer (the worker's connected backbone sockets). */
  sendUpstream(kind: number, id: number, header: Uint8Array, packet: Uint8Array): void;
  now(): number;
}

/** Sweep at most this often (ms): deadlines are coarse by design. */
const SWEEP_MS = 250;
const V4_MAPPED = "::ffff:";

class Conn {
  readonly socket: net.Socket;
  readonly address: string;
  readonly port: number;
  readonly reader: Rfc4571Reader;
  readonly openedAt: number;
  /** The engine's flow slot once a packet was routed; -1 before. */
  slot = -1;
  /** When a packet was first dropped for a full queue (0: not stalled). */
  stalledSince = 0;
  reason: TcpClosed | null = null;
  constructor(socket: net.Socket, address: string, port: number, maxPacket: number, now: number) {
    this.socket = socket;
    this.address = address;
    this.port = port;
    this.reader = new Rfc4571Reader(maxPacket);
    this.openedAt = now;
  }
}

export class TcpListener {
  readonly counters = new TcpCounters();
  readonly engine: PopEngine;
  readonly #o: TcpListenerOptions;
  readonly #server: net.Server;
  /** Connections by flow slot (the engine's output names the slot). */
  readonly #bySlot: (Conn | undefined)[] = [];
  readonly #all = new Set<Conn>();
  readonly #perSource = new Map<string, number>();
  #lastSweep = 0;
  #closing = false;
  /** Copies the counters into the registry (set by whoever made the metrics). */
  syncMetrics: () => void = () => {};

  private constructor(o: TcpListenerOptions, server: net.Server) {
    this.#o = o;
    this.engine = o.engine;
    this.#server = server;
  }

  static async start(o: TcpListenerOptions): Promise<TcpListener> {
    const server = net.createServer({ noDelay: true, allowHalfOpen: false });
    const l = new TcpListener(o, server);
    server.on("connection", (s) => l.#accept(s));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: o.host, port: o.port, reusePort: true, backlog: 1024 }, () => {
        server.off("error", reject);
        resolve();
      });
    });
    server.on("error", () => l.counters.close("error"));
    return l;
  }

  get address(): string {
    const a = this.#server.address() as net.AddressInfo;
    return a.family === "IPv6" ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
  }

  get connections(): number {
    return this.#all.size;
  }

  #accept(socket: net.Socket): void {
    const c = this.counters;
    let address = socket.remoteAddress ?? "";
    if (address.startsWith(V4_MAPPED)) address = address.slice(V4_MAPPED.length);
    const port = socket.remotePort ?? 0;
    const l = this.#o.limits;
    const refuse =
      this.#closing || this.engine.draining
        ? "draining"
        : this.#all.size >= l.maxConnections
          ? "total_limit"
          : (this.#perSource.get(address) ?? 0) >= l.maxPerSource
            ? "source_limit"
            : null;
    if (refuse !== null || port === 0) {
      // port 0: the peer was gone before we saw it (nothing to count).
      if (refuse !== null) c.refuse(refuse);
      socket.destroy();
      return;
    }
    c.accepted++;
    c.open++;
    this.#perSource.set(address, (this.#perSource.get(address) ?? 0) + 1);
    const conn = new Conn(socket, address, port, l.maxPacket, this.#o.now());
    this.#all.add(conn);
    this.#conn.set(socket, conn);
    // Handlers shared by every connection (`this` is the socket): no closures per connection.
    socket.on("data", this.#handlers.data);
    socket.on("end", this.#handlers.end);
    socket.on("error", this.#handlers.error);
    socket.on("close", this.#handlers.close);
  }

  /** Connection of a socket (a WeakMap: nothing to clean up, no field added to the socket). */
  readonly #conn = new WeakMap<net.Socket, Conn>();
  readonly #handlers = (() => {
    const l = this;
    return {
      data(this: net.Socket, chunk: Buffer): void {
        l.#onData(l.#conn.get(this)!, chunk);
      },
      // FIN: we do not keep half-closed connections (the flow ends with the stream).
      end(this: net.Socket): void {
        l.#end(l.#conn.get(this)!, "peer_closed");
      },
      error(this: net.Socket): void {
        l.#end(l.#conn.get(this)!, "error");
      },
      close(this: net.Socket): void {
        l.#closed(l.#conn.get(this)!);
      },
    };
  })();

  #onData(conn: Conn, chunk: Buffer): void {
    const r = conn.reader;
    const e = this.engine;
    const now = this.#o.now();
    r.push(chunk);
    for (let x: ReadResult = r.next(); x.kind !== "more"; x = r.next()) {
      if (x.kind === "oversized") {
        this.#end(conn, "oversized_frame");
        return;
      }
      if (x.kind === "empty") {
        if (conn.slot < 0) {
          this.#end(conn, "not_routable");
          return;
        }
        this.counters.drop("empty_frame");
        continue;
      }
      const a = e.fromClient(now, conn.address, conn.port, x.bytes, x.bytes.length);
      if (a === Action.forwardWrapped) {
        const slot = e.out.slot;
        if (slot !== conn.slot) {
          if (conn.slot >= 0 && this.#bySlot[conn.slot] === conn) this.#bySlot[conn.slot] = undefined;
          conn.slot = slot;
          this.#bySlot[slot] = conn;
        }
        this.#o.sendUpstream(e.out.peerKind, e.out.peerId, e.out.header, x.bytes);
      } else if (conn.slot < 0) {
        // The first packet must open a flow (a Binding request with a valid hint): anything else is
        // not ICE-TCP for us (a scanner, garbage, a forged hint), counted by the engine's reason.
        this.#end(conn, "not_routable");
        return;
      }
      if (conn.reason !== null) return;
    }
  }

  /** A frame with the TCP-borne flag from an upstream peer's connected socket. */
  fromUpstream(now: number, kind: number, id: number, msg: Buffer): void {
    if (this.engine.fromUpstream(now, kind, id, msg, msg.length) === Action.toClient) this.#toClient(msg);
  }

  /** A frame with the TCP-borne flag on the POP's backbone listener. */
  fromBackbone(now: number, address: string, port: number, msg: Buffer): void {
    if (this.engine.fromBackbone(now, address, port, msg, msg.length) === Action.toClient)
      this.#toClient(msg);
  }

  /** Writes msg[28..] framed onto the flow's connection, reusing the header's last 2 bytes. */
  #toClient(msg: Buffer): void {
    const out = this.engine.out;
    const conn = this.#bySlot[out.slot];
    if (
      conn === undefined ||
      conn.port !== out.port ||
      conn.address !== out.address ||
      conn.reason !== null
    ) {
      this.counters.drop("no_connection");
      return;
    }
    const len = msg.length - FRAME_HEADER_BYTES;
    const s = conn.socket;
    if (s.writableLength + len + 2 > this.#o.limits.writeBufferBytes) {
      this.counters.drop("backpressure");
      if (conn.stalledSince === 0) conn.stalledSince = this.#o.now();
      return;
    }
    conn.stalledSince = 0;
    writeLength(msg, FRAME_HEADER_BYTES - 2, len);
    s.write(msg.subarray(FRAME_HEADER_BYTES - 2));
  }

  #end(conn: Conn, reason: TcpClosed): void {
    if (conn.reason !== null) return;
    conn.reason = reason;
    this.counters.close(reason);
    conn.socket.destroy();
  }

  #closed(conn: Conn): void {
    if (!this.#all.delete(conn)) return;
    if (conn.reason === null) {
      conn.reason = "error";
      this.counters.close("error");
    }
    this.counters.open--;
    const n = (this.#perSource.get(conn.address) ?? 1) - 1;
    if (n <= 0) this.#perSource.delete(conn.address);
    else this.#perSource.set(conn.address, n);
    if (conn.slot >= 0 && this.#bySlot[conn.slot] === conn) {
      this.#bySlot[conn.slot] = undefined;
      if (this.#owns(conn)) this.engine.endClient(this.#o.now(), conn.address, conn.port);
    }
  }

  /** The engine's flow at conn.slot is still this connection's. */
  #owns(conn: Conn): boolean {
    const t = this.engine.table;
    const s = conn.slot;
    return t.state[s] !== FlowState.free && t.port[s] === conn.port && t.address[s] === conn.address;
  }

  /** Deadlines: first packet, stalled readers, flows the engine ended (timer or flow-close). */
  tick(now: number): void {
    if (now - this.#lastSweep < SWEEP_MS) return;
    this.#lastSweep = now;
    const l = this.#o.limits;
    for (const conn of this.#all) {
      if (conn.reason !== null) continue;
      if (conn.slot < 0) {
        if (now - conn.openedAt >= l.firstPacketMs) this.#end(conn, "first_packet_timeout");
      } else if (!this.#owns(conn)) {
        this.#end(conn, "flow_ended");
      } else if (conn.stalledSince !== 0) {
        if (conn.socket.writableLength < l.writeBufferBytes / 2) conn.stalledSince = 0;
        else if (now - conn.stalledSince >= l.stallMs) this.#end(conn, "stalled");
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    const done = new Promise<void>((r) => this.#server.close(() => r()));
    for (const conn of this.#all) this.#end(conn, "shutdown");
    await done;
  }
}
