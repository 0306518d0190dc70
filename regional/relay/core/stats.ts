// Counters an engine keeps for itself (plain numbers in typed arrays; the shell exports them to
// Prometheus at scrape time, so the per-packet cost is one array increment).
import { DROP_NAMES } from "./types.ts";

export const KINDS = 5;

export class EngineStats {
  /** [direction * KINDS + kind] forwarded datagrams. */
  readonly packets = new Float64Array(2 * KINDS);
  readonly bytes = new Float64Array(2 * KINDS);
  readonly drops = new Float64Array(DROP_NAMES.length);
  flowsCreated = 0;
  expiredHalfOpen = 0;
  expiredIdle = 0;
  expiredLifetime = 0;
  flowsClosed = 0;
  flowsReplaced = 0;
  /** Flows the transceiver validated (pathValidated frames that opened a half-open flow). */
  flowsValidated = 0;
  flowsRestored = 0;
  lookups = 0;
  lookupHits = 0;
  lookupMisses = 0;
  lookupErrors = 0;
  /** Cluster relay: frames sent back by POP id because the flow was unknown here. */
  fallbackToPop = 0;

  dropCount(reason: number): number {
    return this.drops[reason] ?? 0;
  }
}

/** Receives the two STUN-matched latency samples (rare: a few per flow per minute). */
export interface RttSink {
  /** kind: RttKind.backbone or RttKind.firstHop. */
  rtt(kind: number, clusterId: number, ms: number): void;
}
