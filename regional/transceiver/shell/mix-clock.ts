// The one 20 ms clock of the process, shared by every mixer (not a timer per call): a setTimeout
// chain re-aimed at each deadline from performance.now(), so it does not drift. After a stall it
// runs the missed ticks back to back (at most MAX_CATCH_UP), then re-anchors; the timer runs only
// while a mixer is attached, and is unref'd (it never keeps the process alive on its own).

import { MIX_TICK_MS } from "../core/mix/engine.ts";

export interface MixClockClient {
  onTick(now: number): void;
}

const MAX_CATCH_UP = 5;

export class MixClock {
  /** Ticks run, ticks skipped by re-anchoring after a long stall, client errors caught. */
  readonly counters = { ticks: 0, skipped: 0, errors: 0 };
  readonly #clients: MixClockClient[] = [];
  readonly #now: () => number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #deadline = 0;
  #running = false;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  get size(): number {
    return this.#clients.length;
  }

  add(c: MixClockClient): void {
    if (this.#clients.includes(c)) return;
    this.#clients.push(c);
    if (this.#timer === undefined && !this.#running) {
      this.#deadline = this.#now() + MIX_TICK_MS;
      this.#schedule();
    }
  }

  delete(c: MixClockClient): void {
    const i = this.#clients.indexOf(c);
    if (i >= 0) this.#clients.splice(i, 1);
    if (this.#clients.length === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #schedule(): void {
    const t = setTimeout(this.#run, Math.max(0, this.#deadline - this.#now()));
    t.unref();
    this.#timer = t;
  }

  readonly #run = (): void => {
    this.#timer = undefined;
    this.#running = true;
    let now = this.#now();
    let n = 0;
    while (this.#deadline <= now && n < MAX_CATCH_UP) {
      // Iterate over a stable length: a client may leave during its tick.
      const clients = this.#clients;
      for (let i = clients.length - 1; i >= 0; i--) {
        try {
          clients[i]?.onTick(now);
        } catch {
          this.counters.errors++;
        }
      }
      this.counters.ticks++;
      this.#deadline += MIX_TICK_MS;
      n++;
      now = this.#now();
    }
    if (this.#deadline <= now) {
      const missed = Math.floor((now - this.#deadline) / MIX_TICK_MS) + 1;
      this.counters.skipped += missed;
      this.#deadline += missed * MIX_TICK_MS;
    }
    this.#running = false;
    if (this.#clients.length > 0) this.#schedule();
  };
}

/** The process's clock. */
export const mixClock = new MixClock();
