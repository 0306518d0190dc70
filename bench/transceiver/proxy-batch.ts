// The bench's client-side plumbing on the batched UDP addon (recvmmsg / sendmmsg): a few back
// sockets carry the sessions, assigned round robin, to the server, and one front socket returns
// the replies to every client's own socket. What a client sends is handed over in-process
// (`take`, queued in the back socket's own memory, sent with flushArena at the end of the turn) or,
// with BENCH_CLIENT_SEND=socket, sent to the front socket (the session is the source port) and
// forwarded from its receive slots. Per datagram: a few typed-array reads, a copy or none, one
// queued row; per batch: one sendmmsg per socket touched. No allocation.
//
// gr (framed): the back sockets play a cluster relay's workers, each connected to the transceiver
// and a source of its own, so the transceiver's SO_REUSEPORT sockets spread them by source as they
// spread real workers; each datagram gets the relay's 28-byte backbone header, and the header of a
// reply names the client. werift: each back socket sends to the sessions' own server sockets (the
// server keeps one socket per session; what it sees of the proxy is one remote address per session,
// shared by the sessions of that back socket), and a reply's session is its server source port.
import {
  BatchSocket,
  DEFAULT_BATCH,
  FLAG_TRUNCATED,
  loadBinding,
  NO_HEADER,
  RX_META,
} from "../../regional/common/native/index.ts";
import { FRAME_HEADER_BYTES, FRAME_MAGIC, FRAME_VERSION, FrameType } from "../../shared/backbone/frame.ts";
import { type ClientSide, isRtp, type Leg } from "./proxy-dgram.ts";

const LOOPBACK = 0x7f00_0001;
/** Kernel buffers: the front takes every client's datagrams, so a stall of this process is absorbed. */
const BUFFER_BYTES = 16 << 20;
const PORTS = 65_536;
/** A row of a back socket's own batch (datagrams handed over in-process): header + datagram. */
const ROW_BYTES = 2_048;

/** Why the batched side cannot be used here, or null. */
export function batchUnavailable(): string | null {
  const b = loadBinding();
  return b instanceof Error ? b.message : null;
}

class BatchSide implements ClientSide {
  readonly description: string;
  readonly #framed: boolean;
  readonly #front: BatchSocket;
  readonly #backs: BatchSocket[] = [];
  /** Shared by every socket: header row i belongs to received datagram i of the front's batch. */
  readonly #headers = Buffer.alloc(DEFAULT_BATCH * FRAME_HEADER_BYTES);
  /** By client port: its back socket + 1 (0: unknown client). */
  readonly #backOf = new Uint8Array(PORTS);
  /** werift: by client port, its server port; by server port, its client port. */
  readonly #serverOf = new Uint16Array(PORTS);
  readonly #clientOf = new Uint16Array(PORTS);
  /** By client port: echoed RTP counted and dropped. */
  readonly #echoes = new Uint32Array(PORTS);
  readonly #dirty: BatchSocket[] = [];
  /** By back socket: the memory its handed-over datagrams are queued in (sent with flushArena). */
  readonly #arenas: Buffer[] = [];
  readonly #frame = Buffer.alloc(FRAME_HEADER_BYTES);
  readonly #scratch = Buffer.allocUnsafeSlow(65_536 + FRAME_HEADER_BYTES);
  #arenaPending = false;
  #unknown = 0;
  #sendLost = 0;
  #opened = 0;

  constructor(
    framed: boolean,
    transceiver: { host: string; port: number } | null,
    sources: number,
    direct: boolean,
  ) {
    this.#framed = framed;
    const open = (): BatchSocket =>
      BatchSocket.open({
        host: "127.0.0.1",
        port: 0,
        reusePort: false,
        bufferBytes: BUFFER_BYTES,
        batch: DEFAULT_BATCH,
        headers: this.#headers,
      });
    for (let i = 0; i < DEFAULT_BATCH; i++) this.#template(this.#headers, i * FRAME_HEADER_BYTES);
    this.#template(this.#frame, 0);
    this.#front = open();
    for (let k = 0; k < sources; k++) {
      const s = open();
      // A relay worker's socket toward the transceiver is connected, as the relay's are.
      if (transceiver) s.connect(transceiver.host, transceiver.port);
      this.#backs.push(s);
      this.#arenas.push(Buffer.allocUnsafeSlow(DEFAULT_BATCH * ROW_BYTES));
      s.start((n) => this.#fromServer(s, n));
    }
    this.#front.start((n) => this.#fromClients(n));
    this.description = `batch: 1 front socket, ${sources} ${framed ? "relay worker" : "back"} sockets (recvmmsg/sendmmsg); clients ${direct ? "hand their datagrams over in-process" : "send through their sockets"}`;
  }

  /** The relay's backbone header, POP 1, cluster 1, transceiver 1; port and IPv4 written per datagram. */
  #template(h: Buffer, at: number): void {
    h.fill(0, at, at + FRAME_HEADER_BYTES);
    h[at] = FRAME_MAGIC;
    h[at + 1] = (FRAME_VERSION << 4) | FrameType.data;
    h[at + 5] = 1;
    h[at + 7] = 1;
    h[at + 9] = 1;
  }

  async open(clientPort: number, serverPort: number): Promise<Leg> {
    const k = this.#opened++ % this.#backs.length;
    this.#backOf[clientPort] = k + 1;
    this.#serverOf[clientPort] = serverPort;
    this.#clientOf[serverPort] = clientPort;
    this.#echoes[clientPort] = 0;
    const echoes = this.#echoes;
    return { front: this.#front.address().port, echoes: () => echoes[clientPort]! };
  }

  /**
   * A client's datagram handed over in-process instead of through its socket and the front
   * (BENCH_CLIENT_SEND=direct): copied, framed in gr, into its back socket's own batch, which
   * leaves at the end of this turn of the event loop, or at once when full. False: no such client.
   */
  readonly take = (clientPort: number, data: Uint8Array): boolean => {
    const k = this.#backOf[clientPort]!;
    if (k === 0) return false;
    const back = this.#backs[k - 1]!;
    const arena = this.#arenas[k - 1]!;
    const skip = this.#framed ? FRAME_HEADER_BYTES : 0;
    const len = skip + data.length;
    if (len > ROW_BYTES) {
      this.#flushBack(k - 1); // keeps the order
      this.#put(this.#scratch, 0, clientPort, data);
      if (!back.sendOne(this.#scratch, 0, len, skip ? 0 : 4, this.#serverOf[clientPort]!, LOOPBACK))
        this.#sendLost++;
      return true;
    }
    if (back.txCount >= back.batch) this.#flushBack(k - 1);
    const at = back.txCount * ROW_BYTES;
    this.#put(arena, at, clientPort, data);
    back.queue(0, at, len, NO_HEADER, skip ? 0 : 4, this.#serverOf[clientPort]!, LOOPBACK);
    if (!this.#arenaPending) {
      this.#arenaPending = true;
      setImmediate(this.#flushArenas);
    }
    return true;
  };

  /** The datagram at `b[at..]`, after the client's backbone header in gr. */
  #put(b: Buffer, at: number, clientPort: number, data: Uint8Array): void {
    if (this.#framed) {
      b.set(this.#frame, at);
      b[at + 10] = clientPort >> 8;
      b[at + 11] = clientPort & 255;
      b[at + 24] = 127;
      b[at + 27] = 1;
      b.set(data, at + FRAME_HEADER_BYTES);
    } else b.set(data, at);
  }

  #flushBack(k: number): void {
    const back = this.#backs[k]!;
    const queued = back.txCount;
    if (queued > 0) this.#sendLost += queued - back.flushArena(this.#arenas[k]!);
  }

  readonly #flushArenas = (): void => {
    this.#arenaPending = false;
    for (let k = 0; k < this.#backs.length; k++) this.#flushBack(k);
  };

  /** Client datagrams: each to its session's back socket, framed for the transceiver in gr. */
  #fromClients(n: number): void {
    // Handed-over datagrams still queued go first: the rows below point into the front's slots.
    if (this.#arenaPending) this.#flushArenas();
    const f = this.#front;
    const m = f.rxMeta;
    const h = this.#headers;
    const framed = this.#framed;
    let dirty = 0;
    for (let i = 0; i < n; i++) {
      const o = i * RX_META;
      if ((m[o + 1]! & FLAG_TRUNCATED) !== 0) continue;
      const port = m[o + 3]!;
      const k = this.#backOf[port]!;
      if (k === 0) {
        this.#unknown++;
        continue;
      }
      const back = this.#backs[k - 1]!;
      if (back.txCount === 0) this.#dirty[dirty++] = back;
      if (framed) {
        const at = i * FRAME_HEADER_BYTES;
        const ip = m[o + 4]!;
        h[at + 10] = port >> 8;
        h[at + 11] = port & 255;
        h[at + 24] = ip >>> 24;
        h[at + 25] = (ip >>> 16) & 255;
        h[at + 26] = (ip >>> 8) & 255;
        h[at + 27] = ip & 255;
        back.queue(i, 0, m[o]!, i, 0, 0, 0);
      } else back.queue(i, 0, m[o]!, NO_HEADER, 4, this.#serverOf[port]!, LOOPBACK);
    }
    for (let j = 0; j < dirty; j++) {
      const back = this.#dirty[j]!;
      const queued = back.txCount;
      this.#sendLost += queued - back.flush(f);
    }
  }

  /** Server datagrams: echoed RTP counted and dropped, the rest to its client (unframed in gr). */
  #fromServer(s: BatchSocket, n: number): void {
    const f = this.#front;
    const m = s.rxMeta;
    const framed = this.#framed;
    const skip = framed ? FRAME_HEADER_BYTES : 0;
    for (let i = 0; i < n; i++) {
      const o = i * RX_META;
      const len = m[o]!;
      if ((m[o + 1]! & FLAG_TRUNCATED) !== 0 || len <= skip) continue;
      const b = s.datagram(i);
      let client: number;
      let ip = LOOPBACK;
      if (framed) {
        if ((b[1]! & 15) !== FrameType.data) continue; // flow-close, path-validated, pings: the relay's
        client = (b[10]! << 8) | b[11]!;
        ip = ((b[24]! << 24) | (b[25]! << 16) | (b[26]! << 8) | b[27]!) >>> 0;
      } else client = this.#clientOf[m[o + 3]!]!;
      if (client === 0 || this.#backOf[client] === 0) {
        this.#unknown++;
        continue;
      }
      if (isRtp(b[skip]!, b[skip + 1] ?? 0)) this.#echoes[client]!++;
      else f.queue(i, skip, len - skip, NO_HEADER, 4, client, ip);
    }
    const queued = f.txCount;
    this.#sendLost += queued - f.flush(s);
  }

  ports(): number[] {
    return [this.#front, ...this.#backs].map((s) => s.address().port);
  }

  counters(): Record<string, number> {
    return { unknownSource: this.#unknown, sendLost: this.#sendLost };
  }

  close(): void {
    for (const s of [this.#front, ...this.#backs]) s.close();
  }
}

/**
 * The batched side. gr: `sources` relay workers connected to `transceiver`, framing; werift
 * (`transceiver` null): `sources` back sockets toward the sessions' server sockets.
 */
export function batchSide(
  transceiver: { host: string; port: number } | null,
  sources: number,
  direct: boolean,
): ClientSide {
  if (!Number.isInteger(sources) || sources < 1 || sources > 255)
    throw new RangeError(`BENCH_RELAY_SOURCES: 1-255, got ${sources}`);
  const side = new BatchSide(transceiver !== null, transceiver, sources, direct);
  return direct ? Object.assign(side, { direct: side.take }) : side;
}
