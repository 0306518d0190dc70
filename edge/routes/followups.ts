// Follow-ups on a call route by the call id alone: its MAC is checked with GR_CALL_ID_KEYS and its
// cluster id names the owning cluster in the topology. No lookup, no state, no failover (only
// that cluster holds the session).
//   GET    /v1/realtime/calls/{id}          status
//   DELETE /v1/realtime/calls/{id}          hang up (WHIP)
//   POST   /v1/realtime/calls/{id}/hangup   hang up (Realtime API)
//   PATCH  /v1/realtime/calls/{id}          trickle / ICE restart (WHIP, If-Match forwarded)
//   POST   /v1/realtime/calls/{id}/{accept,reject,refer}   501: SIP call control, not offered here
//   POST   /v1/realtime/calls/{id}          resume on a sibling transceiver (resume.ts)
import type { Context, Hono } from "hono";
import { verifyCallIdWebCrypto } from "../../shared/callid/callid.ts";
import type { ClusterSpec } from "../../shared/topology/schema.ts";
import type { Principal } from "../auth/authenticate.ts";
import { type ClusterRequest, clusterErrorBody, clusterFetch, readJson } from "../cluster/client.ts";
import { callIdKeys, loadTopology } from "../config.ts";
import type { AppEnv, RouteName } from "../env.ts";
import { Errors } from "../errors.ts";
import { admit, FOLLOW_UP_GRACE_S, mediaType, readBody } from "../http.ts";
import { executionCtx, type SteerScope, steerScope } from "../steering/steer.ts";
import { registerResume } from "./resume.ts";

const TRICKLE = "application/trickle-ice-sdpfrag";

export async function owningCluster(c: Context<AppEnv>, callId: string): Promise<ClusterSpec> {
  const cluster = await clusterOfCallId(c, callId);
  if (!cluster) throw Errors.callNotFound();
  return cluster;
}

/** The cluster a call id names (its MAC checked), or undefined for a bad id or unknown cluster. */
export async function clusterOfCallId(c: Context<AppEnv>, callId: string): Promise<ClusterSpec | undefined> {
  const [keys, topo] = await Promise.all([callIdKeys(c.env), loadTopology(c.env, Date.now())]);
  const r = await verifyCallIdWebCrypto(callId, keys);
  if (!r.ok) {
    c.get("log").debug("call id rejected", { reason: r.reason });
    return undefined;
  }
  const cluster = topo.byId.get(r.callId.clusterId);
  if (!cluster)
    c.get("log").warn("call id names a cluster not in the topology", { clusterId: r.callId.clusterId });
  return cluster;
}

/**
 * One signed request to the cluster that owns a call, bounded by the cluster timeout; no
 * failover (only that cluster holds it). A connection failure or timeout marks the cluster down
 * for steering and becomes the edge's 502 / 504.
 */
export async function fetchOwner(
  c: Context<AppEnv>,
  s: SteerScope,
  cluster: ClusterSpec,
  req: Omit<ClusterRequest, "nowMs" | "signal">,
): Promise<Response> {
  try {
    return await clusterFetch(cluster, s.key, {
      ...req,
      signal: AbortSignal.timeout(s.tuning.clusterTimeoutMs),
      nowMs: Date.now(),
    });
  } catch (e) {
    const timeout = (e as { name?: string }).name === "TimeoutError";
    s.monitor.noteFailure(cluster, timeout ? "timeout" : "unreachable", { ...s.deps, ctx: executionCtx(c) });
    throw timeout ? Errors.clusterTimeout(cluster.name) : Errors.clusterUnreachable(cluster.name);
  }
}

export interface Forward {
  route: RouteName;
  method: string;
  /** Below /v1/calls/{id} at the cluster, e.g. "/participants" (default: the call itself). */
  suffix?: string;
  /** A participant route: a client secret scoped to this call is admitted. */
  participant?: boolean;
  /** Checks the path's other parameters, after admission (throws the EdgeError). */
  check?: () => void;
  /** Reads and checks the request body, after admission. */
  body?: () => Promise<{ body: Uint8Array; headers: Record<string, string> }>;
  /** Rewrites a 200 JSON answer for the caller (what the edge does not show it). */
  view?: (body: unknown, p: Principal) => unknown;
}

export async function forward(c: Context<AppEnv>, f: Forward): Promise<Response> {
  c.set("route", f.route);
  const callId = c.req.param("id")!;
  const p = await admit(c, {
    create: false,
    graceS: FOLLOW_UP_GRACE_S,
    ...(f.participant ? { call: callId } : {}),
  });
  f.check?.();
  const extra = f.body ? await f.body() : undefined;
  const cluster = await owningCluster(c, callId);
  const s = await steerScope(c);
  const t0 = Date.now();
  const res = await fetchOwner(c, s, cluster, {
    method: f.method,
    path: `/v1/calls/${callId}${f.suffix ?? ""}`,
    ...(extra ? { body: extra.body } : {}),
    headers: { accept: "application/json, application/trickle-ice-sdpfrag", ...extra?.headers },
  });
  const hops: [string, string, number][] = [["cluster", cluster.name, Date.now() - t0]];
  if (f.view && res.status === 200 && mediaType(res.headers.get("content-type")) === "application/json") {
    const body = JSON.stringify(f.view(await readJson(res), p));
    return relay(
      c,
      new Response(body, { headers: { "content-type": "application/json" } }),
      cluster.name,
      hops,
    );
  }
  return relay(c, res, cluster.name, hops);
}

/**
 * A cluster's answer to the client: status, body (errors in the edge's shape), ETag,
 * Retry-After and Accept-Patch; `X-Relay-Cluster` names the cluster that answered and
 * Server-Timing each cluster hop (metric name, cluster name, ms).
 */
export async function relay(
  c: Context<AppEnv>,
  res: Response,
  answeredBy: string,
  hops: [string, string, number][],
): Promise<Response> {
  const timing = hops.map(([m, n, ms]) => `${m};dur=${ms.toFixed(1)};desc="${n}"`);
  const headers = new Headers({
    "x-relay-cluster": answeredBy,
    "server-timing": [
      `edge;dur=${(Date.now() - c.get("startMs")).toFixed(1)};desc="edge total"`,
      ...timing,
    ].join(", "),
  });
  for (const h of ["etag", "retry-after", "accept-patch"]) {
    const v = res.headers.get(h);
    if (v) headers.set(h, v);
  }
  if (res.status === 204 || res.status === 304) {
    await res.body?.cancel();
    return new Response(null, { status: res.status, headers });
  }
  const type = mediaType(res.headers.get("content-type"));
  if (res.status >= 400) {
    return c.json(
      clusterErrorBody(await readJson(res), res.status),
      res.status as 400,
      Object.fromEntries(headers),
    );
  }
  if (type === "application/json") {
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify(await readJson(res)), { status: res.status, headers });
  }
  if (type) headers.set("content-type", type);
  return new Response(await res.arrayBuffer(), { status: res.status, headers });
}

/** A WHIP PATCH body (415 with Accept-Patch for another type) and the headers to forward. */
export async function trickleBody(
  c: Context<AppEnv>,
): Promise<{ body: Uint8Array; headers: Record<string, string> }> {
  const type = mediaType(c.req.header("content-type"));
  if (type !== TRICKLE) throw Errors.unsupportedType(type, TRICKLE, { "accept-patch": TRICKLE });
  const body = await readBody(c.req.raw);
  const headers: Record<string, string> = { "content-type": TRICKLE };
  // WHIP: the cluster decides 428 (absent), 412 (stale), 204 (trickle), 200 (restart).
  const ifMatch = c.req.header("if-match");
  if (ifMatch !== undefined) headers["if-match"] = ifMatch;
  return { body, headers };
}

export function registerFollowUps(app: Hono<AppEnv>): void {
  app.get("/v1/realtime/calls/:id", (c) => forward(c, { route: "calls.get", method: "GET" }));
  app.delete("/v1/realtime/calls/:id", (c) => forward(c, { route: "calls.delete", method: "DELETE" }));
  registerResume(app);
  app.post("/v1/realtime/calls/:id/hangup", (c) => forward(c, { route: "calls.hangup", method: "DELETE" }));
  for (const action of ["accept", "reject", "refer"] as const) {
    app.post(`/v1/realtime/calls/:id/${action}`, async (c) => {
      c.set("route", "calls.sip");
      await admit(c, { create: false, graceS: FOLLOW_UP_GRACE_S });
      await c.req.raw.body?.cancel();
      throw Errors.sipNotSupported(action);
    });
  }
  app.patch("/v1/realtime/calls/:id", (c) =>
    forward(c, { route: "calls.patch", method: "PATCH", body: () => trickleBody(c) }),
  );
}
