// Loader and typed face of the batched UDP addon (batch_udp.c), used by the relay and the
// transceiver. A BatchSocket owns its receive slots, per-datagram metadata and outgoing batch as
// typed arrays allocated once and shared with C: C fills `rxMeta` and the slots, JS reads them,
// queues outgoing datagrams as (slot, offset, length, header, destination) rows in `txMeta`, and
// `flush` (from receive slots) or `flushArena` (from the caller's memory) sends them with one
// sendmmsg. No allocation per datagram on either side.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Words per received datagram in rxMeta: length, flags, family (4|6), port, address (4 words). */
export const RX_META = 8;
/** Words per outgoing datagram in txMeta: slot, offset, length, header, family (0|4|6), port, address. */
export const TX_META = 10;
export const NO_HEADER = 0xffffffff;
export const FLAG_TRUNCATED = 1;
/** The datagram is longer than a slot: read it from bigSlots[i]. */
export const FLAG_BIG = 2;
/**
 * UDP GRO joined several datagrams of one peer into this one: each but the last is
 * `segmentSize(flags)` bytes long (the flags word's upper 16 bits).
 */
export const FLAG_SEGMENTS = 4;
export const segmentSize = (flags: number): number => flags >>> 16;
/** Indices of `stats` (batch_udp.c keeps them). */
export const Stat = {
  rx: 0,
  rxBatches: 1,
  rxTruncated: 2,
  rxErrors: 3,
  tx: 4,
  txBlocked: 5,
  txErrors: 6,
  txCalls: 7,
  lastErrno: 8,
  /** Sends that carried several datagrams as one UDP GSO train. */
  txGsoTrains: 9,
  /** ECONNREFUSED on any call: the connected peer's port is closed (a transceiver went away). */
  refused: 10,
  /** Datagrams received joined by UDP GRO (each holding several). */
  rxGro: 11,
} as const;
const STATS = 12;

/** Datagrams per recvmmsg / sendmmsg call. */
export const DEFAULT_BATCH = 64;
/** Receive slot: an MTU-sized client datagram plus the 28-byte backbone header, with room. */
export const DEFAULT_SLOT_BYTES = 2_048;
/**
 * Longest datagram received whole. A longer one continues in the slot's big slot (memory the kernel
 * commits only when a long datagram lands there); beyond this it is dropped as truncated.
 */
export const DEFAULT_MAX_DATAGRAM = 65_536;

/** The addon's socket: an opaque External (batch_udp.c). */
type Handle = object;
interface Binding {
  create(
    family: number,
    host: string,
    port: number,
    reusePort: boolean,
    bufferBytes: number,
    rx: Buffer,
    big: Buffer,
    rxMeta: Uint32Array,
    headers: Buffer,
    txMeta: Uint32Array,
    stats: Float64Array,
    gso: boolean,
    gro?: boolean,
  ): Handle;
  /** Absent in builds before UDP GRO. */
  gro?(h: Handle): boolean;
  /** onBatch's return is read only when resumable: where to go on in the batch (see startResumable). */
  start(
    h: Handle,
    onBatch: (count: number, from: number) => unknown,
    resumable?: boolean,
    rounds?: number,
  ): void;
  /** Set by builds whose `start` takes `resumable` (older ones throw on a third argument). */
  readonly resumableBatches?: boolean;
  connect(h: Handle, host: string, port: number): void;
  flush(tx: Handle, rx: Handle, count: number): number;
  flushArena(tx: Handle, arena: Buffer, count: number): number;
  sendOne(
    h: Handle,
    buf: Uint8Array,
    offset: number,
    len: number,
    family: number,
    port: number,
    addr: Uint32Array,
  ): number;
  replaceSlot(h: Handle, index: number, buf: Buffer, big: boolean): void;
  localAddress(h: Handle): [number, string, number];
  bufferSizes(h: Handle): [number, number];
  close(h: Handle): void;
  fd(h: Handle): number;
}

const HERE = dirname(fileURLToPath(import.meta.url));
export const ADDON_PATH = join(HERE, "build/Release/batch_udp.node");

let cached: Binding | Error | undefined;

/** The addon, or why it is not available (not built, wrong platform). */
export function loadBinding(): Binding | Error {
  if (cached !== undefined) return cached;
  if (process.platform !== "linux") cached = new Error("batched UDP needs Linux");
  else if (!existsSync(ADDON_PATH)) cached = new Error("addon not built (npm run build:native)");
  else {
    try {
      cached = createRequire(import.meta.url)(ADDON_PATH) as Binding;
    } catch (e) {
      cached = new Error(`addon does not load: ${(e as Error).message}`);
    }
  }
  return cached;
}

/** Why an addon built before `start(..., resumable)` cannot serve a resumable handler. */
export const RESUMABLE_MISSING = "addon predates resumable batches (rebuild it: npm run build:native)";

export type IoMode = "batch" | "dgram";

/**
 * GR_RELAY_IO (or `variable`, e.g. TRANSCEIVER_IO): "batch" (the addon, an error if it is
 * missing), "dgram" (Node's dgram), or unset / "auto" (batch when the addon loads, else dgram
 * with the reason).
 */
export function chooseIoMode(
  value: string | undefined,
  binding: Binding | Error = loadBinding(),
  variable = "GR_RELAY_IO",
): { mode: IoMode; reason: string } {
  const v = value ?? "auto";
  if (v === "dgram") return { mode: "dgram", reason: `${variable}=dgram` };
  if (v !== "batch" && v !== "auto")
    throw new RangeError(`${variable}: must be "batch", "dgram" or "auto", got ${JSON.stringify(v)}`);
  const b = binding;
  if (!(b instanceof Error))
    return { mode: "batch", reason: v === "batch" ? `${variable}=batch` : "addon loaded" };
  if (v === "batch") throw new Error(`${variable}=batch: ${b.message}`);
  return { mode: "dgram", reason: b.message };
}

export interface BatchSocketOptions {
  host: string;
  port: number;
  reusePort: boolean;
  bufferBytes: number;
  batch?: number;
  slotBytes?: number;
  /** Longest datagram received whole (slotBytes disables long datagrams). */
  maxDatagram?: number;
  /**
   * Send runs of same-length datagrams to one peer as UDP GSO trains (default: unless
   * GR_RELAY_GSO=off); a kernel or route that refuses it turns it off for the socket.
   */
  gso?: boolean;
  /** Header arena (batch x header bytes), shared by the sockets of one worker; own one if absent. */
  headers?: Buffer;
  /**
   * Read UDP GRO joined datagrams (FLAG_SEGMENTS): the kernel queues a peer's run of datagrams as
   * one, so a burst costs one queue entry and one slot. Needs maxDatagram >= 65,535 (the default); a
   * kernel without UDP_GRO leaves it off (`gro` says).
   */
  gro?: boolean;
}

export class BatchSocket {
  readonly family: 4 | 6;
  readonly batch: number;
  readonly slotBytes: number;
  readonly maxDatagram: number;
  /** Receive slots: slots[i] holds datagram i of the current batch (length rxMeta[i * RX_META]). */
  readonly slots: Buffer[] = [];
  /** Where datagram i is when its flags have FLAG_BIG. */
  readonly bigSlots: Buffer[] = [];
  readonly rxMeta: Uint32Array;
  /** rxMeta as bytes: an IPv6 source address is at byte (i * RX_META + 4) * 4, network order. */
  readonly rxMetaBytes: Uint8Array;
  readonly headers: Buffer;
  readonly txMeta: Uint32Array;
  readonly txMetaBytes: Uint8Array;
  /** Datagrams queued in txMeta since the last flush. */
  txCount = 0;
  readonly stats = new Float64Array(STATS);
  readonly #b: Binding;
  readonly #h: Handle;
  readonly #addr = new Uint32Array(4);
  #closed = false;

  private constructor(b: Binding, o: BatchSocketOptions) {
    this.#b = b;
    this.family = o.host.includes(":") ? 6 : 4;
    this.batch = o.batch ?? DEFAULT_BATCH;
    this.slotBytes = o.slotBytes ?? DEFAULT_SLOT_BYTES;
    const rx = Buffer.allocUnsafeSlow(this.batch * this.slotBytes);
    this.maxDatagram = Math.max(o.maxDatagram ?? DEFAULT_MAX_DATAGRAM, this.slotBytes);
    const bigBytes = this.maxDatagram > this.slotBytes ? this.maxDatagram : 0;
    const big = Buffer.allocUnsafeSlow(this.batch * bigBytes);
    for (let i = 0; i < this.batch; i++) {
      this.slots.push(rx.subarray(i * this.slotBytes, (i + 1) * this.slotBytes));
      this.bigSlots.push(big.subarray(i * bigBytes, (i + 1) * bigBytes));
    }
    this.rxMeta = new Uint32Array(this.batch * RX_META);
    this.rxMetaBytes = new Uint8Array(this.rxMeta.buffer);
    this.headers = o.headers ?? Buffer.allocUnsafeSlow(this.batch * 28);
    this.txMeta = new Uint32Array(this.batch * TX_META);
    this.txMetaBytes = new Uint8Array(this.txMeta.buffer);
    this.#h = b.create(
      this.family,
      o.host,
      o.port,
      o.reusePort,
      o.bufferBytes,
      rx,
      big,
      this.rxMeta,
      this.headers,
      this.txMeta,
      this.stats,
      o.gso ?? process.env.GR_RELAY_GSO !== "off",
      o.gro === true,
    );
  }

  /** Whether this socket reads UDP GRO joined datagrams. */
  get gro(): boolean {
    return this.#b.gro?.(this.#h) === true;
  }

  /** Binds a socket (throws on setup errors: EADDRINUSE, a non-literal host, ...). */
  static open(o: BatchSocketOptions): BatchSocket {
    const b = loadBinding();
    if (b instanceof Error) throw b;
    return new BatchSocket(b, o);
  }

  connect(host: string, port: number): void {
    this.#b.connect(this.#h, host, port);
  }

  /** Starts reading; `onBatch(n)` runs with datagrams 0..n-1 in the slots. */
  start(onBatch: (count: number) => void): void {
    this.#b.start(this.#h, onBatch);
  }

  /**
   * Starts reading with a handler that may stop early: `onBatch(n, from)` handles datagrams
   * from..n-1 and may return k (from < k < n) to stop after datagram k-1; the addon then calls it
   * again with `from` = k once Node has run the nextTicks and promise continuations the first
   * call queued, as dgram runs them between two datagrams. Needs a build with resumableBatches.
   * `rounds`: batches read per readiness callback before other handles run (default 8).
   */
  startResumable(onBatch: (count: number, from: number) => number | undefined, rounds?: number): void {
    if (this.#b.resumableBatches !== true) throw new Error(RESUMABLE_MISSING);
    if (rounds === undefined) this.#b.start(this.#h, onBatch, true);
    else this.#b.start(this.#h, onBatch, true, rounds);
  }

  /**
   * Queues slot[offset, offset+len) of the socket that will be passed to flush, after header
   * `header` (an index into `headers`, or NO_HEADER), to `family` 0 (connected) / 4 / 6. For IPv6
   * write the 16 address bytes at txMetaBytes[(row * TX_META + 6) * 4] after the call. Returns the
   * row, or -1 when the batch is full.
   */
  queue(
    slot: number,
    offset: number,
    len: number,
    header: number,
    family: number,
    port: number,
    ip4: number,
  ): number {
    const row = this.txCount;
    if (row >= this.batch) return -1;
    const m = this.txMeta;
    const o = row * TX_META;
    m[o] = slot;
    m[o + 1] = offset;
    m[o + 2] = len;
    m[o + 3] = header;
    m[o + 4] = family;
    m[o + 5] = port;
    m[o + 6] = ip4;
    this.txCount = row + 1;
    return row;
  }

  /** Sends the queued datagrams, whose slots belong to `src`; returns how many the kernel took. */
  flush(src: BatchSocket): number {
    const n = this.txCount;
    if (n === 0) return 0;
    this.txCount = 0;
    return this.#b.flush(this.#h, src.#h, n);
  }

  /**
   * Sends the queued datagrams whose rows point into `arena` (the row's offset is into the arena,
   * its slot is ignored): for a sender that builds its datagrams in memory of its own.
   */
  flushArena(arena: Buffer): number {
    const n = this.txCount;
    if (n === 0) return 0;
    this.txCount = 0;
    return this.#b.flushArena(this.#h, arena, n);
  }

  /** One datagram from JS memory (outside a batch); IPv6 destinations pass their 16 bytes. */
  sendOne(
    buf: Uint8Array,
    offset: number,
    len: number,
    family: number,
    port: number,
    ip4: number,
    ip6?: Uint8Array,
  ): boolean {
    const a = this.#addr;
    if (ip6 !== undefined) new Uint8Array(a.buffer).set(ip6.subarray(0, 16));
    else a[0] = ip4;
    return this.#b.sendOne(this.#h, buf, offset, len, family, port, a) === 1;
  }

  /** Datagram i of the current batch (its length is rxMeta[i * RX_META]). */
  datagram(i: number): Buffer {
    return (this.rxMeta[i * RX_META + 1]! & FLAG_BIG) !== 0 ? this.bigSlots[i]! : this.slots[i]!;
  }

  /**
   * Gives the memory of datagram i to whoever kept its view (the engine holding it during a flow
   * lookup): later batches receive into a fresh slot.
   */
  replaceSlot(i: number): void {
    const big = (this.rxMeta[i * RX_META + 1]! & FLAG_BIG) !== 0;
    const buf = Buffer.allocUnsafeSlow(big ? this.maxDatagram : this.slotBytes);
    this.#b.replaceSlot(this.#h, i, buf, big);
    if (big) this.bigSlots[i] = buf;
    else this.slots[i] = buf;
  }

  address(): { family: 4 | 6; address: string; port: number } {
    const [family, address, port] = this.#b.localAddress(this.#h);
    return { family: family as 4 | 6, address, port };
  }

  /** Receive and send buffer sizes the kernel granted (it doubles a request, up to rmem_max). */
  bufferSizes(): { receive: number; send: number } {
    const [receive, send] = this.#b.bufferSizes(this.#h);
    return { receive, send };
  }

  /** The descriptor, -1 once closed. */
  get fd(): number {
    return this.#b.fd(this.#h);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Idempotent. */
  close(): void {
    this.#closed = true;
    this.#b.close(this.#h);
  }
}
