// The transceiver's one UDP socket (the socket shell around Mux). Every datagram is a backbone
// frame; pings are answered with pongs (payload echoed) to the source; data frames go to the mux;
// anything else is dropped and counted. Replies always go to the address a frame came from.
//
// Optionally (TRANSCEIVER_SOCKETS > 1) the one port is bound by several sockets of this process
// with SO_REUSEPORT: the kernel spreads frames over them by source address (relay workers), which
// multiplies the receive buffering that absorbs a stall. Replies leave from the first socket,
// so the relays still see one address.
import { createSocket, type Socket } from "node:dgram";
import {
  decodeFrameHeader,
  FRAME_HEADER_BYTES,
  FrameType,
  newFrameHeader,
} from "../../../shared/backbone/frame.ts";
import type { HostPort } from "../../../shared/topology/address.ts";
import { unsharedUdpPort } from "../../common/reuse-port.ts";
import type { Mux } from "../core/mux.ts";
import type { TransceiverMetrics } from "../metrics.ts";

/** Default: 4 MB, net.core.rmem_max on a stock host (docs/toolchain.md, "Kernel and UDP"). */
export const DEFAULT_SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;

/** Peers with a connected socket of their own; beyond this, sends go unconnected. */
const MAX_CONNECTED_PEERS = 256;

/** How datagrams reach one relay address. */
export interface RelaySender {
  send(header: Buffer, payload: Uint8Array): void;
}

/** The backbone socket as the transceiver uses it, on dgram (this file) or batched (backbone-batch.ts). */
export interface Backbone {
  readonly send: (header: Buffer, payload: Uint8Array, port: number, host: string) => void;
  peerFor(host: string, port: number): RelaySender;
  attach(mux: Mux): void;
  readonly receiveBufferBytes: number;
  readonly address: { host: string; port: number };
  close(): Promise<void>;
}

/**
 * One relay source (a relay worker's address). Sends go through a socket connected to it and
 * bound to the backbone port (SO_REUSEPORT) once that exists: a connected send skips the
 * per-datagram address resolution of `dgram.send(msg, port, host)`, and datagrams from that
 * relay then land in that socket's own receive buffer. Until then, the shared socket sends.
 */
export class RelayPeer implements RelaySender {
  readonly host: string;
  readonly port: number;
  readonly #shared: Socket;
  socket: Socket | undefined;
  constructor(host: string, port: number, shared: Socket) {
    this.host = host;
    this.port = port;
    this.#shared = shared;
  }
  send(header: Buffer, payload: Uint8Array): void {
    const s = this.socket;
    if (s !== undefined) s.send([header, payload]);
    else this.#shared.send([header, payload], this.port, this.host);
  }
}

export class BackboneSocket implements Backbone {
  readonly socket: Socket;
  readonly sockets: Socket[];
  readonly #clusterId: number;
  readonly #transceiverId: number;
  readonly #metrics: TransceiverMetrics;
  #mux: Mux | undefined;
  readonly #header = newFrameHeader();
  #closed = false;
  readonly #peers = new Map<string, RelayPeer>();
  #connectPeers = false;
  #at: HostPort | undefined;
  #bufferBytes = DEFAULT_SOCKET_BUFFER_BYTES;

  private constructor(
    sockets: Socket[],
    clusterId: number,
    transceiverId: number,
    metrics: TransceiverMetrics,
  ) {
    this.sockets = sockets;
    this.socket = sockets[0]!;
    this.#clusterId = clusterId;
    this.#transceiverId = transceiverId;
    this.#metrics = metrics;
  }

  /**
   * Binds the socket. Every session shares its receive buffer, so it is what absorbs an
   * event-loop stall: ask for a large one (the kernel grants at most net.core.rmem_max, doubled).
   */
  static async open(
    at: HostPort,
    clusterId: number,
    transceiverId: number,
    metrics: TransceiverMetrics,
    bufferBytes = DEFAULT_SOCKET_BUFFER_BYTES,
    count = 1,
    connectPeers = false,
  ): Promise<BackboneSocket> {
    const reusePort = count > 1 || connectPeers;
    const bind = async (port: number): Promise<Socket> => {
      const socket = createSocket({
        type: at.ipv6 ? "udp6" : "udp4",
        recvBufferSize: bufferBytes,
        sendBufferSize: bufferBytes,
        ...(reusePort ? { reusePort: true } : {}),
      });
      await new Promise<void>((resolve, reject) => {
        socket.once("error", reject);
        socket.bind(port, at.host, () => {
          socket.off("error", reject);
          resolve();
        });
      });
      return socket;
    };
    const first = await bind(reusePort && at.port === 0 ? await unsharedUdpPort(at.host) : at.port);
    const sockets = [first];
    for (let i = 1; i < count; i++) sockets.push(await bind(first.address().port));
    const b = new BackboneSocket(sockets, clusterId, transceiverId, metrics);
    b.#connectPeers = connectPeers;
    b.#at = { ...at, port: first.address().port };
    b.#bufferBytes = bufferBytes;
    for (const socket of sockets) b.#listen(socket);
    return b;
  }

  #listen(socket: Socket): void {
    socket.on("message", (msg, rinfo) => this.#onMessage(msg, rinfo.address, rinfo.port));
    socket.on("error", () => this.#metrics.drops.bad_frame.inc());
  }

  /** The peer object for a relay source (stable per address; connects in the background). */
  peerFor(host: string, port: number): RelayPeer {
    const key = `${host}|${port}`;
    let p = this.#peers.get(key);
    if (p !== undefined) return p;
    p = new RelayPeer(host, port, this.socket);
    if (this.#peers.size < MAX_CONNECTED_PEERS) this.#peers.set(key, p);
    if (this.#connectPeers && !this.#closed && this.#peers.get(key) === p) void this.#connect(p);
    return p;
  }

  async #connect(p: RelayPeer): Promise<void> {
    const at = this.#at!;
    const socket = createSocket({
      type: at.ipv6 ? "udp6" : "udp4",
      recvBufferSize: this.#bufferBytes,
      sendBufferSize: this.#bufferBytes,
      reusePort: true,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once("error", reject);
        socket.bind(at.port, at.host, () => {
          socket.connect(p.port, p.host, () => {
            socket.off("error", reject);
            resolve();
          });
        });
      });
    } catch {
      socket.close();
      return;
    }
    if (this.#closed) {
      socket.close();
      return;
    }
    this.#listen(socket);
    this.sockets.push(socket);
    p.socket = socket;
  }

  /** Routes data frames to the mux from now on. */
  attach(mux: Mux): void {
    this.#mux = mux;
  }

  /** Receive buffer the kernel granted (Linux reports twice the requested size, capped by rmem_max). */
  get receiveBufferBytes(): number {
    return this.socket.getRecvBufferSize();
  }

  get address(): { host: string; port: number } {
    const a = this.socket.address();
    return { host: a.address, port: a.port };
  }

  /** The send function the mux uses: header and payload leave as one datagram (scatter/gather). */
  readonly send = (header: Buffer, payload: Uint8Array, port: number, host: string): void => {
    if (this.#closed) return;
    this.socket.send([header, payload], port, host);
  };

  #onMessage(msg: Buffer, host: string, port: number): void {
    const h = this.#header;
    const status = decodeFrameHeader(msg, msg.length, h);
    if (status !== "ok") {
      this.#metrics.drops.bad_frame.inc();
      return;
    }
    // Liveness probes are answered whatever ids they carry.
    if (h.type === FrameType.ping) {
      const header = Buffer.from(msg.subarray(0, FRAME_HEADER_BYTES));
      header[1] = (header[1]! & 0xf0) | FrameType.pong;
      this.send(header, msg.subarray(FRAME_HEADER_BYTES), port, host);
      return;
    }
    if (h.clusterId !== this.#clusterId || h.transceiverId !== this.#transceiverId) {
      this.#metrics.drops.wrong_transceiver.inc();
      return;
    }
    if (h.type === FrameType.data) {
      const mux = this.#mux;
      if (mux === undefined) return;
      mux.handle(msg.subarray(FRAME_HEADER_BYTES), h, host, port);
      return;
    }
    this.#metrics.drops.unexpected_frame.inc();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(this.sockets.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
}
