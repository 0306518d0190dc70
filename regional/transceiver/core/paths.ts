// One session's client paths, sans-IO (RFC 8445 §7.2.5.3, RFC 7675): an address seen in an
// authenticated Binding request is only a candidate. The transceiver sends its own check there;
// only an authenticated answer to it (which a spoofed source cannot give) validates the path, and
// only a validated path may become the media path. Until then the client's requests are held, not
// given to the ICE agent, so nothing but our one check goes to an address that never proved it
// can receive. Transaction ids are remembered, so a captured check replayed from elsewhere is
// dropped at once. Bounded: `maxPaths` per session, candidates expire after `candidateTtlMs`,
// idle validated spares after `validatedIdleMs`. Time comes in as `now`, randomness as `newTxid`.
import { type ReplayLimits, TransactionCache } from "./replay.ts";

export interface PathLimits {
  /** Paths (candidate or validated) a session holds at once. */
  maxPaths: number;
  /** A candidate that never answered our check is released after this (ms). */
  candidateTtlMs: number;
  /** Checks to one candidate, at most one per `checkIntervalMs` (triggered by its requests). */
  maxChecks: number;
  checkIntervalMs: number;
  /** Requests held per candidate until it validates (then handed to the ICE agent in order). */
  maxHeld: number;
  /** The media path moves to a validated path without USE-CANDIDATE once the old one is this quiet. */
  quietMs: number;
  /** A validated path that is not the media path is released when idle this long (ms). */
  validatedIdleMs: number;
  replay: ReplayLimits;
}

export const DEFAULT_PATH_LIMITS: PathLimits = {
  maxPaths: 4,
  candidateTtlMs: 3_000,
  maxChecks: 3,
  checkIntervalMs: 200,
  maxHeld: 4,
  quietMs: 2_000,
  validatedIdleMs: 30_000,
  replay: { capacity: 256, windowMs: 60_000 },
};

/** What to do with an authenticated Binding request. */
export type RequestVerdict = "deliver" | "hold" | "stun_replay" | "path_cap";

export type PathEvent<K> =
  /** Send our Binding request with this transaction id to the path. */
  | { type: "check"; key: K; txid: Uint8Array }
  /** Our check was answered: tell the relays, then hand the held requests to the ICE agent. */
  | { type: "validated"; key: K; held: Uint8Array[] }
  /** The media path is now `key`. */
  | { type: "selected"; key: K; previous: K | undefined }
  /** The path left the book (expired or taken by another session). */
  | { type: "released"; key: K; validated: boolean };

class Entry<K> {
  readonly key: K;
  readonly created: number;
  validated = false;
  /** A held request carried USE-CANDIDATE: select as soon as it validates. */
  nominate = false;
  lastSeen: number;
  readonly txid: Uint8Array;
  checks = 0;
  lastCheckAt = Number.NEGATIVE_INFINITY;
  held: Uint8Array[] = [];
  constructor(key: K, now: number, txid: Uint8Array) {
    this.key = key;
    this.created = now;
    this.lastSeen = now;
    this.txid = txid;
  }
}

export interface PathStats {
  checks: number;
  validated: number;
  expired: number;
  replays: number;
  capped: number;
  moves: number;
}

export class PathBook<K> {
  readonly events: PathEvent<K>[] = [];
  readonly stats: PathStats = { checks: 0, validated: 0, expired: 0, replays: 0, capped: 0, moves: 0 };
  readonly #limits: PathLimits;
  readonly #newTxid: () => Uint8Array;
  readonly #paths = new Map<K, Entry<K>>();
  readonly #replays: TransactionCache<K>;
  #selected: K | undefined;

  constructor(limits: PathLimits, newTxid: () => Uint8Array) {
    this.#limits = limits;
    this.#newTxid = newTxid;
    this.#replays = new TransactionCache(limits.replay);
  }

  get limits(): PathLimits {
    return this.#limits;
  }
  get selected(): K | undefined {
    return this.#selected;
  }
  get size(): number {
    return this.#paths.size;
  }
  get candidates(): number {
    let n = 0;
    for (const e of this.#paths.values()) if (!e.validated) n++;
    return n;
  }
  get rememberedTransactions(): number {
    return this.#replays.size;
  }
  state(key: K): "candidate" | "validated" | undefined {
    const e = this.#paths.get(key);
    return e === undefined ? undefined : e.validated ? "validated" : "candidate";
  }
  isValidated(key: K): boolean {
    return this.#paths.get(key)?.validated === true;
  }

  /** Cheap screen before MESSAGE-INTEGRITY: `txid` was used from another address recently. */
  isReplay(now: number, txid: string, key: K): boolean {
    if (!this.#replays.isReplay(now, txid, key)) return false;
    this.stats.replays++;
    return true;
  }

  /**
   * An authenticated Binding request from `key`. `selectedLastSeen` is when the media path last
   * carried anything (the quiet rule). Events may be queued (drain `events`).
   */
  request(
    now: number,
    key: K,
    txid: string,
    useCandidate: boolean,
    payload: Uint8Array,
    selectedLastSeen: number,
  ): RequestVerdict {
    if (this.isReplay(now, txid, key)) return "stun_replay";
    let e = this.#paths.get(key);
    if (e === undefined) {
      if (this.#paths.size >= this.#limits.maxPaths) this.tick(now);
      if (this.#paths.size >= this.#limits.maxPaths) {
        this.stats.capped++;
        return "path_cap";
      }
      e = new Entry(key, now, this.#newTxid());
      this.#paths.set(key, e);
    }
    this.#replays.remember(now, txid, key);
    e.lastSeen = now;
    if (e.validated) {
      if (key !== this.#selected && (useCandidate || this.#quiet(now, selectedLastSeen))) this.#select(key);
      return "deliver";
    }
    if (useCandidate) e.nominate = true;
    if (e.held.length >= this.#limits.maxHeld) e.held.shift();
    e.held.push(payload);
    const l = this.#limits;
    if (e.checks < l.maxChecks && now - e.lastCheckAt >= l.checkIntervalMs) {
      e.checks++;
      e.lastCheckAt = now;
      this.stats.checks++;
      this.events.push({ type: "check", key, txid: e.txid });
    }
    return "hold";
  }

  /** True when a success response from `key` with the transaction id at buf[off..off+12] is ours. */
  awaits(key: K, buf: Uint8Array, off: number): boolean {
    const e = this.#paths.get(key);
    if (e === undefined || e.checks === 0) return false;
    const t = e.txid;
    for (let i = 0; i < 12; i++) if (buf[off + i] !== t[i]) return false;
    return true;
  }

  /** Our check to `key` was answered with valid MESSAGE-INTEGRITY (the caller checked both). */
  validate(now: number, key: K, selectedLastSeen: number): void {
    const e = this.#paths.get(key);
    if (e === undefined || e.validated) return;
    e.validated = true;
    e.lastSeen = now;
    this.stats.validated++;
    const held = e.held;
    e.held = [];
    this.events.push({ type: "validated", key, held });
    if (this.#selected === undefined || e.nominate || this.#quiet(now, selectedLastSeen)) this.#select(key);
  }

  /**
   * Any other datagram from `key` (not a request, not our answer): true if it may pass (the path
   * is validated). A validated spare takes over the media path once the old one is quiet.
   */
  datagram(now: number, key: K, selectedLastSeen: number): boolean {
    const e = this.#paths.get(key);
    if (e === undefined || !e.validated) return false;
    e.lastSeen = now;
    if (key !== this.#selected && this.#quiet(now, selectedLastSeen)) this.#select(key);
    return true;
  }

  #quiet(now: number, selectedLastSeen: number): boolean {
    return this.#selected === undefined || now - selectedLastSeen >= this.#limits.quietMs;
  }

  #select(key: K): void {
    const previous = this.#selected;
    this.#selected = key;
    if (previous !== undefined) this.stats.moves++;
    this.events.push({ type: "selected", key, previous });
  }

  /** Sets the media path without a move (the ICE agent nominated a validated path itself). */
  adopt(key: K): void {
    if (this.#paths.get(key)?.validated === true) this.#selected = key;
  }

  /** Releases candidates past their TTL and idle validated spares. */
  tick(now: number): void {
    const l = this.#limits;
    for (const e of this.#paths.values()) {
      if (e.key === this.#selected) continue;
      const old = e.validated ? now - e.lastSeen >= l.validatedIdleMs : now - e.created >= l.candidateTtlMs;
      if (!old) continue;
      this.stats.expired++;
      this.#remove(e);
    }
  }

  /** The path was taken by another session or closed under us. */
  release(key: K): void {
    const e = this.#paths.get(key);
    if (e !== undefined) this.#remove(e);
  }

  #remove(e: Entry<K>): void {
    this.#paths.delete(e.key);
    if (this.#selected === e.key) this.#selected = undefined;
    this.events.push({ type: "released", key: e.key, validated: e.validated });
  }

  /** Forgets everything (session ended). */
  clear(): void {
    this.#paths.clear();
    this.#replays.clear();
    this.#selected = undefined;
    this.events.length = 0;
  }
}
