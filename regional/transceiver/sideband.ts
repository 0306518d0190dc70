// Sideband control of one call (the Realtime API's `/v1/realtime?call_id=…` WebSocket, reached
// through the edge and the gateway as an upgrade of `/v1/calls/{callId}/events`). The socket
// carries the same stream as the client's `oai-events` channel: every server event of the call
// goes out as a text message, and each text message in is a client event for the backend. At most
// MAX_SIDEBAND_PER_CALL sockets per call; all are closed (1000) when the call ends, and one that
// cannot keep up (unsent bytes over a bound) is closed (1013) rather than buffered without end.
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, type WebSocketServer } from "ws";
import { ApiError } from "./errors.ts";
import type { Call, CallListener, EndReason } from "./shell/call.ts";

export const MAX_SIDEBAND_PER_CALL = 4;
/** Unsent bytes towards a sideband socket beyond which it is closed as too slow. */
export const SIDEBAND_MAX_BUFFERED = 1 << 20;
const PATH = /^\/v1\/calls\/([A-Za-z0-9_-]{1,128})\/events$/;

/** The call id of a sideband upgrade path, or undefined for any other path. */
export function sidebandCallId(path: string): string | undefined {
  return PATH.exec(path)?.[1];
}

const open = new WeakMap<Call, Set<WebSocket>>();

/** Sideband sockets open on a session (for status and tests). */
export function sidebandCount(s: Call): number {
  return open.get(s)?.size ?? 0;
}

/**
 * Completes a (signed, verified) sideband upgrade for a live session of this transceiver, or
 * throws the ApiError to refuse it with: 404 for an unknown or ended call, 429 when full.
 */
export function acceptSideband(
  lookup: (callId: string) => Call,
  wss: WebSocketServer,
  callId: string,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  const session = lookup(callId);
  const set = open.get(session) ?? new Set<WebSocket>();
  if (set.size >= MAX_SIDEBAND_PER_CALL) {
    throw new ApiError(
      "sideband_limit",
      `this call already has ${MAX_SIDEBAND_PER_CALL} sideband connections`,
    );
  }
  open.set(session, set);
  // ws completes the upgrade and calls back synchronously (no verifyClient), so the socket is in
  // the set before another upgrade can be checked against the bound.
  wss.handleUpgrade(req, socket, head, (ws) => serveSideband(session, set, ws));
}

function serveSideband(session: Call, set: Set<WebSocket>, ws: WebSocket): void {
  if (session.state === "ended") {
    ws.close(1000, "call ended");
    return;
  }
  set.add(ws);
  const listener: CallListener = {
    event(text: string) {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (ws.bufferedAmount > SIDEBAND_MAX_BUFFERED) ws.close(1013, "sideband too slow");
      else ws.send(text);
    },
    ended(reason: EndReason) {
      ws.close(1000, `call ended: ${reason}`.slice(0, 120));
    },
  };
  session.addListener(listener);
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      ws.send(sidebandError("binary_not_supported", "send Realtime client events as JSON text"));
      return;
    }
    const text = data.toString("utf8");
    let ok = false;
    try {
      const v = JSON.parse(text) as unknown;
      ok =
        typeof v === "object" &&
        v !== null &&
        !Array.isArray(v) &&
        typeof (v as { type?: unknown }).type === "string";
    } catch {
      ok = false;
    }
    if (!ok) {
      ws.send(sidebandError("invalid_event", "a client event is a JSON object with a string `type`"));
      return;
    }
    session.sendEventToBackend(text);
  });
  ws.on("close", () => {
    set.delete(ws);
    session.removeListener(listener);
  });
  ws.on("error", () => {});
}

function sidebandError(code: string, message: string): string {
  return JSON.stringify({
    type: "error",
    event_id: `event_${randomBytes(12).toString("base64url")}`,
    error: { type: "invalid_request_error", code, message, param: null, event_id: null },
  });
}
