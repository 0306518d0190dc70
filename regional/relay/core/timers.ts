// Flow timer policy shared by both roles, in milliseconds; the engines convert to wheel ticks.

export interface FlowTimers {
  /** Wheel tick length. Timers fire up to one tick late. */
  tickMs: number;
  /** A flow whose client address the transceiver has not validated yet (no pathValidated). */
  halfOpenMs: number;
  /** A validated flow with no traffic either way (must exceed RFC 7675's 30 s consent). */
  idleMs: number;
  /** Hard limit on a flow's life, validated or not. */
  maxLifetimeMs: number;
  /** Redis mirror TTL refresh period for active validated flows (POP with a flow store). */
  mirrorRefreshMs: number;
}

export const DEFAULT_TIMERS: FlowTimers = {
  tickMs: 250,
  halfOpenMs: 5_000,
  idleMs: 60_000,
  maxLifetimeMs: 65 * 60_000,
  mirrorRefreshMs: 20_000,
};

/** Wheel ticks for a duration (at least one). */
export function ticks(ms: number, tickMs: number): number {
  return Math.max(1, Math.ceil(ms / tickMs));
}

/** Validates a timer set; returns the problems (empty when fine). */
export function checkTimers(t: FlowTimers): string[] {
  const errors: string[] = [];
  for (const [k, v] of Object.entries(t)) {
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) errors.push(`${k} must be a positive number`);
  }
  if (t.halfOpenMs > t.idleMs) errors.push("halfOpenMs must not exceed idleMs");
  if (t.idleMs > t.maxLifetimeMs) errors.push("idleMs must not exceed maxLifetimeMs");
  return errors;
}
