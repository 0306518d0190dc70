// The cluster signalling API of one transceiver (the system contract in docs/transceiver.md):
// REST for sessions, a WebSocket at /v1/ws, a sideband WebSocket per call at
// /v1/sessions/{id}/events (sideband.ts), health, readiness and metrics. Every /v1 request is
// signed by the edge (regional/transceiver/signing.ts); errors travel as ApiError.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { MAX_SDP_BYTES } from "../../shared/sdp/offer.ts";
import { type Caller, parseCaller } from "../../shared/signing/caller.ts";
import { PROMETHEUS_CONTENT_TYPE } from "../common/metrics.ts";
import { parseSdpFrag } from "./core/sdpfrag.ts";
import { ApiError } from "./errors.ts";
import { mediaType, readBody, sendError, sendJson } from "./http.ts";
import type { EndReason, Session, SessionListener } from "./shell/session.ts";
import { acceptSideband, sidebandCallId } from "./sideband.ts";
import type { CreateRequest, Transceiver } from "./transceiver.ts";

export const MAX_JSON_BODY = 256 * 1024;
const SESSION_PATH = /^\/v1\/sessions\/([A-Za-z0-9_-]{1,128})$/;
const SDPFRAG = "application/trickle-ice-sdpfrag";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Validates the JSON body of a create request (REST and WebSocket offer). */
export function parseCreateBody(v: unknown): CreateRequest {
  if (!isObj(v)) throw new ApiError("body_malformed", "body must be a JSON object");
  if (typeof v.sdp !== "string") throw new ApiError("body_malformed", "sdp: must be a string");
  if (v.sdp.length > MAX_SDP_BYTES * 4)
    throw new ApiError("sdp_too_large", `sdp is over ${MAX_SDP_BYTES} bytes`);
  const req: CreateRequest = { sdp: v.sdp };
  if (v.session !== undefined && v.session !== null) {
    if (!isObj(v.session)) throw new ApiError("body_malformed", "session: must be an object");
    req.session = v.session;
  }
  if (v.client !== undefined) {
    const c = v.client;
    if (!isObj(c)) throw new ApiError("body_malformed", "client: must be an object");
    for (const k of ["region", "country", "continent", "colo"] as const) {
      if (c[k] !== undefined && (typeof c[k] !== "string" || c[k].length > 64)) {
        throw new ApiError("body_malformed", `client.${k}: must be a string of at most 64 characters`);
      }
    }
    for (const [k, lim] of [
      ["latitude", 90],
      ["longitude", 180],
    ] as const) {
      const x = c[k];
      if (x !== undefined && (typeof x !== "number" || !Number.isFinite(x) || Math.abs(x) > lim)) {
        throw new ApiError("body_malformed", `client.${k}: must be a number within ±${lim}`);
      }
    }
    req.client = c as CreateRequest["client"];
  }
  if (v.ingress !== undefined) {
    const g = v.ingress;
    if (!isObj(g)) throw new ApiError("body_malformed", "ingress: must be an object");
    if (g.vip !== undefined && typeof g.vip !== "string")
      throw new ApiError("body_malformed", 'ingress.vip: must be "ip:port"');
    if (
      g.popId !== undefined &&
      (!Number.isInteger(g.popId) || (g.popId as number) < 1 || (g.popId as number) > 65535)
    ) {
      throw new ApiError("body_malformed", "ingress.popId: must be an integer 1-65535");
    }
    req.ingress = {
      ...(g.vip !== undefined ? { vip: g.vip as string } : {}),
      ...(g.popId !== undefined ? { popId: g.popId as number } : {}),
    };
  }
  return req;
}

/** The signed x-gr-caller value ("" when absent); a malformed one is the signer's bug: 400. */
export function callerOf(signed: string): Caller | undefined {
  if (signed === "") return undefined;
  const c = parseCaller(signed);
  if (!c) throw new ApiError("body_malformed", 'x-gr-caller: expected "key=<12 hex>; net=<prefix>"');
  return c;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch (e) {
    throw new ApiError("body_malformed", `body is not JSON: ${(e as Error).message}`);
  }
}

/** Entity tags of an If-Match value; ["*"] for the wildcard. */
export function parseIfMatch(v: string): string[] {
  if (v.trim() === "*") return ["*"];
  return v
    .split(",")
    .map((t) =>
      t
        .trim()
        .replace(/^W\//, "")
        .replace(/^"(.*)"$/, "$1"),
    )
    .filter((t) => t !== "");
}

export function attachApi(server: Server, t: Transceiver): void {
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    route(t, req, res).catch((e: unknown) => {
      if (res.headersSent) return res.destroy();
      if (e instanceof ApiError) return sendError(res, e);
      t.log.error("request failed", { error: e as Error });
      sendError(res, new ApiError("internal", "internal error"));
    });
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_JSON_BODY, perMessageDeflate: false });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {});
    const url = req.url ?? "/";
    const sideband = sidebandCallId(url.split("?")[0]!);
    if (url.split("?")[0] !== "/v1/ws" && sideband === undefined)
      return rejectUpgrade(socket, new ApiError("not_found", "no such path"));
    t.verifier
      .verify(req.method ?? "GET", url, new Uint8Array(0), req.headers)
      .then((signed) => {
        const caller = callerOf(signed);
        if (sideband !== undefined) acceptSideband((id) => t.lookup(id), wss, sideband, req, socket, head);
        else wss.handleUpgrade(req, socket, head, (ws) => serveSocket(t, ws, caller));
      })
      .catch((e: unknown) =>
        rejectUpgrade(socket, e instanceof ApiError ? e : new ApiError("internal", "error")),
      );
  });
}

function rejectUpgrade(socket: Duplex, e: ApiError): void {
  const body = JSON.stringify(e.toJSON());
  socket.end(
    `HTTP/1.1 ${e.status} ${e.code}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${e.retryAfter ? `Retry-After: ${e.retryAfter}\r\n` : ""}Connection: close\r\n\r\n${body}`,
  );
}

async function route(t: Transceiver, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const receivedAt = performance.now();
  const url = req.url ?? "/";
  const path = url.split("?")[0]!;
  const method = req.method ?? "GET";
  if (method === "GET" && path === "/healthz") return sendJson(res, 200, t.health());
  if (method === "GET" && path === "/readyz") {
    const ready = !t.draining && t.load < t.config.capacity;
    return sendJson(res, ready ? 200 : 503, { ready, load: t.load, capacity: t.config.capacity });
  }
  if (method === "GET" && path === "/metrics") {
    const text = t.metrics.render();
    res.writeHead(200, {
      "content-type": PROMETHEUS_CONTENT_TYPE,
      "content-length": Buffer.byteLength(text),
    });
    res.end(text);
    return;
  }
  if (path === "/v1/sessions") {
    if (method !== "POST")
      throw new ApiError("method_not_allowed", `${method} is not allowed on /v1/sessions`);
    const body = await readBody(req, MAX_JSON_BODY);
    const caller = callerOf(await t.verifier.verify(method, url, body, req.headers));
    if (mediaType(req.headers) !== "application/json") {
      throw new ApiError("unsupported_media_type", "content-type must be application/json");
    }
    const create = parseCreateBody(parseJson(body));
    if (caller) create.caller = caller;
    const r = await t.create(create, receivedAt);
    return sendJson(
      res,
      201,
      { callId: r.callId, sdp: r.sdp, etag: r.etag, clusterId: r.clusterId, transceiverId: r.transceiverId },
      { etag: `"${r.etag}"`, location: `/v1/sessions/${r.callId}` },
    );
  }
  const m = SESSION_PATH.exec(path);
  if (!m) {
    if (path.startsWith("/v1/sessions/")) throw new ApiError("call_id_malformed", "call id is malformed");
    throw new ApiError("not_found", `no route for ${method} ${path}`);
  }
  const callId = m[1]!;
  const body = await readBody(req, MAX_SDP_BYTES);
  await t.verifier.verify(method, url, body, req.headers);
  switch (method) {
    case "GET":
      return sendJson(res, 200, t.status(callId));
    case "DELETE":
      t.hangup(callId);
      res.writeHead(204).end();
      return;
    case "PATCH":
      return patch(t, callId, req, body, res);
    default:
      throw new ApiError("method_not_allowed", `${method} is not allowed on a session`);
  }
}

/** WHIP PATCH (RFC 9725 §4.3): trickle with the ETag, ICE restart with If-Match "*". */
async function patch(
  t: Transceiver,
  callId: string,
  req: IncomingMessage,
  body: Buffer,
  res: ServerResponse,
): Promise<void> {
  const s = t.lookup(callId);
  if (mediaType(req.headers) !== SDPFRAG)
    throw new ApiError("unsupported_media_type", `content-type must be ${SDPFRAG}`);
  const ifMatch = req.headers["if-match"];
  if (ifMatch === undefined || ifMatch.trim() === "") {
    throw new ApiError(
      "if_match_required",
      "PATCH needs If-Match: the session ETag, or * for an ICE restart",
    );
  }
  const frag = parseSdpFrag(body.toString("utf8"));
  if (!frag.ok) throw new ApiError("sdpfrag_malformed", frag.message);
  const tags = parseIfMatch(ifMatch);
  if (tags[0] === "*") {
    if (frag.ufrag === undefined || frag.pwd === undefined) {
      throw new ApiError("unsupported_patch", "an ICE restart needs a=ice-ufrag and a=ice-pwd");
    }
    const r = await s.restartIce(frag.ufrag, frag.pwd);
    res.writeHead(200, {
      "content-type": SDPFRAG,
      etag: `"${r.etag}"`,
      "content-length": Buffer.byteLength(r.frag),
    });
    res.end(r.frag);
    return;
  }
  if (!tags.includes(s.etag)) throw new ApiError("etag_mismatch", "If-Match does not match the session ETag");
  if (frag.ufrag !== undefined && frag.ufrag !== s.remoteUfrag) {
    throw new ApiError("unsupported_patch", 'new ICE credentials need If-Match: "*" (ICE restart)');
  }
  // Trickled candidates are not needed: the server pairs only with addresses that sent it an
  // authenticated check through the relay (peer-reflexive), so they are accepted and ignored.
  res.writeHead(204, { etag: `"${s.etag}"` }).end();
}

// ---- WebSocket signalling ------------------------------------------------------------------

function wsSend(ws: WebSocket, msg: unknown): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
}

function serveSocket(t: Transceiver, ws: WebSocket, caller: Caller | undefined): void {
  let session: Session | undefined;
  let offered = false;
  const listener: SessionListener = {
    event(text: string) {
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(`{"type":"event","event":${text}}`);
    },
    ended(reason: EndReason) {
      wsSend(ws, { type: "ended", reason });
      ws.close(1000, "session ended");
    },
  };
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    void (async () => {
      if (isBinary) throw new ApiError("body_malformed", "messages must be JSON text");
      const msg = parseJson(data);
      if (!isObj(msg) || typeof msg.type !== "string")
        throw new ApiError("body_malformed", "message needs a type");
      switch (msg.type) {
        case "offer": {
          if (offered) throw new ApiError("body_malformed", "one offer per connection");
          offered = true;
          let r: Awaited<ReturnType<Transceiver["create"]>>;
          try {
            const create = parseCreateBody(msg);
            if (caller) create.caller = caller;
            r = await t.create(create, performance.now());
          } catch (e) {
            offered = false; // a refused offer (e.g. 503) may be retried on the same socket
            throw e;
          }
          session = r.session;
          if (ws.readyState !== WebSocket.OPEN) {
            session.end("hangup");
            return;
          }
          session.addListener(listener);
          wsSend(ws, { type: "answer", sdp: r.sdp, callId: r.callId, etag: r.etag });
          return;
        }
        case "hangup":
          if (!session) throw new ApiError("call_id_unknown", "no session on this connection");
          session.end("hangup");
          return;
        case "event":
          if (!session) throw new ApiError("call_id_unknown", "no session on this connection");
          if (!isObj(msg.event)) throw new ApiError("body_malformed", "event: must be an object");
          session.sendEventToBackend(JSON.stringify(msg.event));
          return;
        default:
          throw new ApiError(
            "body_malformed",
            `unknown message type ${JSON.stringify(msg.type).slice(0, 40)}`,
          );
      }
    })().catch((e: unknown) => {
      const err = e instanceof ApiError ? e : new ApiError("internal", "internal error");
      wsSend(ws, { type: "error", error: err.toJSON().error });
    });
  });
  // Closing the signalling socket does not end the call (REST DELETE or the data path still can).
  ws.on("close", () => session?.removeListener(listener));
  ws.on("error", () => {});
}
