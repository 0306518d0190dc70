// Every request the edge makes to a cluster's signalling API is signed with the GR_CLUSTER_SECRET
// keyring (shared/signing/request.ts): method, path and query, the target (that cluster's
// gateway, "gateway:<id>"), the caller of a session creation, timestamp, nonce and the body's
// SHA-256. A request signed for one cluster is refused by every other.
import { type Caller, formatCaller } from "../../shared/signing/caller.ts";
import { type SigningKeys, signRequest } from "../../shared/signing/request.ts";
import { formatTarget } from "../../shared/signing/target.ts";
import type { ClusterSpec } from "../../shared/topology/schema.ts";
import { randomToken } from "../bytes.ts";

export interface ClusterRequest {
  method: string;
  /** Path below signallingUrl, starting with "/". */
  path: string;
  body?: Uint8Array;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  nowMs: number;
  /** Who a new session is for (setup limits at the cluster); signed as x-gr-caller. */
  caller?: Caller;
}

export function clusterUrl(cluster: ClusterSpec, path: string): URL {
  return new URL(cluster.signallingUrl.replace(/\/+$/, "") + path);
}

export async function clusterFetch(
  cluster: ClusterSpec,
  keys: SigningKeys,
  req: ClusterRequest,
): Promise<Response> {
  const url = clusterUrl(cluster, req.path);
  const body = req.body ?? new Uint8Array(0);
  const sig = await signRequest(
    keys,
    {
      method: req.method,
      pathAndQuery: url.pathname + url.search,
      body,
      target: formatTarget({ clusterId: cluster.id }),
      caller: req.caller ? formatCaller(req.caller) : "",
    },
    req.nowMs,
    randomToken(16),
  );
  const init: RequestInit = {
    method: req.method,
    headers: { ...req.headers, ...sig },
    redirect: "manual",
  };
  if (req.signal) init.signal = req.signal;
  if (body.length > 0) init.body = body as BodyInit;
  return fetch(url, init);
}

/** Reads a JSON body of at most `max` bytes; null if absent, too large or not JSON. */
export async function readJson(res: Response, max = 256 * 1024): Promise<unknown> {
  const text = await res.text();
  if (text.length > max) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A cluster's `{ error: { type, code, message } }`, reduced to those three strings. */
export function clusterErrorBody(
  raw: unknown,
  status: number,
): { error: { type: string; code: string; message: string } } {
  const e = (raw as { error?: Record<string, unknown> } | null)?.error;
  const str = (v: unknown, d: string): string => (typeof v === "string" && v.length <= 500 ? v : d);
  return {
    error: {
      type: str(e?.type, status >= 500 ? "server_error" : "invalid_request_error"),
      code: str(e?.code, `cluster_http_${status}`),
      message: str(e?.message, `the cluster answered ${status}`),
    },
  };
}

export function parseRetryAfter(v: string | null, fallbackS = 5): number {
  if (v && /^\d{1,5}$/.test(v.trim())) return Math.max(1, Math.min(Number(v.trim()), 3600));
  return fallbackS;
}
