// The flow timer policy both engines share: half-open flows live `halfOpen` ticks from creation;
// validated ones until `idle` ticks after the last datagram either way, and never beyond `life`
// ticks from creation. Evaluated lazily when the timing wheel visits a slot.
import type { FlowTable } from "./flow-table.ts";
import { FlowState } from "./types.ts";

export interface ExpiryTicks {
  halfOpen: number;
  idle: number;
  life: number;
}

/** Negative results of `dueOrExpired`: why the flow has to go now. */
export const Expired = { halfOpen: -1, idle: -2, lifetime: -3, free: -4 } as const;

/** The tick the flow in `slot` is next due at, or an `Expired` reason (negative) at `tick`. */
export function dueOrExpired(t: FlowTable, slot: number, tick: number, x: ExpiryTicks): number {
  const state = t.state[slot];
  if (state === FlowState.halfOpen) {
    const due = t.created[slot]! + x.halfOpen;
    return due <= tick ? Expired.halfOpen : due;
  }
  if (state !== FlowState.validated) return Expired.free;
  const lifeDue = t.created[slot]! + x.life;
  if (lifeDue <= tick) return Expired.lifetime;
  const idleDue = t.lastSeen[slot]! + x.idle;
  if (idleDue <= tick) return Expired.idle;
  return Math.min(idleDue, lifeDue);
}

/** Monotonic engine time: `now` in ms as passed in, `tick` in wheel ticks since the origin. */
export class EngineClock {
  readonly #epoch: number;
  readonly tickMs: number;
  now: number;
  tick = 0;

  constructor(origin: number, tickMs: number) {
    this.#epoch = origin;
    this.now = origin;
    this.tickMs = tickMs;
  }

  /** Moves time forward (never back) and returns the current tick. */
  advance(now: number): number {
    if (now > this.now) {
      this.now = now;
      this.tick = Math.floor((now - this.#epoch) / this.tickMs);
    }
    return this.tick;
  }
}
