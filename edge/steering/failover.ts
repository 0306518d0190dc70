// Tries clusters in the plan's order: bounded attempts, one overall deadline, each attempt with
// its own timeout cut to what the deadline leaves. The attempt function says whether its answer
// is final (any answer a client should see, including 4xx) or worth trying the next cluster for
// (refused, timed out, 503 full/draining, 5xx).
import type { ClusterSpec } from "../../shared/topology/schema.ts";

export type FailureReason = "unreachable" | "timeout" | "full" | "error";

export type AttemptOutcome<T> =
  | { kind: "done"; value: T }
  | { kind: "retry"; reason: FailureReason; retryAfterS?: number; status?: number };

export interface FailoverOptions {
  maxAttempts: number;
  deadlineMs: number;
  attemptTimeoutMs: number;
  /** An attempt needs at least this much of the deadline left to start. */
  minAttemptMs?: number;
  now: () => number;
}

export interface Failure {
  cluster: ClusterSpec;
  reason: FailureReason;
  retryAfterS?: number;
  status?: number;
  ms: number;
}

export type FailoverResult<T> =
  | { ok: true; value: T; cluster: ClusterSpec; attempts: number; hopMs: number; failures: Failure[] }
  | { ok: false; attempts: number; failures: Failure[] };

function isTimeout(e: unknown): boolean {
  const name = (e as { name?: string } | null)?.name;
  return name === "TimeoutError" || name === "AbortError";
}

export async function tryInOrder<T>(
  clusters: readonly ClusterSpec[],
  attempt: (cluster: ClusterSpec, signal: AbortSignal) => Promise<AttemptOutcome<T>>,
  o: FailoverOptions,
  onFailure?: (f: Failure) => void,
): Promise<FailoverResult<T>> {
  const start = o.now();
  const minMs = o.minAttemptMs ?? 50;
  const failures: Failure[] = [];
  let attempts = 0;
  for (const cluster of clusters) {
    if (attempts >= o.maxAttempts) break;
    const left = o.deadlineMs - (o.now() - start);
    if (left < minMs) break;
    attempts++;
    const t0 = o.now();
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException("attempt timed out", "TimeoutError")),
      Math.min(o.attemptTimeoutMs, left),
    );
    let outcome: AttemptOutcome<T>;
    try {
      outcome = await attempt(cluster, controller.signal);
    } catch (e) {
      outcome = {
        kind: "retry",
        reason: controller.signal.aborted || isTimeout(e) ? "timeout" : "unreachable",
      };
    } finally {
      clearTimeout(timer);
    }
    const ms = o.now() - t0;
    if (outcome.kind === "done") {
      return { ok: true, value: outcome.value, cluster, attempts, hopMs: ms, failures };
    }
    const f: Failure = { cluster, reason: outcome.reason, ms };
    if (outcome.retryAfterS !== undefined) f.retryAfterS = outcome.retryAfterS;
    if (outcome.status !== undefined) f.status = outcome.status;
    failures.push(f);
    onFailure?.(f);
  }
  return { ok: false, attempts, failures };
}

/** Retry-After for a 503 when every attempt failed: the soonest a full cluster frees up, else 5 s. */
export function retryAfterFor(failures: readonly Failure[], fallbackS = 5): number {
  let best = Number.POSITIVE_INFINITY;
  for (const f of failures) if (f.retryAfterS !== undefined) best = Math.min(best, f.retryAfterS);
  return Number.isFinite(best) ? Math.max(1, Math.min(best, 120)) : fallbackS;
}
