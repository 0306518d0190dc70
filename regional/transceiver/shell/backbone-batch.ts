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
import {
  BatchSocket,
  FLAG_SEGMENTS,
  FLAG_TRUNCATED,
  NO_HEADER,
  RX_META,
  Stat,
  segmentSize,
  TX_META,
} from "../../common/native/index.ts";
import type { Mux } from "../core/mux.ts";
import type { TransceiverMetrics } from "../metrics.ts";
import type { Backbone, RelaySender } from "./backbone.ts";
import { type Destination, RelayAddresses } from "./relay-addresses.ts";

/** Outgoing datagrams queued per flush (one sendmmsg). */
const BATCH = 64;
/** Memory the queued datagrams are packed into; a flush empties it. */
const ARENA_BYTES = 256 * 1024;

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
    gro = true,
  ): BatchBackboneSocket {
    const reusePort = count > 1;
    const sockets: BatchSocket[] = [];
    // UDP GRO: a relay's run of frames to us (sent as one GSO train, or joined by the NIC) is one
    // queue entry and one slot instead of one each, so a burst fills the receive buffer far less.
    // A joined run lands in a slot's long-datagram overflow (maxDatagram's default holds 64 KiB).
    const o = { reusePort, bufferBytes, batch: BATCH, gro };
    try {
      const first = BatchSocket.open({ host: at.host, port: at.port, ...o });
      sockets.push(first);
      const port = first.address().port;
      for (let i = 1; i < count; i++) sockets.push(BatchSocket.open({ host: at.host, port, ...o }));
    } catch (e) {
      for (const s of sockets) s.close();
      throw e;
    }
    const b = new BatchBackboneSocket(sockets, clusterId, transceiverId, metrics);
    // Up to eight batches per readiness callback, as the relay: one per callback halved the
    // event-loop delay p99 at 150 calls without load, but capped a socket at 64 datagrams per loop
    // turn, and under load one socket fell behind (18 % of the echoes late, docs/performance.md).
    for (const s of sockets) s.startResumable((n, from) => b.#onBatch(s, n, from));
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

  /**
   * Datagrams from..n-1 of a batch, up to and including the first STUN or DTLS handshake one:
   * werift reacts to those partly in promise continuations (ICE state, and the handshake's end
   * installs the SRTP keys), which on dgram run before the next datagram's callback. Returning
   * the index after it has the addon call again for the rest once they have run (the end of a
   * native callback runs them), so what follows it sees their effect.
   */
  #onBatch(s: BatchSocket, n: number, from: number): number | undefined {
    const meta = s.rxMeta;
    let i = from;
    this.#inBatch = true;
    while (i < n && !this.#closed) {
      const o = i * RX_META;
      const msg = s.datagram(i++);
      if ((meta[o + 1]! & FLAG_TRUNCATED) !== 0) {
        this.#metrics.drops.bad_frame.inc();
        continue;
      }
      const host =
        meta[o + 2] === 4 ? this.#addresses.host4(meta[o + 4]!) : this.#addresses.host6(s.rxMetaBytes, o);
      const flags = meta[o + 1]!;
      if ((flags & FLAG_SEGMENTS) === 0) {
        if (this.#dispatch(msg, meta[o]!, host, meta[o + 3]!)) break;
        continue;
      }
      // Joined by GRO: one frame per segment, in order. A STUN or DTLS handshake frame inside
      // stops the batch after this datagram (its segments are one peer's run of one length:
      // a handshake frame and media of the same length in one run is the rare case it delays).
      const seg = segmentSize(flags);
      const len = meta[o]!;
      let handshake = false;
      for (let at = 0; at < len && !this.#closed; at += seg) {
        const end = Math.min(len, at + seg);
        if (this.#dispatch(msg.subarray(at, end), end - at, host, meta[o + 3]!)) handshake = true;
      }
      if (handshake) break;
    }
    this.#inBatch = false;
    this.#flush();
    return i < n && !this.#closed ? i : undefined;
  }

  /** One frame: ping → pong, data → the mux. True after a STUN or DTLS handshake datagram. */
  #dispatch(msg: Buffer, len: number, host: string, port: number): boolean {
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
    // The slot is refilled by the next batch, and werift may keep what it is handed: a copy.
    const payload = Buffer.allocUnsafe(len - FRAME_HEADER_BYTES);
    msg.copy(payload, 0, FRAME_HEADER_BYTES, len);
    mux.handle(payload, h, host, port);
    // STUN (0-3) and DTLS change cipher spec, alert, handshake (20-22); not RTP, RTCP or
    // application data (the data channel: 23), which do not change what the next datagram needs.
    const b = payload.length > 0 ? payload[0]! : 0;
    return b <= 3 || (b >= 20 && b <= 22);
  }

  /** Packs header + payload into the arena and queues it; returns its arena offset (-1: not sent). */
  #queue(header: Uint8Array, payload: Uint8Array, d: Destination, port: number): number {
    if (this.#closed) return -1;
    const len = header.length + payload.length;
    const out = this.#out;
    if (len > ARENA_BYTES - this.#used || out.txCount >= out.batch) this.#flush();
    if (len > ARENA_BYTES) {
      out.stats[Stat.txErrors]!++; // longer than any UDP datagram: counted as the kernel's EMSGSIZE would be
      return -1;
    }
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
