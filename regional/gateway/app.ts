// The gateway's HTTP routes on Hono. Every /v1/calls request is verified (401 before anything
// else), then: POST /v1/calls goes to the least loaded usable member (the next one on a 503 or
// a connection failure); /v1/calls/{callId} goes where the call lives (the transceiver its id
// names, or the one it was resumed on: moved.ts), and POST there resumes it (resume.ts). A call
// whose transceiver failed is answered here (routing.ts). Errors travel as ApiError to `onError`.
import type { IncomingMessage } from "node:http";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { PROMETHEUS_CONTENT_TYPE } from "../common/metrics.ts";
import { ApiError } from "../transceiver/errors.ts";
import type { Gateway } from "./gateway.ts";
import { failedCallAnswer, transceiverOfCallId } from "./routing.ts";
import type { Upstream } from "./upstream.ts";

const MAX_BODY = 256 * 1024;

export type GatewayEnv = { Bindings: { incoming: IncomingMessage } };

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });

const reply = (up: Upstream): Response =>
  new Response(up.status === 204 || up.status === 304 ? null : new Uint8Array(up.body), {
    status: up.status,
    headers: up.headers,
  });

export function gatewayApp(g: Gateway): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();

  app.get("/healthz", () => json(200, g.health()));
  app.get("/readyz", () => {
    const ready = g.candidates().length > 0;
    return json(ready ? 200 : 503, { ready });
  });
  app.get(
    "/metrics",
    () => new Response(g.registry.render(), { headers: { "content-type": PROMETHEUS_CONTENT_TYPE } }),
  );

  const limit = bodyLimit({
    maxSize: MAX_BODY,
    onError: () => {
      throw new ApiError("body_too_large", `body is over the limit of ${MAX_BODY} bytes`);
    },
  });
  /** The raw request target (what the edge signed), the body, after the signature check. */
  const verified = async (c: {
    req: { raw: Request; arrayBuffer(): Promise<ArrayBuffer> };
    env: GatewayEnv["Bindings"];
  }) => {
    const declared = Number(c.req.raw.headers.get("content-length") ?? "0");
    if (declared > MAX_BODY)
      throw new ApiError("body_too_large", `body has ${declared} bytes, the limit is ${MAX_BODY}`);
    const body = new Uint8Array(await c.req.arrayBuffer());
    const target = c.env.incoming.url ?? "/";
    await g.verifier.verify(c.req.raw.method, target, body, c.env.incoming.headers);
    return { target, body };
  };

  app.all("/v1/calls", limit, async (c) => {
    const route = "calls";
    try {
      const { target, body } = await verified(c);
      if (c.req.method !== "POST")
        throw new ApiError("method_not_allowed", `${c.req.method} is not allowed on /v1/calls`);
      const up = await g.create(target, c.req.raw.headers, body);
      g.count(route, up.status);
      return reply(up);
    } catch (e) {
      if (e instanceof ApiError) g.count(route, e.status);
      throw e;
    }
  });

  app.all("/v1/calls/:id", limit, async (c) => {
    const route = "call";
    try {
      const { target, body } = await verified(c);
      const callId = c.req.param("id");
      const tid = transceiverOfCallId(callId);
      if (tid === undefined) throw new ApiError("call_id_malformed", "call id is malformed");
      const method = c.req.method;
      const owner = g.moved.get(callId) ?? tid;
      if (method === "POST") {
        const up = await g.resume(callId, owner, target, c.req.raw.headers, body);
        g.count(route, up.status);
        return reply(up);
      }
      const m = g.members.get(owner);
      const failedAt = g.failedAt(owner);
      if (!m && failedAt === undefined) throw new ApiError("call_id_unknown", "no such call in this cluster");
      if (!m?.healthy) {
        // Its transceiver is down: the call is over, unless another gateway moved it elsewhere.
        const found = await g.findMoved(callId, owner, method, target, c.req.raw.headers, body);
        if (found) {
          g.count(route, found.status);
          return reply(found);
        }
        const a = failedCallAnswer(method, callId, g.config.clusterId, owner, failedAt ?? 0);
        g.count(route, a.status);
        return json(a.status, a.body);
      }
      let up: Upstream;
      try {
        up = await g.upstream.forward(m, method, target, c.req.raw.headers, body);
      } catch (e) {
        g.lost(m, e);
        const a = failedCallAnswer(
          method,
          callId,
          g.config.clusterId,
          owner,
          g.failedAt(owner) ?? Date.now(),
        );
        g.count(route, a.status);
        return json(a.status, a.body);
      }
      // A transceiver that came back after failing does not know the calls it held then.
      if (up.status === 404 && failedAt !== undefined && isUnknownCall(up)) {
        const found = await g.findMoved(callId, owner, method, target, c.req.raw.headers, body);
        if (found) {
          g.count(route, found.status);
          return reply(found);
        }
        const a = failedCallAnswer(method, callId, g.config.clusterId, owner, failedAt);
        g.count(route, a.status);
        return json(a.status, a.body);
      }
      g.count(route, up.status);
      return reply(up);
    } catch (e) {
      if (e instanceof ApiError) g.count(route, e.status);
      throw e;
    }
  });

  app.notFound((c) => {
    throw new ApiError("not_found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`);
  });
  app.onError((e) => {
    const err = e instanceof ApiError ? e : new ApiError("internal", "internal error");
    if (!(e instanceof ApiError)) g.log.error("gateway request failed", { error: e });
    const headers: Record<string, string> = {};
    if (err.retryAfter !== undefined) headers["retry-after"] = String(err.retryAfter);
    if (err.status === 405) headers.allow = "GET, POST, PATCH, DELETE";
    return json(err.status as ContentfulStatusCode, err.toJSON(), headers);
  });
  return app;
}

function isUnknownCall(up: Upstream): boolean {
  try {
    return (
      (JSON.parse(up.body.toString("utf8")) as { error?: { code?: unknown } }).error?.code ===
      "call_id_unknown"
    );
  } catch {
    return false;
  }
}
