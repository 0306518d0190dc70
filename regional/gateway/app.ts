// The gateway's HTTP routes on Hono. Every /v1 request is verified (401 before anything else),
// then: POST /v1/calls and POST /v1/legs go to the least loaded usable member (the next one on a
// 503 or a connection failure); /v1/calls/{callId} and its /participants[/{pid}] go where the
// call lives (the transceiver its id names, or the one it was resumed on: moved.ts), and POST on
// the call resumes it (resume.ts). A call whose transceiver failed is answered here
// (routing.ts). Errors travel as ApiError to `onError`.
import type { IncomingMessage } from "node:http";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { PROMETHEUS_CONTENT_TYPE } from "../common/metrics.ts";
import { ApiError } from "../transceiver/errors.ts";
import { routeToCall } from "./follow-up.ts";
import type { Gateway } from "./gateway.ts";
import { type CallResource, transceiverOfCallId } from "./routing.ts";
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

  /** POST /v1/calls and POST /v1/legs: a new call (a leg is one) on the least loaded member. */
  const create = (path: string, route: string) =>
    app.all(path, limit, async (c) => {
      try {
        const { target, body } = await verified(c);
        if (c.req.method !== "POST")
          throw new ApiError("method_not_allowed", `${c.req.method} is not allowed on ${path}`);
        const up = await g.create(target, c.req.raw.headers, body);
        g.count(route, up.status);
        return reply(up);
      } catch (e) {
        if (e instanceof ApiError) g.count(route, e.status);
        throw e;
      }
    });
  create("/v1/calls", "calls");
  create("/v1/legs", "legs");

  /**
   * Where the call lives: the transceiver its id names, or the one it was moved to. POST on the
   * call itself resumes it; on its participants it admits one at the call's (hub) transceiver.
   */
  const toCall = (path: string, route: string, resource: CallResource) =>
    app.all(path, limit, async (c) => {
      try {
        const { target, body } = await verified(c);
        const callId = c.req.param("id")!;
        const tid = transceiverOfCallId(callId);
        if (tid === undefined) throw new ApiError("call_id_malformed", "call id is malformed");
        const method = c.req.method;
        const owner = g.moved.get(callId) ?? tid;
        if (method === "POST" && resource === "call") {
          const up = await g.resume(callId, owner, target, c.req.raw.headers, body);
          g.count(route, up.status);
          return reply(up);
        }
        const headers = c.req.raw.headers;
        const up = await routeToCall(g, { callId, owner, method, target, headers, body, resource });
        g.count(route, up.status);
        return reply(up);
      } catch (e) {
        if (e instanceof ApiError) g.count(route, e.status);
        throw e;
      }
    });
  toCall("/v1/calls/:id", "call", "call");
  toCall("/v1/calls/:id/participants", "participants", "participants");
  toCall("/v1/calls/:id/participants/:pid", "participant", "participants");

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
