// One direction of an emulated link, sans-IO: a datagram offered at `now` is lost (Gilbert-Elliott),
// refused (queue full), or queued with a release time of now + delay + jitter. Releases keep FIFO
// order, as a real path mostly does: a packet never leaves before the one queued ahead of it, so
// jitter shows as delay variation, not reordering. Time comes in as an argument (ms, any origin,
// never decreasing); "nothing due" is a far-future time, never null.
import { GilbertElliott, type LossParams, NO_LOSS } from "./loss.ts";
import type { Random } from "./random.ts";

export interface LinkParams {
  /** One-way base delay, ms. */
  delayMs: number;
  /** Jitter: each packet's extra delay is uniform in [-jitterMs, +jitterMs] (clamped at 0 total). */
  jitterMs: number;
  loss: LossParams;
  /** Queue bound (packets held at once); excess is refused and counted. */
  queue: number;
}

export const PERFECT: LinkParams = { delayMs: 0, jitterMs: 0, loss: NO_LOSS, queue: 4096 };

export const FAR_FUTURE = Number.MAX_SAFE_INTEGER;

export type Offer = "queued" | "lost" | "queue_full";

export interface LinkStats {
  offered: number;
  delivered: number;
  lost: number;
  queueFull: number;
}

/** A bounded FIFO of (release time, item, tag), a ring over preallocated arrays. */
export class Link<T, P> {
  readonly stats: LinkStats = { offered: 0, delivered: 0, lost: 0, queueFull: 0 };
  readonly #p: LinkParams;
  readonly #rand: Random;
  readonly #loss: GilbertElliott;
  readonly #at: Float64Array;
  readonly #items: (T | undefined)[];
  readonly #tags: (P | undefined)[];
  #head = 0;
  #size = 0;
  #last = 0;

  constructor(p: LinkParams, rand: Random) {
    this.#p = p;
    this.#rand = rand;
    this.#loss = new GilbertElliott(p.loss, rand);
    this.#at = new Float64Array(p.queue);
    this.#items = new Array<T | undefined>(p.queue).fill(undefined);
    this.#tags = new Array<P | undefined>(p.queue).fill(undefined);
  }

  get size(): number {
    return this.#size;
  }

  /** Offers `item` (with `tag`, e.g. who it is for) at `now`. */
  offer(now: number, item: T, tag: P): Offer {
    this.stats.offered++;
    if (this.#loss.lose()) {
      this.stats.lost++;
      return "lost";
    }
    if (this.#size === this.#p.queue) {
      this.stats.queueFull++;
      return "queue_full";
    }
    const j = this.#p.jitterMs === 0 ? 0 : (this.#rand.next() * 2 - 1) * this.#p.jitterMs;
    let at = now + Math.max(0, this.#p.delayMs + j);
    if (at < this.#last) at = this.#last;
    this.#last = at;
    const tail = (this.#head + this.#size) % this.#p.queue;
    this.#at[tail] = at;
    this.#items[tail] = item;
    this.#tags[tail] = tag;
    this.#size++;
    return "queued";
  }

  /** Release time of the head packet, or FAR_FUTURE when empty. */
  nextAt(): number {
    return this.#size === 0 ? FAR_FUTURE : this.#at[this.#head]!;
  }

  /** Tag of the head item; read it before take(). */
  headTag(): P | undefined {
    return this.#size === 0 ? undefined : this.#tags[this.#head];
  }

  /** The head item if due at `now` (removed), else undefined. Call until undefined. */
  take(now: number): T | undefined {
    if (this.#size === 0 || this.#at[this.#head]! > now) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#tags[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.#p.queue;
    this.#size--;
    this.stats.delivered++;
    return item;
  }
}
