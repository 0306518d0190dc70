// Is each transceiver alive, as the relay sees it? The relay pings every transceiver of its
// registry on the backbone socket (frame type ping; the transceiver echoes a pong) and counts
// anything that arrives from it as a sign of life. Silent for DOWN_AFTER_MS, or a connection
// refused (ICMP port unreachable on the connected socket), and it is down: the engines stop
// routing to it (new flows and frames are dropped) until it is heard again. Time is an argument.
import {
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  FrameType,
  newFrameHeader,
} from "../../../shared/backbone/frame.ts";
import type { TransceiverRegistry } from "./registry.ts";

export const PING_EVERY_MS = 500;
export const DOWN_AFTER_MS = 1_500;
const IDS = 65_536;

export type LivenessChange = { transceiverId: number; up: boolean; reason: string };

export class Liveness {
  readonly #heard = new Float64Array(IDS);
  readonly #pinged = new Float64Array(IDS);
  readonly #known = new Uint8Array(IDS);
  readonly #down = new Uint8Array(IDS);
  /** Transitions since the last `tick` (reported beside the data path, never per packet). */
  readonly #changes: LivenessChange[] = [];
  readonly #pingEveryMs: number;
  readonly #downAfterMs: number;

  constructor(pingEveryMs = PING_EVERY_MS, downAfterMs = DOWN_AFTER_MS) {
    this.#pingEveryMs = pingEveryMs;
    this.#downAfterMs = downAfterMs;
  }

  isDown(id: number): boolean {
    return this.#down[id] === 1;
  }

  /** Anything arrived from transceiver `id` (data path: no allocation unless it comes back). */
  heard(id: number, now: number): void {
    this.#heard[id] = now;
    if (this.#down[id] === 1) {
      this.#down[id] = 0;
      this.#changes.push({ transceiverId: id, up: true, reason: "heard" });
    }
  }

  /** The kernel reported the transceiver's port closed. */
  refused(id: number): void {
    this.#markDown(id, "connection_refused");
  }

  #markDown(id: number, reason: string): void {
    if (this.#down[id] === 1) return;
    this.#down[id] = 1;
    this.#changes.push({ transceiverId: id, up: false, reason });
  }

  /**
   * Once per tick with the registry's ids: starts the clock of new ones, marks silent ones down,
   * and calls `ping` for each one due. Returns the transitions since the last call.
   */
  tick(now: number, ids: Iterable<number>, ping: (id: number) => void): LivenessChange[] {
    for (const id of ids) {
      if (this.#known[id] === 0) {
        this.#known[id] = 1;
        this.#heard[id] = now; // a grace period from first sight
        this.#pinged[id] = now - this.#pingEveryMs; // and a ping at once
      }
      if (now - this.#heard[id]! > this.#downAfterMs) this.#markDown(id, "silent");
      if (now - this.#pinged[id]! >= this.#pingEveryMs) {
        this.#pinged[id] = now;
        ping(id);
      }
    }
    return this.#changes.splice(0);
  }

  /** A transceiver left the registry: forget it (a later one with the same id starts afresh). */
  forget(id: number): void {
    this.#known[id] = 0;
    this.#down[id] = 0;
    this.#pinged[id] = 0;
  }
}

/** A ping frame to transceiver `id` of cluster `clusterId` (the payload is echoed back). */
export function pingFrame(clusterId: number, transceiverId: number): Uint8Array {
  const h = newFrameHeader();
  h.type = FrameType.ping;
  h.clusterId = clusterId;
  h.transceiverId = transceiverId;
  const buf = new Uint8Array(FRAME_HEADER_BYTES + 8);
  encodeFrameHeader(buf, 0, h);
  return buf;
}

/** The registry as the engines see it: a transceiver that is down is not there. */
export class LiveRegistry implements TransceiverRegistry {
  readonly inner: TransceiverRegistry;
  readonly liveness: Liveness;
  constructor(inner: TransceiverRegistry, liveness: Liveness) {
    this.inner = inner;
    this.liveness = liveness;
  }
  has(id: number): boolean {
    return !this.liveness.isDown(id) && this.inner.has(id);
  }
  get(id: number): string | undefined {
    return this.liveness.isDown(id) ? undefined : this.inner.get(id);
  }
  entries(): ReadonlyMap<number, string> {
    return this.inner.entries();
  }
  onChange(listener: () => void): void {
    this.inner.onChange(listener);
  }
  refresh(): Promise<void> {
    return this.inner.refresh();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
