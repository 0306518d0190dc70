// POST /v1/realtime/calls: the offer in (application/sdp, or multipart/form-data with parts `sdp`
// and `session`), steered to the nearest healthy cluster, the answer out (201 + Location + ETag).
import type { Context, Hono } from "hono";
import { verifyCallIdWebCrypto } from "../../shared/callid/callid.ts";
import { type CreateCallRequest, readCreateCallResponse } from "../../shared/signalling/call-request.ts";
import type { Principal } from "../auth/authenticate.ts";
import { callerFor } from "../auth/caller.ts";
import { clusterErrorBody, clusterFetch, parseRetryAfter, readJson } from "../cluster/client.ts";
import { callIdKeys } from "../config.ts";
import type { AppEnv } from "../env.ts";
import { EdgeError, Errors } from "../errors.ts";
import { admit, clientIp, decodeUtf8, mediaType, readBody } from "../http.ts";
import { redactIp } from "../log.ts";
import { checkSdpOffer, offerError } from "../sdp.ts";
import { clusterClient, regionLabel } from "../steering/client.ts";
import type { AttemptOutcome } from "../steering/failover.ts";
import { serverTiming, steer, steerScope } from "../steering/steer.ts";

export interface Offer {
  sdp: string;
  session?: Record<string, unknown>;
}

const CALL_ID = /^rtc_[A-Za-z0-9_-]{48}$/;
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

async function readOffer(c: Context<AppEnv>): Promise<Offer> {
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

type CreateOutcome =
  | { kind: "answer"; callId: string; sdp: string; etag: string | null }
  | { kind: "error"; status: number; body: unknown; retryAfter: string | null };

export function registerCalls(app: Hono<AppEnv>): void {
  app.post("/v1/realtime/calls", async (c) => {
    c.set("route", "calls.create");
    const principal = await admit(c, { create: true });
    const offer = await readOffer(c);
    const check = checkSdpOffer(offer.sdp);
    if (!check.ok) throw offerError(check.code, check.message);
    const session = resolveSession(principal, offer.session);
    const s = await steerScope(c);
    const { client } = s;
    const request: CreateCallRequest = {
      sdp: offer.sdp,
      ...(session !== undefined ? { session } : {}),
      client: clusterClient(client),
      ingress: { vip: s.topo.topology.globalVip },
    };
    const payload = new TextEncoder().encode(JSON.stringify(request));
    const { plan, result } = await steer<CreateOutcome>(
      c,
      s,
      async (cluster, signal): Promise<AttemptOutcome<CreateOutcome>> => {
        const res = await clusterFetch(cluster, s.key, {
          method: "POST",
          path: "/v1/calls",
          body: payload,
          headers: { "content-type": "application/json", accept: "application/json" },
          signal,
          nowMs: Date.now(),
          caller: callerFor(principal, clientIp(c)),
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
          const b = readCreateCallResponse(body);
          if (b === undefined || !CALL_ID.test(b.callId)) {
            return { kind: "retry", reason: "error", status: 201 };
          }
          return {
            kind: "done",
            value: {
              kind: "answer",
              callId: b.callId,
              sdp: b.sdp,
              etag: res.headers.get("etag") ?? (b.etag !== "" ? quoteEtag(b.etag) : null),
            },
          };
        }
        return {
          kind: "done",
          value: { kind: "error", status: res.status, body, retryAfter: res.headers.get("retry-after") },
        };
      },
    );
    const totalMs = Date.now() - c.get("startMs");
    const cluster = result.cluster;
    const headers: Record<string, string> = {
      "x-relay-cluster": cluster.name,
      "server-timing": serverTiming(totalMs, result.hopMs, cluster.name, result.attempts, plan.basis),
    };
    const out = result.value;
    c.get("telemetry").callSteered({
      route: "calls.create",
      status: out.kind === "answer" ? 201 : out.status,
      region: regionLabel(client),
      cluster: cluster.name,
      colo: client.colo ?? "",
      country: client.country ?? "",
      basis: plan.basis,
      totalMs,
      clusterMs: result.hopMs,
      attempts: result.attempts,
    });
    c.get("log").info("call steered", {
      cluster: cluster.name,
      status: out.kind === "answer" ? 201 : out.status,
      attempts: result.attempts,
      basis: plan.basis,
      totalMs,
      hopMs: result.hopMs,
      colo: client.colo,
      country: client.country,
      ip: redactIp(clientIp(c)),
      principal: principal.kind,
    });
    if (out.kind === "error") {
      const b = clusterErrorBody(out.body, out.status);
      // 429 setup_limit: too many sessions in setup for this key or network (docs/security.md).
      if (out.retryAfter !== null) headers["retry-after"] = String(parseRetryAfter(out.retryAfter));
      return c.json(b, out.status as 400, headers);
    }
    await checkCallId(c, out.callId, cluster.id);
    headers["content-type"] = "application/sdp";
    headers.location = `/v1/realtime/calls/${out.callId}`;
    headers["accept-patch"] = "application/trickle-ice-sdpfrag";
    if (out.etag) headers.etag = out.etag;
    return c.body(out.sdp, 201, headers);
  });
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
