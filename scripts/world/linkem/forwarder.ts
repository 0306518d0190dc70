// The link emulator's UDP shell: each front listens on one address and forwards every datagram to
// one target through the link of the route its source matches, after the link's delay, jitter and
// loss; replies come back through the route's reverse link and leave from the front's address.
// Each peer (source ip:port) gets its own upstream socket bound to the route's bindIp and, when
// free, the peer's own port, so the target sees one stable address per peer whichever front the
// peer's packets came through (what anycast gives a real POP). One timer serves every link.
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { performance } from "node:perf_hooks";
import { type FrontConfig, inCidr, ipv4ToInt, type LinkemConfig, type RouteConfig } from "./config.ts";
import { FAR_FUTURE, Link, type Offer } from "./core/link.ts";
import { seededRandom } from "./core/random.ts";

/**
 * Timers fire late, more so on a busy host: the shell wakes `early` ms before a packet is due and
 * releases what is due within that window. `early` follows the measured send error (actual minus
 * due time, averaged per wake) so that packets leave on time on average; bounded to 0-4 ms.
 */
const EARLY_START_MS = 0.6;
const EARLY_MAX_MS = 4;
const EARLY_GAIN = 0.2;
const SWEEP_MS = 1_000;

interface Peer {
  address: string;
  port: number;
  front: Front;
  route: RouteState;
  up: Socket;
  lastSeen: number;
}

interface RouteState {
  cfg: RouteConfig;
  up: Link<Buffer, Peer>;
  down: Link<Buffer, Peer>;
}

interface Front {
  cfg: FrontConfig;
  socket: Socket;
  routes: RouteState[];
}

export interface LinkemStats {
  peers: number;
  drops: Record<string, number>;
  routes: Record<string, { up: Link<Buffer, Peer>["stats"]; down: Link<Buffer, Peer>["stats"] }>;
}

/**
 * Optional observer of every datagram a link is offered and every one it delivers (a measurement
 * at the emulator itself, e.g. the cascade's repair figures): called synchronously on the
 * datagram path, so it must be cheap and must not keep `msg` beyond the call without copying.
 */
export interface LinkemTap {
  offered(route: string, direction: "up" | "down", msg: Buffer, now: number, result: Offer): void;
  delivered(route: string, direction: "up" | "down", msg: Buffer, now: number): void;
}

export class Linkem {
  readonly #cfg: LinkemConfig;
  readonly #tap: LinkemTap | null;
  readonly #fronts: Front[] = [];
  /** Peers by address, then port: lookups on the datagram path build no key string. */
  readonly #peers = new Map<string, Map<number, Peer>>();
  #peerCount = 0;
  readonly #links: Link<Buffer, Peer>[] = [];
  readonly #directions: ("up" | "down")[] = [];
  readonly #names: string[] = [];
  readonly drops: Record<string, number> = { no_route: 0, peer_table_full: 0, send_error: 0 };
  #timer: NodeJS.Timeout | null = null;
  #timerAt = FAR_FUTURE;
  #early = EARLY_START_MS;
  #sweep: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(cfg: LinkemConfig, tap: LinkemTap | null = null) {
    this.#cfg = cfg;
    this.#tap = tap;
  }

  async start(): Promise<void> {
    let seed = this.#cfg.seed;
    for (const fc of this.#cfg.fronts) {
      const socket = createSocket({ type: "udp4", recvBufferSize: 1 << 21, sendBufferSize: 1 << 21 });
      await new Promise<void>((res, rej) => {
        socket.once("error", rej);
        socket.bind(fc.listen.port, fc.listen.host, () => {
          socket.off("error", rej);
          res();
        });
      });
      const routes = fc.routes.map((rc) => {
        const r: RouteState = {
          cfg: rc,
          up: new Link(rc.up, seededRandom(seed++)),
          down: new Link(rc.down, seededRandom(seed++)),
        };
        this.#links.push(r.up, r.down);
        this.#directions.push("up", "down");
        this.#names.push(rc.name, rc.name);
        return r;
      });
      const front: Front = { cfg: fc, socket, routes };
      socket.on("message", (msg, from) => this.#fromPeer(front, msg, from));
      socket.on("error", () => this.drops.send_error!++);
      this.#fronts.push(front);
    }
    this.#sweep = setInterval(() => this.#expire(), SWEEP_MS);
    this.#sweep.unref();
  }

  #fromPeer(front: Front, msg: Buffer, from: RemoteInfo): void {
    let peer = this.#get(from.address, from.port);
    if (peer === undefined || peer.front !== front) {
      const made = this.#newPeer(front, from);
      if (made === null) return;
      peer = made;
    }
    const now = performance.now();
    peer.lastSeen = now;
    const r = peer.route.up.offer(now, msg, peer);
    if (this.#tap !== null) this.#tap.offered(peer.route.cfg.name, "up", msg, now, r);
    if (r === "queued") this.#arm(peer.route.up.nextAt());
  }

  #get(address: string, port: number): Peer | undefined {
    return this.#peers.get(address)?.get(port);
  }

  #newPeer(front: Front, from: RemoteInfo): Peer | null {
    const ip = ipv4ToInt(from.address);
    const route = ip === null ? undefined : front.routes.find((r) => inCidr(ip, r.cfg.from));
    if (route === undefined) {
      this.drops.no_route!++;
      return null;
    }
    const old = this.#get(from.address, from.port);
    if (old) this.#forget(old);
    if (this.#peerCount >= this.#cfg.maxPeers) {
      this.drops.peer_table_full!++;
      return null;
    }
    const up = createSocket({ type: "udp4", recvBufferSize: 1 << 20 });
    const peer: Peer = { address: from.address, port: from.port, front, route, up, lastSeen: 0 };
    // The peer's own port keeps its address stable across fronts; if taken, any port will do.
    up.once("error", () => {
      if (this.#get(peer.address, peer.port) !== peer) return;
      up.close();
      peer.up = createSocket({ type: "udp4", recvBufferSize: 1 << 20 });
      this.#wire(peer);
      peer.up.bind(0, route.cfg.bindIp);
    });
    this.#wire(peer);
    up.bind(from.port, route.cfg.bindIp);
    let byPort = this.#peers.get(from.address);
    if (byPort === undefined) {
      byPort = new Map();
      this.#peers.set(from.address, byPort);
    }
    byPort.set(from.port, peer);
    this.#peerCount++;
    return peer;
  }

  #wire(peer: Peer): void {
    const s = peer.up;
    s.on("message", (msg, from) => {
      const t = peer.front.cfg.target;
      if (from.port !== t.port || from.address !== t.host) return;
      const now = performance.now();
      const r = peer.route.down.offer(now, msg, peer);
      if (this.#tap !== null) this.#tap.offered(peer.route.cfg.name, "down", msg, now, r);
      if (r === "queued") this.#arm(peer.route.down.nextAt());
    });
    s.on("error", () => {});
  }

  #arm(at: number): void {
    if (this.#closed || at >= this.#timerAt) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#release(), Math.max(0, at - performance.now() - this.#early));
  }

  #release(): void {
    this.#timer = null;
    this.#timerAt = FAR_FUTURE;
    const t = performance.now();
    const now = t + this.#early;
    let next = FAR_FUTURE;
    let err = 0;
    let sent = 0;
    for (let i = 0; i < this.#links.length; i++) {
      const link = this.#links[i]!;
      const up = this.#directions[i] === "up";
      for (;;) {
        const due = link.nextAt();
        const peer = link.headTag();
        const msg = link.take(now);
        if (msg === undefined || peer === undefined) break;
        err += t - due;
        sent++;
        if (this.#get(peer.address, peer.port) !== peer) continue;
        if (up) peer.up.send(msg, peer.front.cfg.target.port, peer.front.cfg.target.host);
        else peer.front.socket.send(msg, peer.port, peer.address);
        if (this.#tap !== null) this.#tap.delivered(this.#names[i]!, this.#directions[i]!, msg, t);
      }
      const at = link.nextAt();
      if (at < next) next = at;
    }
    if (sent > 0) this.#early = Math.min(EARLY_MAX_MS, Math.max(0, this.#early + (EARLY_GAIN * err) / sent));
    if (next !== FAR_FUTURE) this.#arm(next);
  }

  #expire(): void {
    const cutoff = performance.now() - this.#cfg.idleMs;
    for (const byPort of [...this.#peers.values()])
      for (const p of [...byPort.values()]) if (p.lastSeen < cutoff) this.#forget(p);
  }

  #forget(p: Peer): void {
    const byPort = this.#peers.get(p.address);
    if (byPort?.get(p.port) !== p) return;
    byPort.delete(p.port);
    if (byPort.size === 0) this.#peers.delete(p.address);
    this.#peerCount--;
    try {
      p.up.close();
    } catch {}
  }

  stats(): LinkemStats {
    const routes: LinkemStats["routes"] = {};
    for (const f of this.#fronts)
      for (const r of f.routes) routes[r.cfg.name] = { up: { ...r.up.stats }, down: { ...r.down.stats } };
    return { peers: this.#peerCount, drops: { ...this.drops }, routes };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#sweep) clearInterval(this.#sweep);
    for (const byPort of [...this.#peers.values()]) for (const p of [...byPort.values()]) this.#forget(p);
    for (const f of this.#fronts) f.socket.close();
  }
}
