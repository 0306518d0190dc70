// GET /v1/realtime?call_id=rtc_… (Upgrade: websocket): sideband control of a call, as the Realtime
// API offers it to the developer's server. The call id names the owning cluster (its MAC checked
// like any follow-up); the edge opens a signed upgrade of that cluster's
// /v1/calls/{id}/events, which the gateway routes to the transceiver the id names. The socket
// carries the call's server events (the same stream as the browser's `oai-events` channel) and
// takes client events (`session.update`, `response.create`, …) as JSON text. API keys only: a
// client secret belongs in the browser, not on the server side of a call. The transceiver bounds
// the connections per call (429) and closes them when the call ends.
import type { Hono } from "hono";
import { clusterErrorBody, clusterFetch, readJson } from "../cluster/client.ts";
import { tuning } from "../config.ts";
import type { AppEnv } from "../env.ts";
import { Errors } from "../errors.ts";
import { admit, FOLLOW_UP_GRACE_S } from "../http.ts";
import { newWebSocketPair, responseWebSocket, upgradeResponse, type WorkerWebSocket } from "../platform.ts";
import { executionCtx, steerScope } from "../steering/steer.ts";
import { owningCluster } from "./followups.ts";

/** Largest client event accepted (a session.update with many tools is the big one). */
export const MAX_SIDEBAND_EVENT_BYTES = 256 * 1024;
/** The Realtime API's browser subprotocols: `realtime`, with the key as `openai-insecure-api-key.<key>`. */
const REALTIME_PROTOCOL = "realtime";
const KEY_PROTOCOL_PREFIX = "openai-insecure-api-key.";

function realtimeError(code: string, message: string): string {
  return JSON.stringify({
    type: "error",
    event_id: `event_${crypto.randomUUID().replace(/-/g, "")}`,
    error: { type: "invalid_request_error", code, message, param: null, event_id: null },
  });
}

function isClientEvent(text: string): boolean {
  try {
    const v = JSON.parse(text) as unknown;
    return (
      typeof v === "object" &&
      v !== null &&
      !Array.isArray(v) &&
      typeof (v as { type?: unknown }).type === "string"
    );
  } catch {
    return false;
  }
}

function pipe(client: WorkerWebSocket, upstream: WorkerWebSocket): void {
  const closeBoth = (code: number, reason: string): void => {
    const c =
      code === 1000 ||
      (code >= 3000 && code <= 4999) ||
      (code >= 1001 && code <= 1014 && code !== 1005 && code !== 1006)
        ? code
        : 1000;
    for (const ws of [client, upstream]) {
      try {
        ws.close(c, reason.slice(0, 120));
      } catch {
        // already closed
      }
    }
  };
  client.addEventListener("message", (ev) => {
    if (typeof ev.data !== "string") {
      client.send(realtimeError("binary_not_supported", "send Realtime client events as JSON text"));
      return;
    }
    if (ev.data.length > MAX_SIDEBAND_EVENT_BYTES) {
      closeBoth(1009, "event too large");
      return;
    }
    if (!isClientEvent(ev.data)) {
      client.send(realtimeError("invalid_event", "a client event is a JSON object with a string `type`"));
      return;
    }
    upstream.send(ev.data);
  });
  upstream.addEventListener("message", (ev) => {
    try {
      client.send(ev.data);
    } catch {
      closeBoth(1011, "client gone");
    }
  });
  client.addEventListener("close", (ev) => closeBoth(ev.code, ev.reason));
  upstream.addEventListener("close", (ev) => closeBoth(ev.code, ev.reason));
  client.addEventListener("error", () => closeBoth(1011, "client error"));
  upstream.addEventListener("error", () => closeBoth(1011, "cluster error"));
}

export function registerSideband(app: Hono<AppEnv>): void {
  app.get("/v1/realtime", async (c) => {
    c.set("route", "sideband");
    if ((c.req.header("upgrade") ?? "").toLowerCase() !== "websocket") throw Errors.upgradeRequired();
    const offered = (c.req.header("sec-websocket-protocol") ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const keyProto = offered.find((p) => p.startsWith(KEY_PROTOCOL_PREFIX));
    const principal = await admit(c, {
      create: true,
      graceS: FOLLOW_UP_GRACE_S,
      token: keyProto && !c.req.header("authorization") ? keyProto.slice(KEY_PROTOCOL_PREFIX.length) : null,
    });
    if (principal.kind !== "api_key") throw Errors.clientSecretNotAllowed("open a sideband connection");
    const callId = c.req.query("call_id");
    if (!callId) throw Errors.callIdRequired();
    const cluster = await owningCluster(c, callId);
    const s = await steerScope(c);
    let res: Response;
    try {
      res = await clusterFetch(cluster, s.key, {
        method: "GET",
        path: `/v1/calls/${callId}/events`,
        headers: { upgrade: "websocket" },
        signal: AbortSignal.timeout(tuning(c.env).clusterTimeoutMs),
        nowMs: Date.now(),
      });
    } catch (e) {
      const timeout = (e as { name?: string }).name === "TimeoutError";
      s.monitor.noteFailure(cluster, timeout ? "timeout" : "unreachable", {
        ...s.deps,
        ctx: executionCtx(c),
      });
      throw timeout ? Errors.clusterTimeout(cluster.name) : Errors.clusterUnreachable(cluster.name);
    }
    const upstream = responseWebSocket(res);
    if (res.status !== 101 || !upstream) {
      const status = res.status >= 400 && res.status < 600 ? res.status : 502;
      return c.json(clusterErrorBody(await readJson(res), status), status as 404, {
        "x-relay-cluster": cluster.name,
      });
    }
    const [client, server] = newWebSocketPair();
    server.accept();
    upstream.accept();
    pipe(server, upstream);
    c.get("log").info("sideband joined", { cluster: cluster.name });
    const headers = new Headers({ "x-relay-cluster": cluster.name });
    if (offered.includes(REALTIME_PROTOCOL)) headers.set("sec-websocket-protocol", REALTIME_PROTOCOL);
    return upgradeResponse(client, headers);
  });
}
