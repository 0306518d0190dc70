// One steered creation attempt (a call at POST /v1/calls, a leg at POST /v1/legs): signed POST of
// a JSON body to one cluster; 503 (full/draining) and 5xx fail over to the next cluster, a 201
// the reader cannot read does too (unless `unreadableIsFinal`), any other answer is final (the
// client sees it).
import type { Caller } from "../../shared/signing/caller.ts";
import type { SigningKeys } from "../../shared/signing/request.ts";
import type { ClusterSpec } from "../../shared/topology/schema.ts";
import type { AttemptOutcome } from "../steering/failover.ts";
import { clusterFetch, parseRetryAfter, readJson } from "./client.ts";

export type CreateOutcome<T> =
  | { kind: "created"; value: T; etag: string | null }
  | { kind: "error"; status: number; body: unknown; retryAfter: string | null };

export interface CreateAttempt<T> {
  path: string;
  payload: Uint8Array;
  caller: Caller;
  /** The 201 body, or undefined when it is not what the route promises. */
  read: (body: unknown) => T | undefined;
  /**
   * An unreadable 201 is final (502 cluster_bad_answer) instead of failing over: for a leg, the
   * cluster did create something that speaks for the participant, and a second leg elsewhere
   * would be two legs for one participant (the caller releases the participant instead).
   */
  unreadableIsFinal?: boolean;
}

/** The final error of an unreadable 201 (unreadableIsFinal), in the cluster error shape. */
export const badCreateAnswer = (cluster: string) => ({
  kind: "error" as const,
  status: 502,
  body: {
    error: {
      type: "server_error",
      code: "cluster_bad_answer",
      message: `the cluster ${cluster} sent an unreadable answer`,
    },
  },
  retryAfter: null,
});

export function createAttempt<T>(
  key: SigningKeys,
  a: CreateAttempt<T>,
): (cluster: ClusterSpec, signal: AbortSignal) => Promise<AttemptOutcome<CreateOutcome<T>>> {
  return async (cluster, signal) => {
    const res = await clusterFetch(cluster, key, {
      method: "POST",
      path: a.path,
      body: a.payload,
      headers: { "content-type": "application/json", accept: "application/json" },
      signal,
      nowMs: Date.now(),
      caller: a.caller,
    });
    if (res.status === 503) {
      await res.body?.cancel();
      return {
        kind: "retry",
        reason: "full",
        retryAfterS: parseRetryAfter(res.headers.get("retry-after")),
        status: 503,
      };
    }
    if (res.status >= 500) {
      await res.body?.cancel();
      return { kind: "retry", reason: "error", status: res.status };
    }
    const body = await readJson(res);
    if (res.status === 201) {
      const value = a.read(body);
      if (value === undefined) {
        if (a.unreadableIsFinal) return { kind: "done", value: badCreateAnswer(cluster.name) };
        return { kind: "retry", reason: "error", status: 201 };
      }
      return { kind: "done", value: { kind: "created", value, etag: res.headers.get("etag") } };
    }
    return {
      kind: "done",
      value: { kind: "error", status: res.status, body, retryAfter: res.headers.get("retry-after") },
    };
  };
}
