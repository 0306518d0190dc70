// One steered creation attempt (a call at POST /v1/calls, a leg at POST /v1/legs): signed POST of
// a JSON body to one cluster; 503 (full/draining) and 5xx fail over to the next cluster, a 201
// the reader cannot read does too, any other answer is final (the client sees it).
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
}

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
      if (value === undefined) return { kind: "retry", reason: "error", status: 201 };
      return { kind: "done", value: { kind: "created", value, etag: res.headers.get("etag") } };
    }
    return {
      kind: "done",
      value: { kind: "error", status: res.status, body, retryAfter: res.headers.get("retry-after") },
    };
  };
}
