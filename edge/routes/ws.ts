// GET /v1/realtime/ws (Upgrade: websocket): signalling as JSON messages, proxied to the nearest
// healthy cluster's /v1/ws over a signed upgrade. Browsers cannot set Authorization on a
// WebSocket, so the token may also come as a subprotocol: `gr-realtime, gr-auth.<token>` (the
// server answers `gr-realtime`, never echoing the token).
//
// Client → edge: {type:"offer", sdp, session?} and {type:"hangup"}. The edge checks the SDP,
// applies a bound session, and adds `client` and `ingress` itself (a client cannot set them).
// Cluster → client messages pass through untouched ({type:"answer"|"event"|"error"|"ended"}).
import type { Context, Hono } from "hono";
import type { Principal } from "../auth/authenticate.ts";
import { callerFor } from "../auth/caller.ts";
import { clusterFetch, parseRetryAfter } from "../cluster/client.ts";
import type { AppEnv } from "../env.ts";
import { Errors } from "../errors.ts";
import { admit, clientIp, MAX_BODY_BYTES } from "../http.ts";
import { redactIp } from "../log.ts";
import { newWebSocketPair, responseWebSocket, upgradeResponse, type WorkerWebSocket } from "../platform.ts";
import { checkSdpOffer, offerError } from "../sdp.ts";
import { type ClientLocation, clusterClient, regionLabel } from "../steering/client.ts";
import { serverTiming, steer, steerScope } from "../steering/steer.ts";
import { resolveSession } from "./calls.ts";

export const WS_PROTOCOL = "gr-realtime";
const AUTH_PROTOCOL_PREFIX = "gr-auth.";

function protocols(c: Context<AppEnv>): string[] {
  return (c.req.header("sec-websocket-protocol") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Close codes a peer may send (1005, 1006 and 1015 are reserved for reporting). */
function sendableCode(code: number): number {
  return code === 1000 ||
    (code >= 1001 && code <= 1014 && code !== 1005 && code !== 1006) ||
    (code >= 3000 && code <= 4999)
    ? code
    : 1000;
}

function wsError(code: string, message: string): string {
  return JSON.stringify({ type: "error", error: { type: "invalid_request_error", code, message } });
}

function isAnswer(text: string): boolean {
  try {
    return (JSON.parse(text) as { type?: unknown } | null)?.type === "answer";
  } catch {
    return false;
  }
}

interface Bridge {
  client: WorkerWebSocket;
  upstream: WorkerWebSocket;
  principal: Principal;
  location: ClientLocation;
  ingressVip: string;
  onAnswer: (offerToAnswerMs: number) => void;
}

/** Client → cluster: only offers and hang-ups, checked and enriched. */
function relay(b: Bridge): void {
  let offerAt = 0;
  const closeBoth = (code: number, reason: string): void => {
    for (const ws of [b.client, b.upstream]) {
      try {
        ws.close(sendableCode(code), reason.slice(0, 120));
      } catch {
        // already closed
      }
    }
  };
  b.client.addEventListener("message", (ev) => {
    if (typeof ev.data !== "string") {
      b.client.send(wsError("binary_not_supported", "send JSON text messages"));
      return;
    }
    if (ev.data.length > MAX_BODY_BYTES) {
      closeBoth(1009, "message too large");
      return;
    }
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(ev.data) as Record<string, unknown>;
      if (typeof msg !== "object" || msg === null || Array.isArray(msg)) throw new Error("not an object");
    } catch {
      b.client.send(wsError("invalid_json", "messages must be JSON objects"));
      return;
    }
    if (msg.type === "hangup") {
      b.upstream.send(JSON.stringify({ type: "hangup" }));
      return;
    }
    if (msg.type !== "offer") {
      b.client.send(wsError("unknown_message_type", 'expected {"type":"offer"} or {"type":"hangup"}'));
      return;
    }
    if (typeof msg.sdp !== "string") {
      b.client.send(wsError("invalid_sdp", "the offer has no sdp string"));
      return;
    }
    const check = checkSdpOffer(msg.sdp);
    if (!check.ok) {
      const e = offerError(check.code, check.message);
      b.client.send(wsError(e.code, e.message));
      return;
    }
    const given =
      msg.session !== undefined &&
      typeof msg.session === "object" &&
      msg.session !== null &&
      !Array.isArray(msg.session)
        ? (msg.session as Record<string, unknown>)
        : undefined;
    let session: Record<string, unknown> | undefined;
    try {
      session = resolveSession(b.principal, given);
    } catch (e) {
      b.client.send(wsError("session_bound", (e as Error).message));
      return;
    }
    const l = b.location;
    offerAt = Date.now();
    b.upstream.send(
      JSON.stringify({
        type: "offer",
        sdp: msg.sdp,
        ...(session !== undefined ? { session } : {}),
        client: clusterClient(l),
        ingress: { vip: b.ingressVip },
      }),
    );
  });
  b.upstream.addEventListener("message", (ev) => {
    if (offerAt > 0 && typeof ev.data === "string" && isAnswer(ev.data)) {
      b.onAnswer(Date.now() - offerAt);
      offerAt = 0;
    }
    try {
      b.client.send(ev.data);
    } catch {
      closeBoth(1011, "client gone");
    }
  });
  b.client.addEventListener("close", (ev) => closeBoth(ev.code, ev.reason));
  b.upstream.addEventListener("close", (ev) => upstreamClosed(b, ev.code, ev.reason, closeBoth));
  b.client.addEventListener("error", () => closeBoth(1011, "client error"));
  b.upstream.addEventListener("error", () => closeBoth(1011, "cluster error"));
}

/**
 * The cluster's socket closed. An abnormal close (1006: the connection dropped without a close
 * frame, e.g. the cluster or its transceiver died) is a server failure to the client: a
 * Realtime-shaped error event, then 1011, never a "normal" 1000.
 */
function upstreamClosed(
  b: Bridge,
  code: number,
  reason: string,
  closeBoth: (code: number, reason: string) => void,
): void {
  if (code !== 1006) {
    closeBoth(code, reason);
    return;
  }
  try {
    b.client.send(
      JSON.stringify({
        type: "error",
        error: {
          type: "server_error",
          code: "cluster_connection_lost",
          message: "the cluster connection was lost",
        },
      }),
    );
  } catch {
    // the client is gone too
  }
  closeBoth(1011, "cluster connection lost");
}

export function registerWs(app: Hono<AppEnv>): void {
  app.get("/v1/realtime/ws", async (c) => {
    c.set("route", "ws");
    if ((c.req.header("upgrade") ?? "").toLowerCase() !== "websocket") throw Errors.upgradeRequired();
    const offered = protocols(c);
    const authProto = offered.find((p) => p.startsWith(AUTH_PROTOCOL_PREFIX));
    if (offered.length > 0 && !offered.includes(WS_PROTOCOL)) {
      throw Errors.invalidRequest("unsupported_subprotocol", `offer the "${WS_PROTOCOL}" subprotocol`);
    }
    const principal = await admit(c, {
      create: true,
      token:
        authProto && !c.req.header("authorization") ? authProto.slice(AUTH_PROTOCOL_PREFIX.length) : null,
    });
    const s = await steerScope(c);
    const { plan, result } = await steer<WorkerWebSocket>(c, s, async (cluster, signal) => {
      const res = await clusterFetch(cluster, s.key, {
        method: "GET",
        path: "/v1/ws",
        headers: { upgrade: "websocket" },
        signal,
        nowMs: Date.now(),
        caller: callerFor(principal, clientIp(c)),
      });
      const ws = responseWebSocket(res);
      if (res.status === 101 && ws) return { kind: "done", value: ws };
      await res.body?.cancel();
      if (res.status === 503) {
        return {
          kind: "retry",
          reason: "full",
          retryAfterS: parseRetryAfter(res.headers.get("retry-after")),
          status: 503,
        };
      }
      return { kind: "retry", reason: "error", status: res.status };
    });
    const upstream = result.value;
    const [client, server] = newWebSocketPair();
    server.accept();
    upstream.accept();
    const cluster = result.cluster;
    const region = regionLabel(s.client);
    const connectMs = Date.now() - c.get("startMs");
    relay({
      client: server,
      upstream,
      principal,
      location: s.client,
      ingressVip: s.topo.topology.globalVip,
      onAnswer: (ms) =>
        c.get("telemetry").callSteered({
          route: "ws",
          status: 200,
          region,
          cluster: cluster.name,
          colo: s.client.colo ?? "",
          country: s.client.country ?? "",
          basis: plan.basis,
          totalMs: connectMs + ms,
          clusterMs: ms,
          attempts: result.attempts,
        }),
    });
    c.get("log").info("websocket steered", {
      cluster: cluster.name,
      attempts: result.attempts,
      basis: plan.basis,
      connectMs,
      colo: s.client.colo,
      ip: redactIp(clientIp(c)),
    });
    const headers = new Headers({
      "x-relay-cluster": cluster.name,
      "server-timing": serverTiming(connectMs, result.hopMs, cluster.name, result.attempts, plan.basis),
    });
    if (offered.length > 0) headers.set("sec-websocket-protocol", WS_PROTOCOL);
    return upgradeResponse(client, headers);
  });
}
