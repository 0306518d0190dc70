// The link emulator's tunnels: a symmetric, address-preserving path between the programs of two
// namespaces (the clusters' transceivers and their conference sockets). Unlike a front, where the
// target sees the peer at a "seen as" address but the peer sees replies from the front, a tunnel
// gives every program ONE address both ways: the far program at `aliasIp:port` (a local alias in
// this namespace) is where this side sends to and what it sees the far program's datagrams come
// from. Between namespaces the datagram travels from `bindIp:localPort` to `remoteIp:remotePort`
// (the far emulator's tunnel sockets), so ports alone say who is who on both ends. Only the
// outgoing direction is emulated here (delay, jitter, loss); the far emulator emulates the other.
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { performance } from "node:perf_hooks";
import { FAR_FUTURE, Link, type LinkParams, type LinkStats } from "./core/link.ts";
import { seededRandom } from "./core/random.ts";

export interface TunnelConfig {
  /** Label for stats (e.g. "fra=>iad conference"). */
  name: string;
  /** Where this namespace's programs are bound (e.g. 127.0.0.1). */
  local: string;
  /** Their ports: each gets a tunnel socket on bindIp with the same port. */
  ports: number[];
  /** This namespace's fabric address. */
  bindIp: string;
  /** The far namespace's fabric address (its emulator's tunnel sockets). */
  remoteIp: string;
  /** The far programs' address as this namespace sees it (a local alias). */
  aliasIp: string;
  remotePorts: number[];
  /** This side to the far side. */
  out: LinkParams;
}

interface Hop {
  /** The tunnel socket of the local program that sent it. */
  from: Socket;
  port: number;
}

interface TunnelState {
  cfg: TunnelConfig;
  link: Link<Buffer, Hop>;
  /** Alias sockets by far port. */
  alias: Map<number, Socket>;
}

/** A wake this far ahead of the due time, since timers fire late (the fronts adapt theirs). */
const EARLY_MS = 1;

export class Tunnels {
  readonly #tunnels: TunnelState[] = [];
  /** Tunnel sockets by local port (one fabric address per emulator). */
  readonly #out = new Map<number, Socket>();
  readonly drops: Record<string, number> = { no_route: 0 };
  #timer: NodeJS.Timeout | null = null;
  #timerAt = FAR_FUTURE;
  #closed = false;

  async start(cfgs: TunnelConfig[], seed: number): Promise<void> {
    const bind = (s: Socket, port: number, host: string): Promise<void> =>
      new Promise((res, rej) => {
        s.once("error", rej);
        s.bind(port, host, () => {
          s.off("error", rej);
          res();
        });
      });
    for (const cfg of cfgs) {
      const t: TunnelState = { cfg, link: new Link(cfg.out, seededRandom(seed++)), alias: new Map() };
      this.#tunnels.push(t);
      for (const port of cfg.ports)
        if (!this.#out.has(port)) {
          const s = createSocket({ type: "udp4", recvBufferSize: 1 << 20 });
          await bind(s, port, cfg.bindIp);
          s.on("message", (msg, from) => this.#fromFar(port, msg, from));
          s.on("error", () => {});
          this.#out.set(port, s);
        }
      for (const far of cfg.remotePorts) {
        const s = createSocket({ type: "udp4", recvBufferSize: 1 << 20 });
        await bind(s, far, cfg.aliasIp);
        s.on("message", (msg, from) => this.#fromLocal(t, far, msg, from));
        s.on("error", () => {});
        t.alias.set(far, s);
      }
    }
  }

  /** A local program sent to a far program's alias: over the link, from its own tunnel socket. */
  #fromLocal(t: TunnelState, far: number, msg: Buffer, from: RemoteInfo): void {
    const out = from.address === t.cfg.local ? this.#out.get(from.port) : undefined;
    if (out === undefined || !t.cfg.ports.includes(from.port)) {
      this.drops.no_route!++;
      return;
    }
    if (t.link.offer(performance.now(), msg, { from: out, port: far }) === "queued")
      this.#arm(t.link.nextAt());
  }

  /** The far emulator delivered (already delayed there): to the local program, from the alias. */
  #fromFar(localPort: number, msg: Buffer, from: RemoteInfo): void {
    for (const t of this.#tunnels) {
      if (t.cfg.remoteIp !== from.address) continue;
      const alias = t.alias.get(from.port);
      if (alias === undefined || !t.cfg.ports.includes(localPort)) break;
      alias.send(msg, localPort, t.cfg.local);
      return;
    }
    this.drops.no_route!++;
  }

  #arm(at: number): void {
    if (this.#closed || at >= this.#timerAt) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#release(), Math.max(0, at - performance.now() - EARLY_MS));
  }

  #release(): void {
    this.#timer = null;
    this.#timerAt = FAR_FUTURE;
    const now = performance.now() + EARLY_MS;
    let next = FAR_FUTURE;
    for (const t of this.#tunnels) {
      for (;;) {
        const hop = t.link.headTag();
        const msg = t.link.take(now);
        if (msg === undefined || hop === undefined) break;
        hop.from.send(msg, hop.port, t.cfg.remoteIp);
      }
      const at = t.link.nextAt();
      if (at < next) next = at;
    }
    if (next !== FAR_FUTURE) this.#arm(next);
  }

  stats(): Record<string, LinkStats> {
    const out: Record<string, LinkStats> = {};
    for (const t of this.#tunnels) out[t.cfg.name] = { ...t.link.stats };
    return out;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    for (const s of this.#out.values()) s.close();
    for (const t of this.#tunnels) for (const s of t.alias.values()) s.close();
  }
}
