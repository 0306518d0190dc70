// Flow timers the relay tests share: one set for the sans-IO engines on virtual time (steps of
// 100 ms, nothing waits), one for relays on loopback sockets, short so that expiry is seen soon.
import type { FlowTimers } from "../../regional/relay/core/timers.ts";

export const VIRTUAL_TIMERS: FlowTimers = {
  tickMs: 100,
  halfOpenMs: 2_000,
  idleMs: 40_000,
  maxLifetimeMs: 600_000,
  mirrorRefreshMs: 10_000,
};

export const FAST_TIMERS: FlowTimers = {
  tickMs: 20,
  halfOpenMs: 300,
  idleMs: 600,
  maxLifetimeMs: 60_000,
  mirrorRefreshMs: 200,
};
