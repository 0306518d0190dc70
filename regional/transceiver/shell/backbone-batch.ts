// The transceiver's backbone socket on batched UDP (the native addon the relay uses: recvmmsg /
// sendmmsg, regional/common/native). Same contract as BackboneSocket (backbone.ts): every datagram
// is a backbone frame, pings are answered with pongs, data frames go to the mux, replies go to the
// address a frame came from and leave from the first socket.
//
// Why: on the dgram path each datagram costs a system call and a libuv callback each way, and
// each sent datagram's kernel delivery and wake-up of the receiver is paid per datagram. Here a
// readiness callback drains up to `batch` datagrams per recvmmsg, and everything sent while they
// are handled (and, outside a batch, everything sent in one event-loop turn) leaves in one
// sendmmsg (as UDP GSO trains where runs of one length go to one relay).

import {
  decodeFrameHeader,
  FRAME_HEADER_BYTES,
  FrameType,
  newFrameHeader,
} from "../../../shared/backbone/frame.ts";
import type { HostPort } from "../../../shared/topology/address.ts";
import { BatchSocket, FLAG_TRUNCATED, NO_HEADER, RX_META, Stat, TX_META } from "../../common/native/index.ts";
import type { Mux } from "../core/mux.ts";
import type { TransceiverMetrics } from "../metrics.ts";
import type { Backbone, RelaySender } from "./backbone.ts";
import { type Destination, RelayAddresses } from "./relay-addresses.ts";

/** Outgoing datagrams queued per flush (one sendmmsg). */
const BATCH = 64;
/** Memory the queued datagrams are packed into; a flush empties it. */
const ARENA_BYTES = 256 * 1024;
/** Frames held behind a handshake datagram at most (a few batches' worth); beyond, dropped. */
const MAX_BACKLOG = 4096;

interface Held {
  frame: Buffer;
  host: string;
  port: number;
}

export class BatchBackboneSocket implements Backbone {
  readonly #sockets: BatchSocket[];
  /** Replies leave from the first socket, so the relays see one address. */
  readonly #out: BatchSocket;
  readonly #clusterId: number;
  readonly #transceiverId: number;
  readonly #metrics: TransceiverMetrics;
  readonly #header = newFrameHeader();
  readonly #arena = Buffer.allocUnsafeSlow(ARENA_BYTES);
  #used = 0;
  #inBatch = false;
  #scheduled = false;
  #closed = false;
  #mux: Mux | undefined;
  readonly #addresses: RelayAddresses;
  readonly #backlog: Held[] = [];

  private constructor(
    sockets: BatchSocket[],
    clusterId: number,
    transceiverId: number,
    m: TransceiverMetrics,
  ) {
    this.#sockets = sockets;
    this.#out = sockets[0]!;
    this.#clusterId = clusterId;
    this.#transceiverId = transceiverId;
    this.#metrics = m;
    this.#addresses = new RelayAddresses(() => this.#out.stats[Stat.txErrors]!++);
  }

  /** Binds `count` sockets on one port (SO_REUSEPORT when more than one); throws on bind errors. */
  static open(
    at: HostPort,
    clusterId: number,
    transceiverId: number,
    metrics: TransceiverMetrics,
    bufferBytes: number,
    count: number,
  ): BatchBackboneSocket {
    const reusePort = count > 1;
    const sockets: BatchSocket[] = [];
    try {
      const first = BatchSocket.open({ host: at.host, port: at.port, reusePort, bufferBytes, batch: BATCH });
      sockets.push(first);
      const port = first.address().port;
      for (let i = 1; i < count; i++)
        sockets.push(BatchSocket.open({ host: at.host, port, reusePort, bufferBytes, batch: BATCH }));
    } catch (e) {
      for (const s of sockets) s.close();
      throw e;
    }
    const b = new BatchBackboneSocket(sockets, clusterId, transceiverId, metrics);
    for (const s of sockets) s.start((n) => b.#onBatch(s, n));
    return b;
  }

  attach(mux: Mux): void {
    this.#mux = mux;
  }

  get receiveBufferBytes(): number {
    return this.#out.bufferSizes().receive;
  }

  get address(): { host: string; port: number } {
    const a = this.#out.address();
    return { host: a.address, port: a.port };
  }

  /** The addon's counters summed over the sockets (Stat indices), for the metrics. */
  totals(): Float64Array {
    const t = new Float64Array(this.#out.stats.length);
    for (const s of this.#sockets) for (let i = 0; i < t.length; i++) t[i]! += s.stats[i]!;
    return t;
  }

  readonly send = (header: Buffer, payload: Uint8Array, port: number, host: string): void => {
    const d = this.#addresses.destination(host);
    if (d !== undefined) this.#queue(header, payload, d, port);
  };

  /** A sender bound to one relay address (its destination parsed once). */
  peerFor(host: string, port: number): RelaySender {
    const d = this.#addresses.destination(host);
    return { send: (header, payload) => d !== undefined && this.#queue(header, payload, d, port) };
  }

  #onBatch(s: BatchSocket, n: number): void {
    const meta = s.rxMeta;
    const backlog = this.#backlog;
    this.#inBatch = true;
    for (let i = 0; i < n; i++) {
      const o = i * RX_META;
      const len = meta[o]!;
      if ((meta[o + 1]! & FLAG_TRUNCATED) !== 0) {
        this.#metrics.drops.bad_frame.inc();
        continue;
      }
      const port = meta[o + 3]!;
      const host =
        meta[o + 2] === 4 ? this.#addresses.host4(meta[o + 4]!) : this.#addresses.host6(s.rxMetaBytes, o);
      const msg = s.datagram(i);
      if (backlog.length > 0) this.#hold(msg, len, host, port);
      else if (this.#dispatch(msg, len, host, port, false) && i + 1 < n) {
        // The rest waits for the promise continuations this datagram started (see #dispatch).
        for (let j = i + 1; j < n; j++) {
          const oj = j * RX_META;
          if ((meta[oj + 1]! & FLAG_TRUNCATED) !== 0) this.#metrics.drops.bad_frame.inc();
          else {
            const hj =
              meta[oj + 2] === 4
                ? this.#addresses.host4(meta[oj + 4]!)
                : this.#addresses.host6(s.rxMetaBytes, oj);
            this.#hold(s.datagram(j), meta[oj]!, hj, meta[oj + 3]!);
          }
        }
        break;
      }
    }
    this.#inBatch = false;
    this.#flush();
  }

  /**
   * One frame: ping → pong, data → the mux. Returns true after a STUN or DTLS handshake datagram:
   * werift reacts to those partly in promise continuations (ICE state, and the handshake's end
   * installs the SRTP keys), which on dgram run before the next datagram's callback. Frames after
   * it in the batch are held until they have run.
   */
  #dispatch(msg: Buffer, len: number, host: string, port: number, owned: boolean): boolean {
    const h = this.#header;
    if (decodeFrameHeader(msg, len, h) !== "ok") {
      this.#metrics.drops.bad_frame.inc();
      return false;
    }
    if (h.type === FrameType.ping) {
      // Liveness probes are answered whatever ids they carry: the frame back, typed pong.
      const d = this.#addresses.destination(host);
      const at = d === undefined ? -1 : this.#queue(msg.subarray(0, len), EMPTY, d, port);
      if (at >= 0) this.#arena[at + 1] = (this.#arena[at + 1]! & 0xf0) | FrameType.pong;
      return false;
    }
    if (h.clusterId !== this.#clusterId || h.transceiverId !== this.#transceiverId) {
      this.#metrics.drops.wrong_transceiver.inc();
      return false;
    }
    if (h.type !== FrameType.data) {
      this.#metrics.drops.unexpected_frame.inc();
      return false;
    }
    const mux = this.#mux;
    if (mux === undefined) return false;
    let payload: Buffer;
    if (owned) payload = msg.subarray(FRAME_HEADER_BYTES, len);
    else {
      // The slot is refilled by the next batch, and werift may keep what it is handed: a copy.
      payload = Buffer.allocUnsafe(len - FRAME_HEADER_BYTES);
      msg.copy(payload, 0, FRAME_HEADER_BYTES, len);
    }
    mux.handle(payload, h, host, port);
    // STUN (0-3) and DTLS change cipher spec, alert, handshake (20-22); not RTP, RTCP or
    // application data (the data channel: 23), which do not change what the next datagram needs.
    const b = payload.length > 0 ? payload[0]! : 0;
    return b <= 3 || (b >= 20 && b <= 22);
  }

  #hold(msg: Buffer, len: number, host: string, port: number): void {
    const q = this.#backlog;
    if (q.length >= MAX_BACKLOG) {
      this.#metrics.drops.io_backlog.inc();
      return;
    }
    const frame = Buffer.allocUnsafe(len);
    msg.copy(frame, 0, 0, len);
    q.push({ frame, host, port });
    if (q.length === 1) setImmediate(this.#drainBacklog);
  }

  /** Hands held frames over in order, stopping again after each datagram that needs a turn. */
  readonly #drainBacklog = (): void => {
    const q = this.#backlog;
    let i = 0;
    this.#inBatch = true;
    while (i < q.length && !this.#closed) {
      const f = q[i++]!;
      if (this.#dispatch(f.frame, f.frame.length, f.host, f.port, true)) break;
    }
    q.splice(0, this.#closed ? q.length : i);
    this.#inBatch = false;
    this.#flush();
    if (q.length > 0) setImmediate(this.#drainBacklog);
  };

  /** Packs header + payload into the arena and queues it; returns its arena offset (-1: not sent). */
  #queue(header: Uint8Array, payload: Uint8Array, d: Destination, port: number): number {
    if (this.#closed) return -1;
    const len = header.length + payload.length;
    const out = this.#out;
    if (len > ARENA_BYTES - this.#used || out.txCount >= out.batch) this.#flush();
    if (len > ARENA_BYTES) return -1; // longer than any UDP datagram
    const at = this.#used;
    this.#arena.set(header, at);
    this.#arena.set(payload, at + header.length);
    const row = out.queue(0, at, len, NO_HEADER, d.family, port, d.ip4);
    if (d.ip6 !== undefined) out.txMetaBytes.set(d.ip6, (row * TX_META + 6) * 4);
    this.#used = at + len;
    if (!this.#inBatch && !this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flushSoon);
    }
    return at;
  }

  readonly #flushSoon = (): void => {
    this.#scheduled = false;
    this.#flush();
  };

  #flush(): void {
    if (this.#out.txCount > 0 && !this.#closed) this.#out.flushArena(this.#arena);
    this.#out.txCount = 0;
    this.#used = 0;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    for (const s of this.#sockets) s.close();
  }
}

const EMPTY = new Uint8Array(0);
