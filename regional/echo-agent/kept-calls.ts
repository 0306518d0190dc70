// The conversations the echo agent keeps for calls that may resume (docs/backend-protocol.md,
// "Resume"): a call whose backend connection closed without a normal `session.ended` (its
// transceiver vanished) is kept by call id until a sibling reattaches with `resumed: true`, or
// until it is too old or crowded out (oldest first). The live connection of each call is known
// too, so a drain move (the new connection attaches before the old one ends) hands the state
// over, and the superseded connection's end or close no longer touches it. Pure: time comes in.

export interface KeepLimits {
  /** Calls kept at most; the oldest is dropped first (0 keeps nothing). */
  maxCalls: number;
  /** A kept call older than this (ms since its connection closed) is gone. */
  maxAgeMs: number;
}

export const DEFAULT_KEEP: KeepLimits = { maxCalls: 1000, maxAgeMs: 10 * 60_000 };
/** The largest limits accepted (config validation). */
export const MAX_KEEP: KeepLimits = { maxCalls: 100_000, maxAgeMs: 24 * 3600_000 };

/**
 * session.ended reasons after which the call is still kept: the transceiver ended it, not the
 * caller, and asked the caller to resume (a drain past its deadline, a stop). Any other reason
 * (hangup, client_closed, consent_lost, …) is the end of the conversation.
 */
export function keptAfterEnd(reason: string): boolean {
  return reason === "drain" || reason === "shutdown";
}

/** A connection's state holder: asked for a copy when its call moves or its socket drops. */
export interface Keeper<S> {
  snapshot(): S;
}

export interface KeptStats {
  /** Calls kept now. */
  kept: number;
  /** Resumed attaches that found their conversation. */
  restored: number;
  /** Resumed attaches that found nothing (never kept, ended, evicted or expired). */
  missed: number;
  evictedFull: number;
  evictedExpired: number;
}

export class KeptCalls<S> {
  readonly limits: KeepLimits;
  // Insertion order is close order, so the oldest entries are at the head.
  readonly #kept = new Map<string, { state: S; at: number }>();
  readonly #live = new Map<string, Keeper<S>>();
  readonly #stats = { restored: 0, missed: 0, evictedFull: 0, evictedExpired: 0 };

  constructor(limits: KeepLimits = DEFAULT_KEEP) {
    const bad = (k: keyof KeepLimits) =>
      !Number.isInteger(limits[k]) || limits[k] < 0 || limits[k] > MAX_KEEP[k];
    for (const k of ["maxCalls", "maxAgeMs"] as const)
      if (bad(k))
        throw new RangeError(`keep limits: ${k} must be an integer 0-${MAX_KEEP[k]}, got ${limits[k]}`);
    this.limits = { ...limits };
  }

  get stats(): KeptStats {
    return { kept: this.#kept.size, ...this.#stats };
  }

  /**
   * `owner` starts `callId`. A resumed start gets the kept state, or the live connection's (a
   * drain move), or undefined; a new call discards anything kept under its id.
   */
  attach(owner: Keeper<S>, callId: string, resumed: boolean, nowMs: number): S | undefined {
    this.#sweep(nowMs);
    let state: S | undefined;
    const kept = this.#kept.get(callId);
    this.#kept.delete(callId);
    if (resumed) {
      const prev = this.#live.get(callId);
      state = kept?.state ?? (prev !== undefined && prev !== owner ? prev.snapshot() : undefined);
      if (state === undefined) this.#stats.missed++;
      else this.#stats.restored++;
    }
    this.#live.set(callId, owner);
    return state;
  }

  /** `session.ended` on `owner`'s connection: nothing is kept, unless the call moved on. */
  end(owner: Keeper<S>, callId: string): void {
    if (this.#live.get(callId) !== owner) return;
    this.#live.delete(callId);
    this.#kept.delete(callId);
  }

  /** `owner`'s connection closed: its call is kept if it still owned it and did not end. */
  close(owner: Keeper<S>, callId: string, nowMs: number): void {
    if (this.#live.get(callId) !== owner) return;
    this.#live.delete(callId);
    this.#sweep(nowMs);
    if (this.limits.maxCalls === 0) return;
    this.#kept.set(callId, { state: owner.snapshot(), at: nowMs });
    while (this.#kept.size > this.limits.maxCalls) {
      this.#kept.delete(this.#kept.keys().next().value!);
      this.#stats.evictedFull++;
    }
  }

  /** Whether `callId` is kept (and not expired at `nowMs`). */
  has(callId: string, nowMs: number): boolean {
    const k = this.#kept.get(callId);
    return k !== undefined && nowMs - k.at < this.limits.maxAgeMs;
  }

  // Expired entries leave from the head; between calls they only cost memory within maxCalls.
  #sweep(nowMs: number): void {
    for (const [id, k] of this.#kept) {
      if (nowMs - k.at < this.limits.maxAgeMs) break;
      this.#kept.delete(id);
      this.#stats.evictedExpired++;
    }
  }
}
