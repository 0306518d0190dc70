// Recent STUN transaction ids of one session's authenticated Binding requests, and the client
// address each first came from. A valid check seen again from another address is a replay (a
// retransmission keeps its address), so it is dropped before it costs an HMAC or a path. Bounded
// by count and by age; sans-IO (time comes in as `now`).

export interface ReplayLimits {
  /** Most transaction ids remembered; the oldest is forgotten first. */
  capacity: number;
  /** How long an id is remembered (ms). */
  windowMs: number;
}

/** 12 bytes as a string key (latin1); one small string per Binding request, never per media packet. */
export function txidKey(buf: Uint8Array, off: number): string {
  let s = "";
  for (let i = 0; i < 12; i++) s += String.fromCharCode(buf[off + i]!);
  return s;
}

export class TransactionCache<K> {
  readonly #limits: ReplayLimits;
  readonly #seen = new Map<string, { key: K; at: number }>();

  constructor(limits: ReplayLimits) {
    this.#limits = limits;
  }

  get size(): number {
    return this.#seen.size;
  }

  /** True when `txid` was first used from another address within the window. */
  isReplay(now: number, txid: string, key: K): boolean {
    this.#prune(now);
    const e = this.#seen.get(txid);
    return e !== undefined && e.key !== key;
  }

  /** Remembers an authenticated request's id (a retransmission keeps its first entry). */
  remember(now: number, txid: string, key: K): void {
    if (this.#seen.has(txid)) return;
    this.#seen.set(txid, { key, at: now });
    this.#prune(now);
  }

  #prune(now: number): void {
    const oldest = now - this.#limits.windowMs;
    for (const [id, e] of this.#seen) {
      if (e.at > oldest && this.#seen.size <= this.#limits.capacity) break;
      this.#seen.delete(id);
    }
  }

  clear(): void {
    this.#seen.clear();
  }
}
