// The cluster signalling API of one transceiver (the system contract in docs/transceiver.md) on
// Hono: REST for sessions, health, readiness and metrics; the WebSocket upgrades (/v1/ws and the
// per-call sideband) are in api-ws.ts. Every /v1 request is signed by the edge (signing.ts) and
// verified against the exact request target; errors travel as ApiError to `onError`.
// The transceiver is seen through ApiHost (api-host.ts), so nothing here imports it back.
import type { IncomingMessage, Server } from "node:http";
import { Hono } from "hono";
import { MAX_SDP_BYTES } from "../../shared/sdp/offer.ts";
import { PROMETHEUS_CONTENT_TYPE } from "../common/metrics.ts";
import { serve } from "../common/node-server.ts";
import {
  callerOf,
  MAX_JSON_BODY,
  mediaType,
  parseCreateBody,
  parseIfMatch,
  parseJson,
  readBody,
} from "./api-body.ts";
import type { ApiHost } from "./api-host.ts";
import { participantRoutes } from "./api-participants.ts";
import { handleUpgrade } from "./api-ws.ts";
import { parseSdpFrag } from "./core/sdpfrag.ts";
import { ApiError } from "./errors.ts";
import type { Call } from "./shell/call.ts";

export type ApiEnv = { Bindings: { incoming: IncomingMessage } };

const SESSION_PATH = /^\/v1\/calls\/([A-Za-z0-9_-]{1,128})$/;
const SDPFRAG = "application/trickle-ice-sdpfrag";

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });

/** The request target exactly as sent (what the edge signed), and its path. */
const targetOf = (incoming: IncomingMessage): { url: string; path: string } => {
  const url = incoming.url ?? "/";
  return { url, path: url.split("?")[0]! };
};

export function apiApp(t: ApiHost): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.get("/healthz", () => json(200, t.health()));
  app.get("/readyz", () => {
    const ready = !t.draining && t.load < t.config.capacity;
    return json(ready ? 200 : 503, { ready, load: t.load, capacity: t.config.capacity });
  });
  app.get(
    "/metrics",
    () => new Response(t.metrics.render(), { headers: { "content-type": PROMETHEUS_CONTENT_TYPE } }),
  );

  app.all("/v1/calls", async (c) => {
    const receivedAt = performance.now();
    const method = c.req.method;
    if (method !== "POST") throw new ApiError("method_not_allowed", `${method} is not allowed on /v1/calls`);
    const body = await readBody(c.req.raw, MAX_JSON_BODY);
    const { url } = targetOf(c.env.incoming);
    const caller = callerOf(await t.verifier.verify(method, url, body, c.env.incoming.headers));
    if (mediaType(c.req.header("content-type")) !== "application/json") {
      throw new ApiError("unsupported_media_type", "content-type must be application/json");
    }
    const create = parseCreateBody(parseJson(body));
    if (caller) create.caller = caller;
    const r = await t.create(create, receivedAt);
    const { callId, sdp, etag, clusterId, transceiverId } = r;
    return json(
      201,
      { callId, sdp, etag, clusterId, transceiverId },
      { etag: `"${etag}"`, location: `/v1/calls/${callId}` },
    );
  });

  participantRoutes(app, t, json);

  app.all("/v1/calls/*", async (c) => {
    const receivedAt = performance.now();
    const { url, path } = targetOf(c.env.incoming);
    const m = SESSION_PATH.exec(path);
    if (!m) throw new ApiError("call_id_malformed", "call id is malformed");
    const callId = m[1]!;
    const method = c.req.method;
    const body = await readBody(c.req.raw, method === "POST" ? MAX_JSON_BODY : MAX_SDP_BYTES);
    await t.verifier.verify(method, url, body, c.env.incoming.headers);
    switch (method) {
      case "POST":
        return resumeHere(t, callId, c.req.header("content-type"), body, receivedAt);
      case "GET":
        return json(200, t.status(callId));
      case "DELETE":
        t.hangup(callId);
        return new Response(null, { status: 204 });
      case "PATCH":
        return patch(t.lookup(callId), c.req.raw.headers, body);
      default:
        throw new ApiError("method_not_allowed", `${method} is not allowed on a session`);
    }
  });

  app.notFound((c) => {
    throw new ApiError("not_found", `no route for ${c.req.method} ${targetOf(c.env.incoming).path}`);
  });
  app.onError((e) => {
    const err = e instanceof ApiError ? e : new ApiError("internal", "internal error");
    if (!(e instanceof ApiError)) t.log.error("request failed", { error: e });
    const headers: Record<string, string> = {};
    if (err.retryAfter !== undefined) headers["retry-after"] = String(err.retryAfter);
    if (err.status === 405) headers.allow = "GET, POST, PATCH, DELETE";
    return json(err.status, err.toJSON(), headers);
  });
  return app;
}

/** POST /v1/calls/{callId}: a new offer for a call whose transceiver failed (resume.ts). */
async function resumeHere(
  t: ApiHost,
  callId: string,
  contentType: string | undefined,
  body: Uint8Array,
  receivedAt: number,
): Promise<Response> {
  if (mediaType(contentType) !== "application/json")
    throw new ApiError("unsupported_media_type", "content-type must be application/json");
  const r = await t.create({ ...parseCreateBody(parseJson(body)), resume: callId }, receivedAt);
  const { sdp, etag, clusterId, transceiverId } = r;
  return json(
    200,
    { callId: r.callId, sdp, etag, clusterId, transceiverId },
    { etag: `"${etag}"`, location: `/v1/calls/${r.callId}` },
  );
}

/** WHIP PATCH (RFC 9725 §4.3): trickle with the ETag, ICE restart with If-Match "*". */
async function patch(s: Call, headers: Headers, body: Uint8Array): Promise<Response> {
  if (mediaType(headers.get("content-type")) !== SDPFRAG)
    throw new ApiError("unsupported_media_type", `content-type must be ${SDPFRAG}`);
  const ifMatch = headers.get("if-match");
  if (ifMatch === null || ifMatch.trim() === "") {
    throw new ApiError(
      "if_match_required",
      "PATCH needs If-Match: the session ETag, or * for an ICE restart",
    );
  }
  const frag = parseSdpFrag(new TextDecoder().decode(body));
  if (!frag.ok) throw new ApiError("sdpfrag_malformed", frag.message);
  const tags = parseIfMatch(ifMatch);
  if (tags[0] === "*") {
    if (frag.ufrag === undefined || frag.pwd === undefined) {
      throw new ApiError("unsupported_patch", "an ICE restart needs a=ice-ufrag and a=ice-pwd");
    }
    const r = await s.restartIce(frag.ufrag, frag.pwd);
    return new Response(r.frag, { status: 200, headers: { "content-type": SDPFRAG, etag: `"${r.etag}"` } });
  }
  if (!tags.includes(s.etag)) throw new ApiError("etag_mismatch", "If-Match does not match the session ETag");
  if (frag.ufrag !== undefined && frag.ufrag !== s.remoteUfrag) {
    throw new ApiError("unsupported_patch", 'new ICE credentials need If-Match: "*" (ICE restart)');
  }
  // Trickled candidates are not needed: the server pairs only with addresses that sent it an
  // authenticated check through the relay (peer-reflexive), so they are accepted and ignored.
  return new Response(null, { status: 204, headers: { etag: `"${s.etag}"` } });
}

/** The API's node:http server (not listening yet): Hono for requests, api-ws.ts for upgrades. */
export function apiServer(t: ApiHost): Server {
  const app = apiApp(t);
  return serve(app.fetch, handleUpgrade(t), (e) => t.log.error("request failed", { error: e as Error }));
}
