// The cluster relay engine (backbone side), sans-IO. Frames from POPs (sources in the topology)
// go unchanged to the transceiver named in the header, if the registry knows it; the flow remembers
// which POP socket it came from, so the transceiver's frames go back the same way. A flow this
// worker does not know (it restarted) is sent to the POP's topology backbone address instead.
// A flow stays half-open (short timer, capped per source) until the transceiver's pathValidated
// frame for it passes through on its way to the POP.

import { readIpv4 } from "../../../shared/backbone/address.ts";
import {
  decodeFrameHeader,
  FRAME_HEADER_BYTES,
  FRAME_VERSION,
  FrameType,
  newFrameHeader,
} from "../../../shared/backbone/frame.ts";
import { classifyDatagram } from "../../../shared/stun/classify.ts";
import { ipv4Of, ipv6Into, v6Key, v6Prefix } from "./address.ts";
import { BackboneGate, Gate } from "./backbone-gate.ts";
import { EndpointTable } from "./endpoints.ts";
import { dueOrExpired, EngineClock, Expired, type ExpiryTicks } from "./expiry.ts";
import { type FlowLimits, FlowTable } from "./flow-table.ts";
import type { TransceiverLookup } from "./pop-engine.ts";
import type { SourceList } from "./sources.ts";
import { EngineStats, KINDS } from "./stats.ts";
import { type FlowTimers, ticks } from "./timers.ts";
import { TimingWheel } from "./timing-wheel.ts";
import { Action, Direction, Drop, FlowState, newOutput, type Output, PeerKind } from "./types.ts";

export interface ClusterEngineConfig {
  clusterId: number;
  /** Backbone source networks per POP id. */
  popSources: ReadonlyMap<number, SourceList>;
  /** Each POP's topology backbone address (fallback return path). */
  popBackbone: ReadonlyMap<number, { address: string; port: number }>;
  transceivers: TransceiverLookup;
  limits: FlowLimits;
  timers: FlowTimers;
  now: number;
}

export class ClusterEngine {
  readonly stats = new EngineStats();
  readonly out: Output = newOutput();
  readonly table: FlowTable;
  readonly endpoints = new EndpointTable();
  readonly #cfg: ClusterEngineConfig;
  readonly #wheel: TimingWheel;
  readonly #hdr = newFrameHeader();
  readonly #ip6 = new Uint8Array(16);
  readonly #gate: BackboneGate;
  readonly #clock: EngineClock;
  readonly #expiry: ExpiryTicks;
  #draining = false;

  constructor(cfg: ClusterEngineConfig) {
    this.#cfg = cfg;
    this.#gate = new BackboneGate(this.#hdr, this.#ip6, cfg.popSources, "pop");
    this.table = new FlowTable(cfg.limits);
    const t = cfg.timers;
    this.#expiry = {
      halfOpen: ticks(t.halfOpenMs, t.tickMs),
      idle: ticks(t.idleMs, t.tickMs),
      life: ticks(t.maxLifetimeMs, t.tickMs),
    };
    this.#clock = new EngineClock(cfg.now, t.tickMs);
    this.#wheel = new TimingWheel(cfg.limits.maxFlows, 1024, 0);
  }

  get draining(): boolean {
    return this.#draining;
  }

  drain(): void {
    this.#draining = true;
  }

  #advanceTime(now: number): number {
    return this.#clock.advance(now);
  }

  #drop(reason: Drop): Action {
    this.stats.drops[reason]!++;
    return Action.drop;
  }

  /** A frame from a POP on the cluster relay's backbone socket. */
  fromBackbone(now: number, address: string, port: number, buf: Uint8Array, len: number): Action {
    const g = this.#gate.check(buf, len, address);
    if (g !== Gate.pass) return this.#gated(g, address, port);
    const h = this.#hdr;
    const ip = this.#gate.ip;
    if (h.type !== FrameType.data) return this.#drop(Drop.malformed);
    if (h.clusterId !== this.#cfg.clusterId) return this.#drop(Drop.unknownCluster);
    const tid = h.transceiverId;
    if (!this.#cfg.transceivers.has(tid)) return this.#drop(Drop.unknownTransceiver);
    const tick = this.#advanceTime(now);
    const table = this.table;
    let slot: number;
    let key6 = "";
    let cip = -1;
    if (h.clientIpv6) {
      key6 = v6Key(h.clientIp, h.clientPort);
      slot = table.find6(key6);
    } else {
      cip = readIpv4(h.clientIp);
      slot = table.find4(cip, h.clientPort);
    }
    const eps = this.endpoints;
    if (slot < 0) {
      if (this.#draining) return this.#drop(Drop.draining);
      const prefix = h.clientIpv6 ? v6Prefix(h.clientIp) : FlowTable.prefix4(cip);
      const admit = table.admit(prefix);
      if (admit !== "ok") return this.#drop(admit === "half-open-limit" ? Drop.rateLimited : Drop.tableFull);
      const ep = eps.intern(address, port, ip);
      if (ep < 0) return this.#drop(Drop.tableFull);
      slot = h.clientIpv6
        ? table.insert6(key6, prefix as string, h.clientIp, h.clientPort, "", FlowState.halfOpen, tick)
        : table.insert4(cip, h.clientPort, "", FlowState.halfOpen, tick);
      if (slot < 0) {
        eps.release(ep);
        return this.#drop(Drop.tableFull);
      }
      eps.retain(ep);
      table.peer[slot] = ep;
      table.cluster[slot] = h.clusterId;
      table.transceiver[slot] = tid;
      table.pop[slot] = h.popId;
      this.#wheel.schedule(slot, tick + this.#expiry.halfOpen);
      this.stats.flowsCreated++;
    } else {
      // The POP re-pointed the flow, or the client's traffic moved to another POP socket.
      table.transceiver[slot] = tid;
      const cur = table.peer[slot]!;
      if (eps.port[cur] !== port || eps.address[cur] !== address) {
        const ep = eps.intern(address, port, ip);
        if (ep >= 0) {
          eps.retain(ep);
          eps.release(cur);
          table.peer[slot] = ep;
          table.pop[slot] = h.popId;
        }
      }
    }
    table.lastSeen[slot] = tick;
    const kind = classifyDatagram(buf, len, FRAME_HEADER_BYTES);
    const i = Direction.upstream * KINDS + kind;
    this.stats.packets[i]!++;
    this.stats.bytes[i]! += len - FRAME_HEADER_BYTES;
    this.out.peerKind = PeerKind.transceiver;
    this.out.peerId = tid;
    return Action.forwardFrame;
  }

  #gated(g: Gate, address: string, port: number): Action {
    if (g !== Gate.pong) return this.#drop(g === Gate.malformed ? Drop.malformed : Drop.sourceNotAllowed);
    this.out.address = address;
    this.out.port = port;
    return Action.toBackbone;
  }

  /** A frame on the connected socket of transceiver `transceiverId`. */
  fromTransceiver(now: number, transceiverId: number, buf: Uint8Array, len: number): Action {
    const h = this.#hdr;
    if (decodeFrameHeader(buf, len, h) !== "ok") return this.#drop(Drop.malformed);
    if (h.clusterId !== this.#cfg.clusterId || h.transceiverId !== transceiverId) {
      return this.#drop(Drop.flowMismatch);
    }
    if (h.type === FrameType.ping) {
      buf[1] = (FRAME_VERSION << 4) | FrameType.pong;
      this.out.peerKind = PeerKind.transceiver;
      this.out.peerId = transceiverId;
      return Action.forwardFrame;
    }
    if (h.type === FrameType.pong) return Action.drop;
    const tick = this.#advanceTime(now);
    const table = this.table;
    const slot = h.clientIpv6
      ? table.find6(v6Key(h.clientIp, h.clientPort))
      : table.find4(readIpv4(h.clientIp), h.clientPort);
    const out = this.out;
    if (slot < 0 || table.pop[slot] !== h.popId) {
      // Lost (restart) or stale: the POP's topology backbone listener can still deliver it.
      const pop = this.#cfg.popBackbone.get(h.popId);
      if (pop === undefined) return this.#drop(Drop.noFlow);
      out.address = pop.address;
      out.port = pop.port;
      this.stats.fallbackToPop++;
    } else {
      if (table.transceiver[slot] !== transceiverId) return this.#drop(Drop.flowMismatch);
      const ep = table.peer[slot]!;
      out.address = this.endpoints.address[ep]!;
      out.port = this.endpoints.port[ep]!;
      if (h.type === FrameType.flowClose) {
        this.#endFlow(slot);
        this.stats.flowsClosed++;
      } else {
        table.lastSeen[slot] = tick;
        if (h.type === FrameType.pathValidated && table.state[slot] === FlowState.halfOpen) {
          table.markValidated(slot);
          this.stats.flowsValidated++;
        }
      }
    }
    const kind = classifyDatagram(buf, len, FRAME_HEADER_BYTES);
    const i = Direction.downstream * KINDS + kind;
    this.stats.packets[i]!++;
    this.stats.bytes[i]! += len - FRAME_HEADER_BYTES;
    return Action.toBackbone;
  }

  #endFlow(slot: number): void {
    this.#wheel.unlink(slot);
    this.endpoints.release(this.table.peer[slot]!);
    this.table.remove(slot);
  }

  tick(now: number): void {
    this.#wheel.advance(this.#advanceTime(now), this.#onDue);
  }

  readonly #onDue = (slot: number, tick: number): void => {
    const due = dueOrExpired(this.table, slot, tick, this.#expiry);
    if (due >= 0) {
      this.#wheel.schedule(slot, due);
      return;
    }
    if (due === Expired.free) return;
    if (due === Expired.halfOpen) this.stats.expiredHalfOpen++;
    else if (due === Expired.idle) this.stats.expiredIdle++;
    else this.stats.expiredLifetime++;
    this.#endFlow(slot);
  };

  lookup(address: string, port: number): { state: string; transceiverId: number; popId: number } | null {
    const ip = ipv4Of(address);
    let slot = -1;
    if (ip >= 0) slot = this.table.find4(ip, port);
    else if (ipv6Into(address, this.#ip6)) slot = this.table.find6(v6Key(this.#ip6, port));
    if (slot < 0) return null;
    const t = this.table;
    return {
      state: t.state[slot] === FlowState.halfOpen ? "half-open" : "answered",
      transceiverId: t.transceiver[slot]!,
      popId: t.pop[slot]!,
    };
  }
}
