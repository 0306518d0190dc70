// A hashed timing wheel over flow slots: no per-flow timer objects, O(1) schedule and unlink,
// intrusive doubly linked lists in typed arrays. Due times are in ticks (the engine picks the tick
// length); a slot due further out than one revolution is visited early and simply rescheduled, so
// the engine computes the real deadline on each visit (lazy re-arming: per-packet activity only
// writes a timestamp, it never touches the wheel).

export type DueVisitor = (slot: number, tick: number) => void;

export class TimingWheel {
  readonly #next: Int32Array;
  readonly #prev: Int32Array;
  /** Bucket a slot is linked into, -1 when not scheduled. */
  readonly #bucket: Int32Array;
  readonly #heads: Int32Array;
  readonly #mask: number;
  #tick: number;

  /** `buckets` is rounded up to a power of two. `startTick` is the last tick considered done. */
  constructor(capacity: number, buckets: number, startTick: number) {
    let n = 1;
    while (n < buckets) n <<= 1;
    this.#mask = n - 1;
    this.#heads = new Int32Array(n).fill(-1);
    this.#next = new Int32Array(capacity).fill(-1);
    this.#prev = new Int32Array(capacity).fill(-1);
    this.#bucket = new Int32Array(capacity).fill(-1);
    this.#tick = startTick;
  }

  get tick(): number {
    return this.#tick;
  }

  get buckets(): number {
    return this.#mask + 1;
  }

  isScheduled(slot: number): boolean {
    return this.#bucket[slot]! >= 0;
  }

  /** Links `slot` to be visited at `due` (at the earliest the next tick). Re-scheduling moves it. */
  schedule(slot: number, due: number): void {
    if (this.#bucket[slot]! >= 0) this.unlink(slot);
    const at = due > this.#tick ? due : this.#tick + 1;
    const b = at & this.#mask;
    const head = this.#heads[b]!;
    this.#next[slot] = head;
    this.#prev[slot] = -1;
    if (head >= 0) this.#prev[head] = slot;
    this.#heads[b] = slot;
    this.#bucket[slot] = b;
  }

  unlink(slot: number): void {
    const b = this.#bucket[slot]!;
    if (b < 0) return;
    const n = this.#next[slot]!;
    const p = this.#prev[slot]!;
    if (p >= 0) this.#next[p] = n;
    else this.#heads[b] = n;
    if (n >= 0) this.#prev[n] = p;
    this.#next[slot] = -1;
    this.#prev[slot] = -1;
    this.#bucket[slot] = -1;
  }

  /**
   * Visits every slot whose bucket comes due up to `now` (ticks), in tick order. A visitor may
   * reschedule or unlink only the slot it is given. After a gap longer than one revolution each
   * bucket is visited once, with the tick set so that anything overdue is seen as overdue.
   */
  advance(now: number, visit: DueVisitor): number {
    if (now <= this.#tick) return 0;
    const size = this.#mask + 1;
    if (now - this.#tick > size) this.#tick = now - size;
    let visited = 0;
    while (this.#tick < now) {
      const t = ++this.#tick;
      const b = t & this.#mask;
      let s = this.#heads[b]!;
      this.#heads[b] = -1;
      while (s >= 0) {
        const n = this.#next[s]!;
        this.#next[s] = -1;
        this.#prev[s] = -1;
        this.#bucket[s] = -1;
        if (n >= 0) this.#prev[n] = -1;
        visited++;
        visit(s, t);
        s = n;
      }
    }
    return visited;
  }
}
