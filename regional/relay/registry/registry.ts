// Transceiver id -> backbone address, read synchronously on the data path. Implementations: a
// static map (RELAY_TRANSCEIVERS), in-memory heartbeats, and Redis heartbeats
// (shared/membership.ts), all run through test/relay/contract-registry.test.ts.
import type { TransceiverHeartbeat } from "../../../shared/membership.ts";
import { parseHostPort } from "../../../shared/topology/address.ts";
import type { TransceiverLookup } from "../core/pop-engine.ts";

export interface TransceiverRegistry extends TransceiverLookup {
  has(transceiverId: number): boolean;
  /** Backbone "ip:port" of a transceiver. */
  get(transceiverId: number): string | undefined;
  /** Snapshot of every known transceiver. */
  entries(): ReadonlyMap<number, string>;
  /** Called after the set of transceivers or an address changed. */
  onChange(listener: () => void): void;
  /** Brings the view up to date (a no-op for static maps). */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

export class RegistryConfigError extends Error {
  override readonly name = "RegistryConfigError";
}

/** Parses "1=127.0.0.1:6101,2=127.0.0.1:6102". `what` names the variable in errors. */
export function parseStaticRegistry(text: string, what: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const [i, part] of text.split(",").entries()) {
    const m = /^\s*(\d{1,5})\s*=\s*(\S+)\s*$/.exec(part);
    if (!m)
      throw new RegistryConfigError(
        `${what}[${i}]: expected "<transceiver id>=<ip>:<port>", got ${JSON.stringify(part)}`,
      );
    const id = Number(m[1]);
    if (id < 1 || id > 65535)
      throw new RegistryConfigError(`${what}[${i}]: transceiver id ${id} is outside 1-65535`);
    const hp = parseHostPort(m[2]!);
    if (typeof hp === "string") throw new RegistryConfigError(`${what}[${i}]: ${hp}`);
    if (out.has(id)) throw new RegistryConfigError(`${what}[${i}]: transceiver id ${id} is repeated`);
    out.set(id, m[2]!);
  }
  return out;
}

/** The view every registry serves from, and its change listeners: implementations `publish`. */
export abstract class PublishedRegistry {
  readonly #listeners: (() => void)[] = [];
  #view = new Map<number, string>();

  has(id: number): boolean {
    return this.#view.has(id);
  }
  get(id: number): string | undefined {
    return this.#view.get(id);
  }
  entries(): ReadonlyMap<number, string> {
    return this.#view;
  }
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Replaces the view; tells the listeners when an id or an address changed. */
  protected publish(next: Map<number, string>): void {
    const changed = next.size !== this.#view.size || [...next].some(([id, a]) => this.#view.get(id) !== a);
    this.#view = next;
    if (changed) for (const l of this.#listeners) l();
  }

  protected dropListeners(): void {
    this.#listeners.length = 0;
  }
}

/**
 * In-memory registry: fixed entries (static configuration) plus heartbeats that live
 * `HEARTBEAT_TTL_MS` (embedded deployments, tests). `clock` is wall time in ms.
 */
export class MemoryRegistry extends PublishedRegistry implements TransceiverRegistry {
  readonly #fixed: Map<number, string>;
  readonly #beats = new Map<number, { backbone: string; expires: number }>();
  readonly #clusterId: number;
  readonly #ttlMs: number;
  readonly #clock: () => number;

  constructor(
    clusterId: number,
    fixed: Map<number, string> = new Map(),
    ttlMs = 6_000,
    clock: () => number = Date.now,
  ) {
    super();
    this.#clusterId = clusterId;
    this.#fixed = fixed;
    this.#ttlMs = ttlMs;
    this.#clock = clock;
    this.#rebuild();
  }

  announce(hb: TransceiverHeartbeat): void {
    if (hb.clusterId !== this.#clusterId) return;
    this.#beats.set(hb.transceiverId, { backbone: hb.backbone, expires: this.#clock() + this.#ttlMs });
  }

  withdraw(transceiverId: number): void {
    this.#beats.delete(transceiverId);
  }

  async refresh(): Promise<void> {
    this.#rebuild();
  }

  #rebuild(): void {
    const now = this.#clock();
    const next = new Map(this.#fixed);
    for (const [id, b] of this.#beats) {
      if (b.expires <= now) this.#beats.delete(id);
      else next.set(id, b.backbone);
    }
    this.publish(next);
  }

  async close(): Promise<void> {
    this.dropListeners();
  }
}
