// CORS for browsers calling the API directly (WHIP clients, the Realtime-style calls API).
// Credentials travel as Bearer tokens, never cookies, so "*" is safe and the default;
// CORS_ORIGINS="https://a.example,https://b.example" narrows it. Timing-Allow-Origin lets a page
// read Server-Timing through the Resource Timing API.
import type { Hono, MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";

const EXPOSE = "Location, ETag, Server-Timing, X-Relay-Cluster, Retry-After, Accept-Post, Accept-Patch, Link";
const ALLOW_HEADERS = "Authorization, Content-Type, If-Match";

export function allowedOrigin(config: string | undefined, origin: string | undefined): string | null {
  const list = (config ?? "*")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0 || list.includes("*")) return "*";
  return origin && list.includes(origin) ? origin : null;
}

export function cors(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.res.status === 101) return;
    const origin = allowedOrigin(c.env.CORS_ORIGINS, c.req.header("origin"));
    if (!origin) return;
    const h = c.res.headers;
    h.set("access-control-allow-origin", origin);
    h.set("access-control-expose-headers", EXPOSE);
    h.set("timing-allow-origin", origin);
    if (origin !== "*") h.append("vary", "Origin");
  };
}

/** Preflights and WHIP's OPTIONS: what each resource accepts. */
export function registerOptions(app: Hono<AppEnv>): void {
  app.options("*", (c) => {
    c.set("route", "options");
    const path = c.req.path;
    const headers: Record<string, string> = {
      "access-control-allow-headers": ALLOW_HEADERS,
      "access-control-max-age": "86400",
    };
    if (path === "/v1/realtime/calls") {
      headers["accept-post"] = "application/sdp, multipart/form-data";
      headers["access-control-allow-methods"] = "POST, OPTIONS";
    } else if (/^\/v1\/realtime\/calls\/[^/]+$/.test(path)) {
      headers["accept-patch"] = "application/trickle-ice-sdpfrag";
      headers["access-control-allow-methods"] = "GET, PATCH, DELETE, OPTIONS";
    } else if (
      /^\/v1\/realtime\/calls\/[^/]+\/hangup$/.test(path) ||
      path === "/v1/realtime/client_secrets"
    ) {
      headers["access-control-allow-methods"] = "POST, OPTIONS";
    } else {
      headers["access-control-allow-methods"] = "GET, OPTIONS";
    }
    headers.allow = headers["access-control-allow-methods"]!;
    return c.body(null, 204, headers);
  });
}
