// The flow table: client address -> {cluster, transceiver, state, timestamps}, struct-of-arrays in
// preallocated typed arrays (about 90 bytes a flow including the index, no object per flow, nothing
// for the garbage collector to trace). IPv4 flows are found through an open-addressing index keyed
// by (ip, port) with no allocation; IPv6 flows through a Map keyed by "addr#port" (rare; the
// string is built per packet on that path only). Bounded in total and per source prefix
// (/24 IPv4, /64 IPv6), with a separate cap on half-open flows per prefix.
import { FlowState } from "./types.ts";

export interface FlowLimits {
  maxFlows: number;
  maxFlowsPerPrefix: number;
  maxHalfOpenPerPrefix: number;
}

/** Why a new flow may not be created, or "ok". */
export type AdmitResult = "ok" | "table-full" | "prefix-full" | "half-open-limit";

function hash4(ip: number, port: number): number {
  let h = Math.imul(ip ^ (port << 16) ^ port, 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca77);
  return h ^ (h >>> 13);
}

export class FlowTable {
  readonly capacity: number;
  readonly limits: FlowLimits;
  size = 0;
  halfOpen = 0;

  // Per slot.
  readonly state: Uint8Array;
  readonly v6: Uint8Array;
  readonly ip: Uint32Array;
  readonly port: Uint16Array;
  readonly cluster: Uint16Array;
  readonly transceiver: Uint16Array;
  /** Role-specific: the POP id (cluster relay) of the flow. */
  readonly pop: Uint16Array;
  /** Role-specific: index of the return endpoint (cluster relay). */
  readonly peer: Int32Array;
  /** Ticks. */
  readonly created: Uint32Array;
  readonly lastSeen: Uint32Array;
  readonly mirrored: Uint32Array;
  /** Amplification budget while half-open: bytes from / to the client (saturating). */
  readonly bytesIn: Uint32Array;
  readonly bytesOut: Uint32Array;
  /** Datagrams sent to the client while half-open (saturating at 255). */
  readonly sentOut: Uint8Array;
  /** Client address text as received (what the socket layer needs to send). */
  readonly address: string[];

  readonly #index: Int32Array;
  readonly #mask: number;
  readonly #freeNext: Int32Array;
  #freeHead: number;
  readonly #v6Index = new Map<string, number>();
  readonly #v6Info = new Map<number, { key: string; prefix: string; ip: Uint8Array }>();
  readonly #prefixAll = new Map<number | string, number>();
  readonly #prefixHalf = new Map<number | string, number>();

  constructor(limits: FlowLimits) {
    const cap = limits.maxFlows;
    if (!Number.isInteger(cap) || cap < 1 || cap > 1 << 26)
      throw new RangeError("maxFlows must be 1..67108864");
    this.capacity = cap;
    this.limits = limits;
    this.state = new Uint8Array(cap);
    this.v6 = new Uint8Array(cap);
    this.ip = new Uint32Array(cap);
    this.port = new Uint16Array(cap);
    this.cluster = new Uint16Array(cap);
    this.transceiver = new Uint16Array(cap);
    this.pop = new Uint16Array(cap);
    this.peer = new Int32Array(cap);
    this.created = new Uint32Array(cap);
    this.lastSeen = new Uint32Array(cap);
    this.mirrored = new Uint32Array(cap);
    this.bytesIn = new Uint32Array(cap);
    this.bytesOut = new Uint32Array(cap);
    this.sentOut = new Uint8Array(cap);
    this.address = new Array<string>(cap).fill("");
    let n = 2;
    while (n < cap * 2) n <<= 1;
    this.#index = new Int32Array(n);
    this.#mask = n - 1;
    this.#freeNext = new Int32Array(cap);
    for (let i = 0; i < cap; i++) this.#freeNext[i] = i + 1 < cap ? i + 1 : -1;
    this.#freeHead = 0;
  }

  /** Slot of the IPv4 flow (ip u32, port), or -1. No allocation. */
  find4(ip: number, port: number): number {
    const idx = this.#index;
    const mask = this.#mask;
    for (let i = hash4(ip, port) & mask; ; i = (i + 1) & mask) {
      const e = idx[i]!;
      if (e === 0) return -1;
      const s = e - 1;
      if (this.ip[s] === ip && this.port[s] === port && this.v6[s] === 0) return s;
    }
  }

  find6(key: string): number {
    return this.#v6Index.get(key) ?? -1;
  }

  /** Prefix key of an IPv4 address (/24). */
  static prefix4(ip: number): number {
    return ip >>> 8;
  }

  /** Checks the limits for a new flow from `prefix`. */
  admit(prefix: number | string): AdmitResult {
    if (this.size >= this.capacity) return "table-full";
    const l = this.limits;
    if ((this.#prefixAll.get(prefix) ?? 0) >= l.maxFlowsPerPrefix) return "prefix-full";
    if ((this.#prefixHalf.get(prefix) ?? 0) >= l.maxHalfOpenPerPrefix) return "half-open-limit";
    return "ok";
  }

  #alloc(): number {
    const s = this.#freeHead;
    if (s < 0) return -1;
    this.#freeHead = this.#freeNext[s]!;
    this.#freeNext[s] = -2;
    this.size++;
    return s;
  }

  #initSlot(s: number, port: number, address: string, state: FlowState, now: number): void {
    this.port[s] = port;
    this.address[s] = address;
    this.state[s] = state;
    this.cluster[s] = 0;
    this.transceiver[s] = 0;
    this.pop[s] = 0;
    this.peer[s] = -1;
    this.created[s] = now;
    this.lastSeen[s] = now;
    this.mirrored[s] = 0;
    this.bytesIn[s] = 0;
    this.bytesOut[s] = 0;
    this.sentOut[s] = 0;
    if (state === FlowState.halfOpen) this.halfOpen++;
  }

  /** Inserts an IPv4 flow; the caller checked `admit` and that it is absent. -1 when full. */
  insert4(ip: number, port: number, address: string, state: FlowState, nowTick: number): number {
    const s = this.#alloc();
    if (s < 0) return -1;
    this.ip[s] = ip;
    this.v6[s] = 0;
    this.#initSlot(s, port, address, state, nowTick);
    const idx = this.#index;
    const mask = this.#mask;
    let i = hash4(ip, port) & mask;
    while (idx[i] !== 0) i = (i + 1) & mask;
    idx[i] = s + 1;
    this.#count(FlowTable.prefix4(ip), state, 1);
    return s;
  }

  insert6(
    key: string,
    prefix: string,
    ip: Uint8Array,
    port: number,
    address: string,
    state: FlowState,
    nowTick: number,
  ): number {
    const s = this.#alloc();
    if (s < 0) return -1;
    this.ip[s] = 0;
    this.v6[s] = 1;
    this.#initSlot(s, port, address, state, nowTick);
    this.#v6Index.set(key, s);
    this.#v6Info.set(s, { key, prefix, ip: ip.slice(0, 16) });
    this.#count(prefix, state, 1);
    return s;
  }

  /** 16-byte IPv6 address of a v6 slot. */
  ip6(slot: number): Uint8Array | undefined {
    return this.#v6Info.get(slot)?.ip;
  }

  prefixOf(slot: number): number | string {
    return this.v6[slot] === 1 ? this.#v6Info.get(slot)!.prefix : FlowTable.prefix4(this.ip[slot]!);
  }

  #count(prefix: number | string, state: number, d: number): void {
    const all = (this.#prefixAll.get(prefix) ?? 0) + d;
    if (all <= 0) this.#prefixAll.delete(prefix);
    else this.#prefixAll.set(prefix, all);
    if (state === FlowState.halfOpen) {
      const half = (this.#prefixHalf.get(prefix) ?? 0) + d;
      if (half <= 0) this.#prefixHalf.delete(prefix);
      else this.#prefixHalf.set(prefix, half);
    }
  }

  /** Half-open -> validated (the transceiver sent pathValidated). */
  markValidated(slot: number): void {
    if (this.state[slot] !== FlowState.halfOpen) return;
    const prefix = this.prefixOf(slot);
    const half = (this.#prefixHalf.get(prefix) ?? 1) - 1;
    if (half <= 0) this.#prefixHalf.delete(prefix);
    else this.#prefixHalf.set(prefix, half);
    this.halfOpen--;
    this.state[slot] = FlowState.validated;
  }

  remove(slot: number): void {
    const st = this.state[slot]!;
    if (st === FlowState.free) return;
    this.#count(this.prefixOf(slot), st, -1);
    if (st === FlowState.halfOpen) this.halfOpen--;
    if (this.v6[slot] === 1) {
      const info = this.#v6Info.get(slot)!;
      this.#v6Index.delete(info.key);
      this.#v6Info.delete(slot);
    } else {
      this.#unindex4(slot);
    }
    this.state[slot] = FlowState.free;
    this.address[slot] = "";
    this.#freeNext[slot] = this.#freeHead;
    this.#freeHead = slot;
    this.size--;
  }

  /** Linear-probing delete with backward shift (no tombstones). */
  #unindex4(slot: number): void {
    const idx = this.#index;
    const mask = this.#mask;
    let i = hash4(this.ip[slot]!, this.port[slot]!) & mask;
    while (idx[i] !== slot + 1) {
      if (idx[i] === 0) return;
      i = (i + 1) & mask;
    }
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const e = idx[j]!;
      if (e === 0) break;
      const k = hash4(this.ip[e - 1]!, this.port[e - 1]!) & mask;
      // Move e back to the hole at i unless its home k lies cyclically in (i, j].
      const inRange = i <= j ? k > i && k <= j : k > i || k <= j;
      if (!inRange) {
        idx[i] = e;
        i = j;
      }
    }
    idx[i] = 0;
  }

  /** Number of distinct source prefixes with flows (for memory accounting and tests). */
  get prefixes(): number {
    return this.#prefixAll.size;
  }

  /** Iterates live slots (control plane only). */
  *slots(): IterableIterator<number> {
    for (let s = 0; s < this.capacity; s++) if (this.state[s] !== FlowState.free) yield s;
  }
}
