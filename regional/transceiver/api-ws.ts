// The API's WebSocket upgrades: /v1/ws (offer → answer, events both ways, hangup) and the
// per-call sideband /v1/calls/{callId}/events (sideband.ts). Each upgrade is signed like any
// /v1 request; a refusal is written by rejectUpgrade (errors.ts).
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import type { Caller } from "../../shared/signing/caller.ts";
import { callerOf, MAX_JSON_BODY, parseCreateBody, parseJson } from "./api-body.ts";
import type { ApiHost } from "./api-host.ts";
import type { EndReason } from "./call-types.ts";
import { ApiError, rejectUpgrade } from "./errors.ts";
import type { Call, CallListener } from "./shell/call.ts";
import { acceptSideband, sidebandCallId } from "./sideband.ts";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function handleUpgrade(t: ApiHost): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_JSON_BODY, perMessageDeflate: false });
  return (req, socket, head) => {
    socket.on("error", () => {});
    const url = req.url ?? "/";
    const path = url.split("?")[0]!;
    const sideband = sidebandCallId(path);
    if (path !== "/v1/ws" && sideband === undefined)
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
  };
}

function wsSend(ws: WebSocket, msg: unknown): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
}

function serveSocket(t: ApiHost, ws: WebSocket, caller: Caller | undefined): void {
  let session: Call | undefined;
  let offered = false;
  const listener: CallListener = {
    event(text: string) {
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(`{"type":"event","event":${text}}`);
    },
    ended(reason: EndReason) {
      wsSend(ws, { type: "ended", reason });
      ws.close(1000, "session ended");
    },
  };
  const onMessage = async (data: Buffer, isBinary: boolean): Promise<void> => {
    if (isBinary) throw new ApiError("body_malformed", "messages must be JSON text");
    const msg = parseJson(data);
    if (!isObj(msg) || typeof msg.type !== "string")
      throw new ApiError("body_malformed", "message needs a type");
    switch (msg.type) {
      case "offer": {
        if (offered) throw new ApiError("body_malformed", "one offer per connection");
        offered = true;
        let r: Awaited<ReturnType<ApiHost["create"]>>;
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
        session.sendClientEvent(JSON.stringify(msg.event));
        return;
      default:
        throw new ApiError("body_malformed", `unknown message type ${JSON.stringify(msg.type).slice(0, 40)}`);
    }
  };
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    onMessage(data, isBinary).catch((e: unknown) => {
      const err = e instanceof ApiError ? e : new ApiError("internal", "internal error");
      wsSend(ws, { type: "error", error: err.toJSON().error });
    });
  });
  // Closing the signalling socket does not end the call (REST DELETE or the data path still can).
  ws.on("close", () => session?.removeListener(listener));
  ws.on("error", () => {});
}
