// Restoring flows a relay does not know (after a restart, or on a sibling behind the same VIP):
// an unknown non-STUN datagram starts one asynchronous lookup per client address, with bounded
// concurrency, a bounded hold queue for datagrams that arrive meanwhile, a deadline, and a
// negative cache so a miss (or an attacker spraying unknown addresses) costs one lookup at most
// per address per `negativeMs`.

export interface RestoreLimits {
  maxConcurrent: number;
  maxHeldPerLookup: number;
  maxHeldTotal: number;
  negativeMs: number;
  negativeEntries: number;
  timeoutMs: number;
}

export const DEFAULT_RESTORE_LIMITS: RestoreLimits = {
  maxConcurrent: 64,
  maxHeldPerLookup: 8,
  maxHeldTotal: 1024,
  negativeMs: 5_000,
  negativeEntries: 65_536,
  timeoutMs: 1_000,
};

export interface PendingLookup {
  readonly id: number;
  readonly key: number | string;
  readonly address: string;
  readonly port: number;
  readonly startedAt: number;
  readonly held: Uint8Array[];
  readonly lens: number[];
}

export type BeginResult = "started" | "held" | "negative" | "busy" | "hold-full";

export class RestoreQueue {
  readonly limits: RestoreLimits;
  readonly #pending = new Map<number | string, PendingLookup>();
  readonly #byId = new Map<number, PendingLookup>();
  /** key -> until (ms). Insertion-ordered, so the oldest entry is evicted first. */
  readonly #negative = new Map<number | string, number>();
  #heldTotal = 0;
  #nextId = 1;

  constructor(limits: RestoreLimits) {
    this.limits = limits;
  }

  get pending(): number {
    return this.#pending.size;
  }

  get heldTotal(): number {
    return this.#heldTotal;
  }

  /** Starts or joins a lookup for `key`, holding the datagram (the buffer is kept, not copied). */
  begin(
    key: number | string,
    address: string,
    port: number,
    buf: Uint8Array,
    len: number,
    now: number,
  ): { result: BeginResult; lookup?: PendingLookup } {
    const neg = this.#negative.get(key);
    if (neg !== undefined) {
      if (neg > now) return { result: "negative" };
      this.#negative.delete(key);
    }
    const l = this.limits;
    let p = this.#pending.get(key);
    if (p === undefined) {
      if (this.#pending.size >= l.maxConcurrent) return { result: "busy" };
      if (this.#heldTotal >= l.maxHeldTotal) return { result: "hold-full" };
      p = { id: this.#nextId++, key, address, port, startedAt: now, held: [buf], lens: [len] };
      this.#pending.set(key, p);
      this.#byId.set(p.id, p);
      this.#heldTotal++;
      return { result: "started", lookup: p };
    }
    if (p.held.length >= l.maxHeldPerLookup || this.#heldTotal >= l.maxHeldTotal)
      return { result: "hold-full" };
    p.held.push(buf);
    p.lens.push(len);
    this.#heldTotal++;
    return { result: "held" };
  }

  /** Ends a lookup; on a miss or an error the address goes into the negative cache. */
  finish(id: number, found: boolean, now: number): PendingLookup | undefined {
    const p = this.#byId.get(id);
    if (p === undefined) return undefined;
    this.#byId.delete(id);
    this.#pending.delete(p.key);
    this.#heldTotal -= p.held.length;
    if (!found) this.#remember(p.key, now);
    return p;
  }

  #remember(key: number | string, now: number): void {
    if (this.#negative.size >= this.limits.negativeEntries) {
      const oldest = this.#negative.keys().next();
      if (!oldest.done) this.#negative.delete(oldest.value);
    }
    this.#negative.set(key, now + this.limits.negativeMs);
  }

  /** Forgets a negative entry (a flow for the address was created another way). */
  clearNegative(key: number | string): void {
    this.#negative.delete(key);
  }

  /** Lookups started before `now - timeoutMs`, to be finished as errors by the caller. */
  overdue(now: number): number[] {
    const ids: number[] = [];
    const limit = now - this.limits.timeoutMs;
    for (const p of this.#byId.values()) if (p.startedAt <= limit) ids.push(p.id);
    return ids;
  }
}
