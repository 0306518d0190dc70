// POST /v1/realtime/calls: the offer in (application/sdp, or multipart/form-data with parts `sdp`
// and `session`), steered to the nearest healthy cluster, the answer out (201 + Location + ETag).
import type { Context, Hono } from "hono";
import { CALL_ID_PATTERN, verifyCallIdWebCrypto } from "../../shared/callid/callid.ts";
import { type CreateCallRequest, readCreateCallResponse } from "../../shared/signalling/call-request.ts";
import type { Principal } from "../auth/authenticate.ts";
import { callerFor } from "../auth/caller.ts";
import { clusterErrorBody, parseRetryAfter } from "../cluster/client.ts";
import { type CreateOutcome, createAttempt } from "../cluster/create-attempt.ts";
import { callIdKeys } from "../config.ts";
import type { AppEnv } from "../env.ts";
import { EdgeError, Errors } from "../errors.ts";
import { admit, clientIp, decodeUtf8, mediaType, readBody } from "../http.ts";
import { redactIp } from "../log.ts";
import type { CallSteered } from "../metrics/telemetry.ts";
import { checkSdpOffer, offerError } from "../sdp.ts";
import { clusterClient, regionLabel } from "../steering/client.ts";
import { type Steered, type SteerScope, serverTiming, steer, steerScope } from "../steering/steer.ts";

export interface Offer {
  sdp: string;
  session?: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export function parseSessionJson(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw Errors.invalidRequest("invalid_session", "the session part is not valid JSON");
  }
  if (!isObject(v)) throw Errors.invalidRequest("invalid_session", "the session part must be a JSON object");
  return v;
}

export async function readOffer(c: Context<AppEnv>): Promise<Offer> {
  const header = c.req.header("content-type");
  const type = mediaType(header);
  if (type !== "application/sdp" && type !== "multipart/form-data") {
    throw Errors.unsupportedType(type, "application/sdp or multipart/form-data");
  }
  const bytes = await readBody(c.req.raw);
  if (type === "application/sdp") return { sdp: decodeUtf8(bytes, "the SDP offer") };
  let form: FormData;
  try {
    form = await new Response(bytes as BodyInit, { headers: { "content-type": header! } }).formData();
  } catch {
    throw Errors.invalidRequest("invalid_multipart", "the multipart/form-data body could not be parsed");
  }
  const text = async (name: string): Promise<string | undefined> => {
    const v = form.get(name) as unknown;
    if (v === null || v === undefined) return undefined;
    return typeof v === "string" ? v : await (v as Blob).text();
  };
  const sdp = await text("sdp");
  if (sdp === undefined) throw Errors.invalidRequest("missing_sdp", "the multipart body has no `sdp` part");
  const session = await text("session");
  return session === undefined ? { sdp } : { sdp, session: parseSessionJson(session) };
}

/** An entity-tag as HTTP wants it (RFC 9110 §8.8.3): the cluster's JSON carries it bare. */
export function quoteEtag(v: string): string {
  return /^(W\/)?"[^"]*"$/.test(v) ? v : `"${v.replace(/"/g, "")}"`;
}

/** A client secret bound to a session config decides the session; the caller may only repeat it. */
export function resolveSession(
  p: Principal,
  given: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (p.kind === "client_secret" && p.session !== undefined) {
    if (given !== undefined && JSON.stringify(given) !== JSON.stringify(p.session))
      throw Errors.sessionBound();
    return p.session;
  }
  return given;
}

export function registerCalls(app: Hono<AppEnv>): void {
  app.post("/v1/realtime/calls", async (c) => {
    c.set("route", "calls.create");
    const principal = await admit(c, { create: true });
    const offer = await readOffer(c);
    const check = checkSdpOffer(offer.sdp);
    if (!check.ok) throw offerError(check.code, check.message);
    const session = resolveSession(principal, offer.session);
    const s = await steerScope(c);
    const request: CreateCallRequest = {
      sdp: offer.sdp,
      ...(session !== undefined ? { session } : {}),
      client: clusterClient(s.client),
      ingress: { vip: s.topo.topology.globalVip },
    };
    const steered = await steer(
      c,
      s,
      createAttempt(s.key, {
        path: "/v1/calls",
        payload: new TextEncoder().encode(JSON.stringify(request)),
        caller: callerFor(principal, clientIp(c)),
        read: (body) => {
          const b = readCreateCallResponse(body);
          return b !== undefined && CALL_ID_PATTERN.test(b.callId) ? b : undefined;
        },
      }),
    );
    const out = steered.result.value;
    const cluster = steered.result.cluster;
    const headers = reportSteered(c, "calls.create", s, steered, out, principal);
    if (out.kind === "error") return clusterError(c, out, headers);
    await checkCallId(c, out.value.callId, cluster.id);
    headers["content-type"] = "application/sdp";
    headers.location = `/v1/realtime/calls/${out.value.callId}`;
    headers["accept-patch"] = "application/trickle-ice-sdpfrag";
    const etag = out.etag ?? (out.value.etag !== "" ? quoteEtag(out.value.etag) : null);
    if (etag) headers.etag = etag;
    return c.body(out.value.sdp, 201, headers);
  });
}

/** A cluster's final error answer, relayed with the edge's error body. */
export function clusterError(
  c: Context<AppEnv>,
  out: { status: number; body: unknown; retryAfter: string | null },
  headers: Record<string, string>,
): Response {
  // 429 setup_limit: too many sessions in setup for this key or network (docs/security.md).
  if (out.retryAfter !== null) headers["retry-after"] = String(parseRetryAfter(out.retryAfter));
  return c.json(clusterErrorBody(out.body, out.status), out.status as 400, headers);
}

/** Metrics and the log line of a steered creation; the response headers it sets. */
export function reportSteered(
  c: Context<AppEnv>,
  route: CallSteered["route"],
  s: SteerScope,
  steered: Steered<CreateOutcome<unknown>>,
  out: CreateOutcome<unknown>,
  principal: Principal,
): Record<string, string> {
  const { plan, result } = steered;
  const { client } = s;
  const totalMs = Date.now() - c.get("startMs");
  const cluster = result.cluster;
  const status = out.kind === "created" ? 201 : out.status;
  c.get("telemetry").callSteered({
    route,
    status,
    region: regionLabel(client),
    cluster: cluster.name,
    colo: client.colo ?? "",
    country: client.country ?? "",
    basis: plan.basis,
    totalMs,
    clusterMs: result.hopMs,
    attempts: result.attempts,
  });
  c.get("log").info(route === "calls.create" ? "call steered" : "leg steered", {
    cluster: cluster.name,
    status,
    attempts: result.attempts,
    basis: plan.basis,
    totalMs,
    hopMs: result.hopMs,
    colo: client.colo,
    country: client.country,
    ip: redactIp(clientIp(c)),
    principal: principal.kind,
  });
  return {
    "x-relay-cluster": cluster.name,
    "server-timing": serverTiming(totalMs, result.hopMs, cluster.name, result.attempts, plan.basis),
  };
}

/** A call id the edge cannot verify means follow-ups will 404: say so loudly, still answer. */
async function checkCallId(c: Context<AppEnv>, callId: string, clusterId: number): Promise<void> {
  try {
    const r = await verifyCallIdWebCrypto(callId, await callIdKeys(c.env));
    if (!r.ok)
      c.get("log").error("cluster minted a call id the edge cannot verify", { reason: r.reason, clusterId });
    else if (r.callId.clusterId !== clusterId)
      c.get("log").error("call id names another cluster", { clusterId, named: r.callId.clusterId });
  } catch (e) {
    c.get("log").error("cannot verify call ids", { error: e instanceof EdgeError ? e.message : "unknown" });
  }
}
