// The POP engine (client side), sans-IO. Client datagrams arrive on the VIP: a known client address
// is forwarded at once (one index probe, a 28-byte header); an unknown one must be a STUN Binding
// request whose server ufrag is a valid routing hint, or it is dropped and counted (or, with a flow
// store, looked up there when it is not STUN). Frames coming back are unwrapped for existing flows
// only. A new flow is half-open until the transceiver says its own check to the client address
// succeeded (a pathValidated frame): until then it gets the short timer, at most as many bytes as
// the client sent and at most HALF_OPEN_MAX_DATAGRAMS datagrams, and it is not mirrored. A STUN
// success from the backbone proves nothing (a replayed check draws one), so it opens nothing.
import { writeIpv4 } from "../../../shared/backbone/address.ts";
import {
  decodeFrameHeader,
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  FrameType,
  newFrameHeader,
} from "../../../shared/backbone/frame.ts";
import { decodeBase64Into } from "../../../shared/bytes/base64.ts";
import type { HintVerifier } from "../../../shared/hint/codec.ts";
import { HINT_BYTES, HINT_CHARS, newHintFields, readHintFields } from "../../../shared/hint/layout.ts";
import { classifyDatagram, DatagramKind, stunClassAt } from "../../../shared/stun/classify.ts";
import { isBindingRequest, newStunView, readStun, StunClass } from "../../../shared/stun/reader.ts";
import { ipv4Of, ipv6Into, v6Key, v6Prefix } from "./address.ts";
import { BackboneGate, Gate } from "./backbone-gate.ts";
import type { EngineEvent, FlowRecord, QueuedTransmit } from "./events.ts";
import { dueOrExpired, EngineClock, Expired, type ExpiryTicks } from "./expiry.ts";
import { type FlowLimits, FlowTable } from "./flow-table.ts";
import { type RestoreLimits, RestoreQueue } from "./restore.ts";
import { RttKind, TransactionMatcher } from "./rtt.ts";
import type { SourceList } from "./sources.ts";
import { EngineStats, KINDS, type RttSink } from "./stats.ts";
import { type FlowTimers, ticks } from "./timers.ts";
import { TimingWheel } from "./timing-wheel.ts";
import { Action, Direction, Drop, FlowState, newOutput, type Output, PeerKind } from "./types.ts";

/** Which transceivers of the co-located cluster exist (the registry, read synchronously). */
export interface TransceiverLookup {
  has(transceiverId: number): boolean;
}

export interface PopEngineConfig {
  popId: number;
  /** Cluster ids reachable through their cluster relay. */
  clusters: readonly number[];
  /** Backbone source networks per cluster id (frames on the POP's backbone listener). */
  clusterSources: ReadonlyMap<number, SourceList>;
  /** The cluster this POP sits in (forward straight to its transceivers), or 0. */
  colocatedClusterId: number;
  transceivers: TransceiverLookup;
  hint: HintVerifier;
  limits: FlowLimits;
  timers: FlowTimers;
  /** Write established flows to a store (events "mirror"/"forget"). */
  mirror: boolean;
  /** Look unknown non-STUN senders up in the store; null disables. */
  restore: RestoreLimits | null;
  rtt?: RttSink;
  /** `now` of construction (ms): the engine's time origin. */
  now: number;
  /**
   * "tcp": this engine's clients are ICE-TCP connections (one flow per connection, keyed by its
   * remote address): frames it sends carry the TCP-borne flag, and it accepts only such frames
   * back. Default "udp".
   */
  transport?: "udp" | "tcp";
}

export interface FlowInfo {
  /** "answered": the transceiver validated the client address (pathValidated). */
  state: "half-open" | "answered";
  clusterId: number;
  transceiverId: number;
  ageMs: number;
  idleMs: number;
}

const SATURATE = 0xffffffff;
/** Datagrams a half-open flow may send the client: our one check and its retransmissions. */
export const HALF_OPEN_MAX_DATAGRAMS = 4;

const HINT_DROPS = {
  malformed: Drop.badHint,
  "unsupported-version": Drop.unsupportedVersion,
  "unknown-key": Drop.unknownKey,
  "bad-mac": Drop.badMac,
} as const;

export class PopEngine {
  readonly stats = new EngineStats();
  readonly out: Output = newOutput();
  readonly events: EngineEvent[] = [];
  readonly queued: QueuedTransmit[] = [];
  readonly table: FlowTable;
  readonly #cfg: PopEngineConfig;
  readonly #wheel: TimingWheel;
  readonly #clusters: Uint8Array = new Uint8Array(65536);
  readonly #restore: RestoreQueue | null;
  readonly #rtt = new TransactionMatcher();
  readonly #view = newStunView();
  readonly #hint = newHintFields();
  readonly #hintBytes = new Uint8Array(HINT_BYTES);
  readonly #hdr = newFrameHeader();
  readonly #ip6 = new Uint8Array(16);
  readonly #gate: BackboneGate;
  readonly #clock: EngineClock;
  readonly #tickMs: number;
  readonly #expiry: ExpiryTicks;
  readonly #mirrorTicks: number;
  readonly #tcp: boolean;
  #draining = false;

  constructor(cfg: PopEngineConfig) {
    this.#cfg = cfg;
    this.#gate = new BackboneGate(this.#hdr, this.#ip6, cfg.clusterSources, "cluster");
    this.#tcp = cfg.transport === "tcp";
    this.table = new FlowTable(cfg.limits);
    const t = cfg.timers;
    this.#tickMs = t.tickMs;
    this.#expiry = {
      halfOpen: ticks(t.halfOpenMs, t.tickMs),
      idle: ticks(t.idleMs, t.tickMs),
      life: ticks(t.maxLifetimeMs, t.tickMs),
    };
    this.#mirrorTicks = ticks(t.mirrorRefreshMs, t.tickMs);
    this.#clock = new EngineClock(cfg.now, t.tickMs);
    this.#wheel = new TimingWheel(cfg.limits.maxFlows, 1024, 0);
    for (const id of cfg.clusters) this.#clusters[id] = 1;
    this.#restore = cfg.restore ? new RestoreQueue(cfg.restore) : null;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Stop creating flows; existing ones keep forwarding. */
  drain(): void {
    this.#draining = true;
  }

  #advanceTime(now: number): number {
    return this.#clock.advance(now);
  }

  // ---- client -> backbone ----------------------------------------------------------------------

  /**
   * A datagram from a client on the VIP socket. `ip` is the address as a number when the socket
   * layer has it already (the batched path reads it from the receive metadata): -1 for IPv6.
   */
  fromClient(
    now: number,
    address: string,
    port: number,
    buf: Uint8Array,
    len: number,
    ip: number = ipv4Of(address),
  ): Action {
    const tick = this.#advanceTime(now);
    const table = this.table;
    let slot: number;
    let key6 = "";
    if (ip >= 0) {
      slot = table.find4(ip, port);
    } else {
      if (!ipv6Into(address, this.#ip6)) return this.#drop(Drop.malformed);
      key6 = v6Key(this.#ip6, port);
      slot = table.find6(key6);
    }
    const kind = classifyDatagram(buf, len);
    if (slot >= 0) {
      if (kind === DatagramKind.stun) {
        const r = this.#clientStunOnFlow(slot, buf, len, now);
        if (r === -2) return this.#drop(this.#lastDrop);
        if (r === -1) slot = this.#newFlow(ip, key6, address, port, buf, len, tick, now, slot);
        if (slot < 0) return this.#drop(this.#lastDrop);
      }
      table.lastSeen[slot] = tick;
      if (table.state[slot] === FlowState.halfOpen) {
        const b = table.bytesIn[slot]! + len;
        table.bytesIn[slot] = Math.min(b, SATURATE);
      }
      return this.#wrap(slot, kind, buf, len);
    }
    if (kind !== DatagramKind.stun) return this.#unknown(ip, key6, address, port, buf, len, now, Drop.noFlow);
    const st = readStun(buf, len, this.#view);
    if (st !== "ok") return this.#drop(Drop.malformed);
    if (!isBindingRequest(this.#view))
      return this.#unknown(ip, key6, address, port, buf, len, now, Drop.noFlow);
    slot = this.#newFlow(ip, key6, address, port, buf, len, tick, now, -1);
    if (slot < 0) return this.#drop(this.#lastDrop);
    return this.#wrap(slot, kind, buf, len);
  }

  #lastDrop: Drop = Drop.malformed;

  /**
   * STUN from a client that has a flow: RTT bookkeeping, and a Binding request whose hint names
   * another destination re-points the flow. Returns the slot, -1 to replace the flow (hint verified
   * and in this.#hint), -2 to drop (#lastDrop).
   */
  #clientStunOnFlow(slot: number, buf: Uint8Array, len: number, now: number): number {
    const view = this.#view;
    if (readStun(buf, len, view) !== "ok") {
      this.#lastDrop = Drop.malformed;
      return -2;
    }
    if (view.messageClass === StunClass.success) {
      this.#sample(RttKind.firstHop, buf, 0, slot, now);
      return slot;
    }
    if (!isBindingRequest(view)) return slot;
    const uOff = view.usernameOffset;
    const uLen = view.colonOffset - uOff;
    if (uOff >= 0 && uLen === HINT_CHARS) {
      // Same destination as the flow: no MAC needed (nothing new is authorised).
      if (decodeBase64Into(buf, uOff, HINT_CHARS, this.#hintBytes, "standard") === HINT_BYTES) {
        readHintFields(this.#hintBytes, this.#hint);
        if (
          this.#hint.clusterId === this.table.cluster[slot] &&
          this.#hint.transceiverId === this.table.transceiver[slot]
        ) {
          this.#rtt.start(RttKind.backbone, buf, 8, slot, now);
          return slot;
        }
      }
    }
    // A different (or undecodable) hint: it must verify like a first packet, then replaces the flow.
    if (!this.#verifyHint(buf)) return -2;
    return -1;
  }

  /** Verifies the hint of the Binding request read into #view; fields in #hint, else #lastDrop set. */
  #verifyHint(buf: Uint8Array): boolean {
    const view = this.#view;
    if (view.usernameOffset < 0 || view.colonOffset < 0) {
      this.#lastDrop = Drop.badHint;
      return false;
    }
    const status = this.#cfg.hint.verify(
      buf,
      view.usernameOffset,
      view.colonOffset - view.usernameOffset,
      this.#hint,
    );
    if (status !== "ok") {
      this.#lastDrop = HINT_DROPS[status];
      return false;
    }
    const c = this.#hint.clusterId;
    if (c === this.#cfg.colocatedClusterId && c !== 0) {
      if (!this.#cfg.transceivers.has(this.#hint.transceiverId)) {
        this.#lastDrop = Drop.unknownTransceiver;
        return false;
      }
    } else if (this.#clusters[c] !== 1) {
      this.#lastDrop = Drop.unknownCluster;
      return false;
    }
    return true;
  }

  /**
   * Creates a half-open flow for the Binding request in #view (hint verified unless `replacing`
   * says it was done already). `replacing` is the slot of a flow from the same address to drop.
   */
  #newFlow(
    ip: number,
    key6: string,
    address: string,
    port: number,
    buf: Uint8Array,
    len: number,
    tick: number,
    now: number,
    replacing: number,
  ): number {
    if (replacing < 0 && !this.#verifyHint(buf)) return -1;
    if (this.#draining) {
      this.#lastDrop = Drop.draining;
      return -1;
    }
    const table = this.table;
    if (replacing >= 0) {
      this.#endFlow(replacing, true);
      this.stats.flowsReplaced++;
    }
    const prefix = ip >= 0 ? FlowTable.prefix4(ip) : v6Prefix(this.#ip6);
    const admit = table.admit(prefix);
    if (admit !== "ok") {
      this.#lastDrop = admit === "half-open-limit" ? Drop.rateLimited : Drop.tableFull;
      return -1;
    }
    const slot =
      ip >= 0
        ? table.insert4(ip, port, address, FlowState.halfOpen, tick)
        : table.insert6(key6, prefix as string, this.#ip6, port, address, FlowState.halfOpen, tick);
    if (slot < 0) {
      this.#lastDrop = Drop.tableFull;
      return -1;
    }
    table.cluster[slot] = this.#hint.clusterId;
    table.transceiver[slot] = this.#hint.transceiverId;
    table.bytesIn[slot] = len;
    this.#wheel.schedule(slot, tick + this.#expiry.halfOpen);
    this.stats.flowsCreated++;
    this.#restore?.clearNegative(ip >= 0 ? ip * 65536 + port : key6);
    this.#rtt.start(RttKind.backbone, buf, 8, slot, now);
    return slot;
  }

  /** Fills the header for `slot` and the upstream peer; counts the datagram. */
  #wrap(slot: number, kind: number, buf: Uint8Array, len: number): Action {
    const table = this.table;
    const h = this.#hdr;
    h.type = FrameType.data;
    h.popId = this.#cfg.popId;
    h.clientTcp = this.#tcp;
    const cluster = table.cluster[slot]!;
    h.clusterId = cluster;
    h.transceiverId = table.transceiver[slot]!;
    h.clientPort = table.port[slot]!;
    if (table.v6[slot] === 1) {
      h.clientIpv6 = true;
      h.clientIp.set(table.ip6(slot)!);
    } else {
      h.clientIpv6 = false;
      writeIpv4(h.clientIp, table.ip[slot]!);
    }
    const out = this.out;
    out.slot = slot;
    encodeFrameHeader(out.header, 0, h);
    if (cluster === this.#cfg.colocatedClusterId) {
      out.peerKind = PeerKind.transceiver;
      out.peerId = h.transceiverId;
    } else {
      out.peerKind = PeerKind.cluster;
      out.peerId = cluster;
    }
    const i = Direction.upstream * KINDS + kind;
    this.stats.packets[i]!++;
    this.stats.bytes[i]! += len;
    void buf;
    return Action.forwardWrapped;
  }

  #drop(reason: Drop): Action {
    this.stats.drops[reason]!++;
    return Action.drop;
  }

  /** An unknown sender's datagram that is not a Binding request: restore from the store, or drop. */
  #unknown(
    ip: number,
    key6: string,
    address: string,
    port: number,
    buf: Uint8Array,
    len: number,
    now: number,
    reason: Drop,
  ): Action {
    const r = this.#restore;
    if (r === null) return this.#drop(reason);
    const key = ip >= 0 ? ip * 65536 + port : key6;
    const res = r.begin(key, address, port, buf, len, now);
    switch (res.result) {
      case "started":
        this.stats.lookups++;
        this.events.push({ type: "lookup", id: res.lookup!.id, address, port });
        return Action.held;
      case "held":
        return Action.held;
      case "negative":
        return this.#drop(reason);
      default:
        return this.#drop(Drop.rateLimited);
    }
  }

  /**
   * The answer to a "lookup" event. A found record restores the flow as answered and queues the
   * held datagrams (drain `queued`); a miss or an error drops them and remembers the address.
   */
  restoreResult(now: number, id: number, record: FlowRecord | null | "error"): number {
    const tick = this.#advanceTime(now);
    const r = this.#restore;
    if (r === null) return 0;
    const found = record !== null && record !== "error";
    const p = r.finish(id, found, now);
    if (p === undefined) return 0;
    if (record === "error") this.stats.lookupErrors++;
    else if (record === null) this.stats.lookupMisses++;
    else this.stats.lookupHits++;
    if (!found) {
      this.stats.drops[Drop.noFlow]! += p.held.length;
      return 0;
    }
    const rec = record as FlowRecord;
    const table = this.table;
    const ip = ipv4Of(p.address);
    let slot = -1;
    let key6 = "";
    if (ip >= 0) slot = table.find4(ip, p.port);
    else if (ipv6Into(p.address, this.#ip6)) {
      key6 = v6Key(this.#ip6, p.port);
      slot = table.find6(key6);
    } else {
      this.stats.drops[Drop.malformed]! += p.held.length;
      return 0;
    }
    if (slot < 0) {
      const routable =
        rec.clusterId === this.#cfg.colocatedClusterId && rec.clusterId !== 0
          ? this.#cfg.transceivers.has(rec.transceiverId)
          : this.#clusters[rec.clusterId] === 1;
      if (!routable) {
        this.stats.drops[Drop.unknownCluster]! += p.held.length;
        return 0;
      }
      const prefix = ip >= 0 ? FlowTable.prefix4(ip) : v6Prefix(this.#ip6);
      const admit = table.admit(prefix);
      if (admit === "table-full" || admit === "prefix-full") {
        this.stats.drops[Drop.tableFull]! += p.held.length;
        return 0;
      }
      slot =
        ip >= 0
          ? table.insert4(ip, p.port, p.address, FlowState.validated, tick)
          : table.insert6(key6, prefix as string, this.#ip6, p.port, p.address, FlowState.validated, tick);
      if (slot < 0) {
        this.stats.drops[Drop.tableFull]! += p.held.length;
        return 0;
      }
      table.cluster[slot] = rec.clusterId;
      table.transceiver[slot] = rec.transceiverId;
      const ageTicks = Math.floor(Math.max(0, rec.ageMs) / this.#tickMs);
      table.created[slot] = ageTicks >= tick ? 0 : tick - ageTicks;
      table.mirrored[slot] = tick;
      this.#wheel.schedule(slot, tick + Math.min(this.#expiry.idle, this.#mirrorTicks));
      this.stats.flowsRestored++;
      this.stats.flowsCreated++;
    }
    for (let i = 0; i < p.held.length; i++) {
      const buf = p.held[i]!;
      const len = p.lens[i]!;
      this.#wrap(slot, classifyDatagram(buf, len), buf, len);
      this.queued.push({
        peerKind: this.out.peerKind,
        peerId: this.out.peerId,
        header: this.out.header.slice(),
        buf,
        len,
      });
    }
    return p.held.length;
  }

  // ---- backbone -> client ----------------------------------------------------------------------

  /**
   * A frame on the connected socket of an upstream peer: a cluster relay (`PeerKind.cluster`,
   * `peerId` = cluster id) or, co-located, a transceiver (`PeerKind.transceiver`, transceiver id).
   * The kernel guarantees the source of a connected socket.
   */
  fromUpstream(now: number, peerKind: number, peerId: number, buf: Uint8Array, len: number): Action {
    const h = this.#hdr;
    if (decodeFrameHeader(buf, len, h) !== "ok") return this.#drop(Drop.malformed);
    if (peerKind === PeerKind.cluster) {
      if (h.clusterId !== peerId) return this.#drop(Drop.flowMismatch);
    } else if (h.clusterId !== this.#cfg.colocatedClusterId || h.transceiverId !== peerId) {
      return this.#drop(Drop.flowMismatch);
    }
    return this.#downstream(now, buf, len);
  }

  /**
   * A frame on the POP's topology backbone listener (cluster relays fall back to it when they lost
   * a flow's return address). Sources must lie in the cluster's backbone networks. Pings are
   * answered in place (Action.toBackbone).
   */
  fromBackbone(now: number, address: string, port: number, buf: Uint8Array, len: number): Action {
    const g = this.#gate.check(buf, len, address);
    if (g === Gate.pass) return this.#downstream(now, buf, len);
    if (g !== Gate.pong) return this.#drop(g === Gate.malformed ? Drop.malformed : Drop.sourceNotAllowed);
    this.out.address = address;
    this.out.port = port;
    return Action.toBackbone;
  }

  /** Header already in #hdr and the source checked. */
  #downstream(now: number, buf: Uint8Array, len: number): Action {
    const h = this.#hdr;
    if (h.type === FrameType.pong) return Action.drop;
    if (h.type !== FrameType.data && h.type !== FrameType.flowClose && h.type !== FrameType.pathValidated)
      return this.#drop(Drop.malformed);
    if (h.popId !== this.#cfg.popId || h.clientTcp !== this.#tcp) return this.#drop(Drop.flowMismatch);
    const tick = this.#advanceTime(now);
    const table = this.table;
    let slot: number;
    if (h.clientIpv6) slot = table.find6(v6Key(h.clientIp, h.clientPort));
    else
      slot = table.find4(
        ((h.clientIp[12]! << 24) | (h.clientIp[13]! << 16) | (h.clientIp[14]! << 8) | h.clientIp[15]!) >>> 0,
        h.clientPort,
      );
    if (slot < 0) return this.#drop(Drop.noFlow);
    if (table.cluster[slot] !== h.clusterId || table.transceiver[slot] !== h.transceiverId) {
      return this.#drop(Drop.flowMismatch);
    }
    if (h.type === FrameType.flowClose) {
      this.#endFlow(slot, true);
      this.stats.flowsClosed++;
      return Action.drop;
    }
    if (h.type === FrameType.pathValidated) {
      if (table.state[slot] === FlowState.halfOpen) {
        table.markValidated(slot);
        this.stats.flowsValidated++;
        if (this.#cfg.mirror) {
          table.mirrored[slot] = tick;
          this.#emitMirror(slot, tick);
        }
      }
      table.lastSeen[slot] = tick;
      return Action.drop;
    }
    const plen = len - FRAME_HEADER_BYTES;
    const kind = classifyDatagram(buf, len, FRAME_HEADER_BYTES);
    if (table.state[slot] === FlowState.halfOpen) {
      // Amplification rule: until the transceiver validated the address, never more bytes to the
      // client than it sent, and only a few datagrams.
      const sent = table.bytesOut[slot]! + plen;
      if (sent > table.bytesIn[slot]!) return this.#drop(Drop.amplification);
      if (table.sentOut[slot]! >= HALF_OPEN_MAX_DATAGRAMS) return this.#drop(Drop.halfOpenLimit);
      table.bytesOut[slot] = sent;
      table.sentOut[slot]!++;
    }
    table.lastSeen[slot] = tick;
    if (kind === DatagramKind.stun && plen >= 20) {
      const cls = stunClassAt(buf, FRAME_HEADER_BYTES);
      if (cls === StunClass.success) this.#sample(RttKind.backbone, buf, FRAME_HEADER_BYTES, slot, now);
      else if (cls === StunClass.request)
        this.#rtt.start(RttKind.firstHop, buf, FRAME_HEADER_BYTES + 8, slot, now);
    }
    const out = this.out;
    out.address = table.address[slot]!;
    out.port = table.port[slot]!;
    out.slot = slot;
    const i = Direction.downstream * KINDS + kind;
    this.stats.packets[i]!++;
    this.stats.bytes[i]! += plen;
    return Action.toClient;
  }

  #sample(kind: number, buf: Uint8Array, off: number, slot: number, now: number): void {
    const ms = this.#rtt.finish(kind, buf, off + 8, slot, now);
    if (ms >= 0) this.#cfg.rtt?.rtt(kind, this.table.cluster[slot]!, ms);
  }

  #emitMirror(slot: number, tick: number): void {
    const t = this.table;
    this.events.push({
      type: "mirror",
      address: t.address[slot]!,
      port: t.port[slot]!,
      record: {
        clusterId: t.cluster[slot]!,
        transceiverId: t.transceiver[slot]!,
        popId: this.#cfg.popId,
        ageMs: (tick - t.created[slot]!) * this.#tickMs,
      },
    });
  }

  /** Removes a flow; `forget` also removes its mirror (the session is over). */
  #endFlow(slot: number, forget: boolean): void {
    const t = this.table;
    if (forget && this.#cfg.mirror && t.state[slot] === FlowState.validated) {
      this.events.push({ type: "forget", address: t.address[slot]!, port: t.port[slot]! });
    }
    this.#wheel.unlink(slot);
    t.remove(slot);
  }

  /**
   * The client's transport ended (its TCP connection closed): drops its flow now instead of at the
   * idle timer. Returns whether there was one.
   */
  endClient(now: number, address: string, port: number): boolean {
    this.#advanceTime(now);
    const ip = ipv4Of(address);
    let slot = -1;
    if (ip >= 0) slot = this.table.find4(ip, port);
    else if (ipv6Into(address, this.#ip6)) slot = this.table.find6(v6Key(this.#ip6, port));
    if (slot < 0) return false;
    this.#endFlow(slot, true);
    this.stats.flowsClosed++;
    return true;
  }

  // ---- timers ----------------------------------------------------------------------------------

  /** Advances the timers to `now`: expires flows, refreshes mirrors, times out lookups. */
  tick(now: number): void {
    const tick = this.#advanceTime(now);
    this.#wheel.advance(tick, this.#onDue);
    const r = this.#restore;
    if (r !== null && r.pending > 0) {
      for (const id of r.overdue(now)) this.restoreResult(now, id, "error");
    }
  }

  readonly #onDue = (slot: number, tick: number): void => {
    const t = this.table;
    let due = dueOrExpired(t, slot, tick, this.#expiry);
    if (due < 0) {
      if (due === Expired.free) return;
      if (due === Expired.halfOpen) this.stats.expiredHalfOpen++;
      else if (due === Expired.idle) this.stats.expiredIdle++;
      else this.stats.expiredLifetime++;
      this.#endFlow(slot, false);
      return;
    }
    if (this.#cfg.mirror && t.state[slot] === FlowState.validated) {
      let mDue = t.mirrored[slot]! + this.#mirrorTicks;
      if (mDue <= tick) {
        if (t.lastSeen[slot]! > t.mirrored[slot]!) this.#emitMirror(slot, tick);
        t.mirrored[slot] = tick;
        mDue = tick + this.#mirrorTicks;
      }
      if (mDue < due) due = mDue;
    }
    this.#wheel.schedule(slot, due);
  };

  // ---- control plane ---------------------------------------------------------------------------

  /** Looks a flow up by client address (admin /flows?client=). */
  lookup(address: string, port: number): FlowInfo | null {
    const ip = ipv4Of(address);
    let slot = -1;
    if (ip >= 0) slot = this.table.find4(ip, port);
    else if (ipv6Into(address, this.#ip6)) slot = this.table.find6(v6Key(this.#ip6, port));
    if (slot < 0) return null;
    const t = this.table;
    return {
      state: t.state[slot] === FlowState.halfOpen ? "half-open" : "answered",
      clusterId: t.cluster[slot]!,
      transceiverId: t.transceiver[slot]!,
      ageMs: (this.#clock.tick - t.created[slot]!) * this.#tickMs,
      idleMs: (this.#clock.tick - t.lastSeen[slot]!) * this.#tickMs,
    };
  }
}
