// CORS for browsers calling the API directly (WHIP clients, the Realtime-style calls API, the
// official SDKs). Credentials travel as Bearer tokens, never cookies (no Allow-Credentials), so
// "*" is safe and the default; CORS_ORIGINS="https://a.example,https://b.example" narrows it.
// Allowing a request header lets a page *send* it; it grants nothing: every route still
// authenticates the Authorization header itself. Timing-Allow-Origin lets a page read
// Server-Timing through the Resource Timing API.
import type { Hono, MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";

/** Response headers clients read: WHIP/Realtime follow-ups, steering, and rate limits. */
export const EXPOSE = [
  "Location",
  "ETag",
  "Server-Timing",
  "X-Relay-Cluster",
  "Retry-After",
  "Accept-Post",
  "Accept-Patch",
  "Link",
  "X-Request-Id",
  "RateLimit",
  "RateLimit-Policy",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "X-RateLimit-Limit-Requests",
  "X-RateLimit-Remaining-Requests",
  "X-RateLimit-Reset-Requests",
].join(", ");

/** Always allowed, even when the preflight names none (older browsers, WHIP clients). */
const BASE_ALLOW = ["authorization", "content-type", "if-match"];
/** Named headers besides `x-*` and `openai-*` that browsers and the SDKs send. */
const NAMED = new Set([
  ...BASE_ALLOW,
  "accept",
  "accept-language",
  "content-language",
  "cache-control",
  "idempotency-key",
  "pragma",
]);
/** The SDKs' own headers: x-stainless-*, X-OpenAI-Agents-SDK, OpenAI-Beta, OpenAI-Project, … */
const PREFIXED = /^(x|openai)-[a-z0-9][a-z0-9-]{0,62}$/;
const MAX_REQUESTED = 64;

/**
 * The headers a preflight may send: the base set plus each requested name that is a standard
 * request header or an `x-*` / `openai-*` one. Anything else (e.g. `cookie`, `host`, malformed
 * names) is left out, so the browser refuses that request with a clear CORS error.
 */
export function allowHeaders(requested: string | undefined): string {
  const out = new Set(BASE_ALLOW);
  const names = (requested ?? "").split(",");
  if (names.length <= MAX_REQUESTED) {
    for (const raw of names) {
      const n = raw.trim().toLowerCase();
      if (NAMED.has(n) || PREFIXED.test(n)) out.add(n);
    }
  }
  return [...out].join(", ");
}

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

const PARTICIPANTS = /^\/v1\/realtime\/calls\/[^/]+\/participants$/;

/** Methods of each resource (preflights, WHIP's OPTIONS, and 405's Allow). */
export function methodsFor(path: string): string {
  if (path === "/v1/realtime/calls") return "POST, OPTIONS";
  if (/^\/v1\/realtime\/calls\/[^/]+$/.test(path)) return "GET, PATCH, DELETE, OPTIONS";
  if (PARTICIPANTS.test(path)) return "GET, POST, OPTIONS";
  if (/^\/v1\/realtime\/calls\/[^/]+\/participants\/[^/]+$/.test(path)) return "GET, PATCH, DELETE, OPTIONS";
  if (
    /^\/v1\/realtime\/calls\/[^/]+\/(hangup|accept|reject|refer)$/.test(path) ||
    path === "/v1/realtime/client_secrets"
  ) {
    return "POST, OPTIONS";
  }
  return "GET, OPTIONS";
}

/** Preflights and WHIP's OPTIONS: what each resource accepts. */
export function registerOptions(app: Hono<AppEnv>): void {
  app.options("*", (c) => {
    c.set("route", "options");
    const path = c.req.path;
    const methods = methodsFor(path);
    const headers: Record<string, string> = {
      "access-control-allow-headers": allowHeaders(c.req.header("access-control-request-headers")),
      "access-control-allow-methods": methods,
      "access-control-max-age": "86400",
      vary: "Access-Control-Request-Headers",
      allow: methods,
    };
    if (path === "/v1/realtime/calls" || PARTICIPANTS.test(path))
      headers["accept-post"] = "application/sdp, multipart/form-data";
    else if (/^\/v1\/realtime\/calls\/[^/]+(\/participants\/[^/]+)?$/.test(path))
      headers["accept-patch"] = "application/trickle-ice-sdpfrag";
    return c.body(null, 204, headers);
  });
}
