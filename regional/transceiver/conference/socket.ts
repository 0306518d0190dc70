// The conference socket: one UDP socket per transceiver process for conference frames
// (docs/wire-formats.md §8), transceiver to transceiver. Every datagram is decoded and its MAC
// checked once here, then handed to the conference it names (a hub conference or a leg); the
// replay window and everything after it belong to that endpoint. Drops are counted by reason and
// never throw. One process-level timer drives every endpoint (keepalives, hellos, NACK retries,
// deadlines), running only while there is one.
import { randomBytes } from "node:crypto";
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import {
  CONFERENCE_MAX_FRAME,
  CONFERENCE_MAX_PAYLOAD,
  CONFERENCE_OVERHEAD_BYTES,
  type ConferenceHeader,
  decodeConferenceFrame,
  encodeConferenceFrame,
  newConferenceHeader,
} from "../../../shared/conference/frame.ts";
import type { MacSync } from "../../../shared/hint/codec.ts";
import type { HostPort } from "../../../shared/topology/address.ts";
import { nodeMac } from "../../common/hmac.ts";
import type { ConferenceConfig } from "../config.ts";
import { type ConferenceMetrics, dropReasonOf } from "./metrics.ts";

/** A conference this process takes part in: the hub side of a call (slot 0), or a leg (its slot). */
export interface ConferenceEndpoint {
  readonly hi: number;
  readonly lo: number;
  /** Frames whose destination slot is this reach it: 0 = the hub, else the leg's participant slot. */
  readonly slot: number;
  /**
   * A MAC-valid frame naming this conference; its payload is at buf[20 .. 20 + h.payloadLength].
   * `from`: the datagram's source (never sent to; the hub checks it against the bound leg).
   */
  receive(h: ConferenceHeader, buf: Buffer, now: number, from: RemoteInfo): void;
  /** Every TICK_MS: keepalives, hellos, NACK retries, deadlines. */
  tick(now: number): void;
}

/** The endpoints' clock step: NACK retries need tens of ms, keepalives count whole seconds. */
export const TICK_MS = 20;
/** Conferences a process takes part in at most (hub conferences and legs); beyond: refused. */
export const MAX_ENDPOINTS = 4096;

// Conference low word (u32) and destination slot (u16): at most 2^48, an exact number.
const key = (lo: number, slot: number): number => lo * 65536 + slot;

export class ConferenceSocket {
  readonly metrics: ConferenceMetrics;
  readonly mac: MacSync;
  readonly keyId: number;
  readonly config: ConferenceConfig;
  readonly #socket: Socket;
  /** The address other transceivers send to (fixed once bound). */
  readonly #self: HostPort;
  readonly #h = newConferenceHeader();
  // Keyed by the conference id's low word (random: a good hash) and the destination slot (the
  // hub and legs of one conference may share a process); the high word is checked.
  readonly #byKey = new Map<number, ConferenceEndpoint>();
  readonly #all = new Set<ConferenceEndpoint>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(socket: Socket, config: ConferenceConfig, metrics: ConferenceMetrics) {
    this.#socket = socket;
    this.config = config;
    this.metrics = metrics;
    this.mac = nodeMac(config.keys);
    this.keyId = config.keys.active.id;
    const a = socket.address();
    this.#self = config.advertise ?? { host: a.address, port: a.port, ipv6: a.family === "IPv6" };
    socket.on("message", (msg, rinfo) => this.#onMessage(msg, rinfo));
    socket.on("error", () => metrics.drops.no_route.inc());
  }

  static async open(config: ConferenceConfig, metrics: ConferenceMetrics): Promise<ConferenceSocket> {
    const socket = createSocket({ type: config.bind.ipv6 ? "udp6" : "udp4" });
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(config.bind.port, config.bind.host, () => {
        socket.off("error", reject);
        resolve();
      });
    });
    return new ConferenceSocket(socket, config, metrics);
  }

  /** The address other transceivers send to: TRANSCEIVER_CONFERENCE_ADDR, or the bound one. */
  get address(): HostPort {
    return this.#self;
  }

  get endpoints(): number {
    return this.#all.size;
  }

  /** A fresh random conference id no endpoint here uses. */
  newConferenceId(): { hi: number; lo: number } {
    for (;;) {
      const b = randomBytes(8);
      const hi = b.readUInt32BE(0);
      const lo = b.readUInt32BE(4);
      if (!this.#byKey.has(key(lo, 0))) return { hi, lo };
    }
  }

  /** False when (conference, slot) is taken here or the table is full. */
  register(e: ConferenceEndpoint): boolean {
    const k = key(e.lo, e.slot);
    if (this.#closed || this.#byKey.has(k) || this.#all.size >= MAX_ENDPOINTS) return false;
    this.#byKey.set(k, e);
    this.#all.add(e);
    this.metrics.conferences.set(this.#all.size);
    if (this.#timer === undefined) {
      this.#timer = setInterval(this.#tick, TICK_MS);
      this.#timer.unref();
    }
    return true;
  }

  unregister(e: ConferenceEndpoint): void {
    const k = key(e.lo, e.slot);
    if (this.#byKey.get(k) !== e) return;
    this.#byKey.delete(k);
    this.#all.delete(e);
    this.metrics.conferences.set(this.#all.size);
    if (this.#all.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /**
   * Sends one frame: `h` with the active key, the payload given or (null) already written at
   * `buf[20..]` of a buffer from `frameBuffer()`. A new buffer per datagram: dgram keeps it until
   * the kernel has it, so it cannot be reused at once (Node's pool makes it cheap).
   */
  send(h: ConferenceHeader, payload: Uint8Array | null, to: HostPort, buf?: Buffer): number {
    if (this.#closed) return -1;
    h.keyId = this.keyId;
    const out = buf ?? Buffer.allocUnsafe(CONFERENCE_MAX_FRAME);
    const end = encodeConferenceFrame(out, 0, h, payload, this.mac);
    if (end < 0) return -1;
    if (this.#isLocal(h, to)) this.#toSelf(out, end);
    else this.#socket.send(out.subarray(0, end), to.port, to.host);
    this.metrics.out.frames.inc();
    this.metrics.out.bytes.inc(end);
    return end;
  }

  /** A buffer for a frame of `payloadBytes` (default the most), filled at 20.. before `send(h, null, to, buf)`. */
  frameBuffer(payloadBytes = CONFERENCE_MAX_PAYLOAD): Buffer {
    return Buffer.allocUnsafe(CONFERENCE_OVERHEAD_BYTES + payloadBytes);
  }

  /**
   * A frame to an endpoint on this very socket, sent to the socket's own advertised address: the
   * hub and a leg of one conference on this process (a joiner whose nearest cluster chose the
   * hub's own transceiver). The advertised address need not route back to this host (a NAT's or
   * a tunnel's), so such a frame never leaves the process: it is decoded as received, from that
   * same address (which the hub checks against the leg's hello), after the sender's turn (no
   * re-entry into the endpoint that sent it). Both must hold: an address a forwarder fronts for
   * several peers is not this socket's alone, and a slot registered here may belong to a stale
   * second leg while the hub sends to the bound one elsewhere.
   */
  #isLocal(h: ConferenceHeader, to: HostPort): boolean {
    if (to.port !== this.#self.port || to.host !== this.#self.host) return false;
    return this.#byKey.get(key(h.conferenceLo, h.destinationSlot))?.hi === h.conferenceHi;
  }

  #toSelf(out: Buffer, end: number): void {
    const msg = Buffer.copyBytesFrom(out, 0, end);
    const a = this.#self;
    const from: RemoteInfo = { address: a.host, port: a.port, family: a.ipv6 ? "IPv6" : "IPv4", size: end };
    queueMicrotask(() => {
      if (!this.#closed) this.#onMessage(msg, from);
    });
  }

  #onMessage(msg: Buffer, from: RemoteInfo): void {
    const h = this.#h;
    const m = this.metrics;
    const status = decodeConferenceFrame(msg, msg.length, h, this.mac);
    if (status !== "ok") {
      m.drops[dropReasonOf(status)].inc();
      return;
    }
    const e = this.#byKey.get(key(h.conferenceLo, h.destinationSlot));
    if (e === undefined || e.hi !== h.conferenceHi) {
      m.drops.unknown_conference.inc();
      return;
    }
    m.in.frames.inc();
    m.in.bytes.inc(msg.length);
    e.receive(h, msg, performance.now(), from);
  }

  readonly #tick = (): void => {
    const now = performance.now();
    for (const e of this.#all) e.tick(now);
  };

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await new Promise<void>((r) => this.#socket.close(() => r()));
  }
}
