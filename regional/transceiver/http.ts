// Small node:http helpers: the header access signing.ts verifies with, and the body reader and
// JSON writers of the cluster gateway (gateway.ts, moving to regional/gateway/ on Hono). The
// transceiver API reads requests with api-body.ts.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "./errors.ts";

/** Reads the whole body, refusing more than `limit` bytes (413 body_too_large). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > limit) {
      reject(new ApiError("body_too_large", `body has ${declared} bytes, the limit is ${limit}`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on("data", (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(new ApiError("body_too_large", `body is over the limit of ${limit} bytes`));
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on("error", (e) => {
      if (!failed) reject(e);
    });
  });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, e: ApiError): void {
  const headers: Record<string, string> = {};
  if (e.retryAfter !== undefined) headers["retry-after"] = String(e.retryAfter);
  if (e.status === 405) headers.allow = "GET, POST, PATCH, DELETE";
  sendJson(res, e.status, e.toJSON(), headers);
}

/** Header access in the shape shared/signing/request.ts expects. */
export function headerGetter(h: IncomingHttpHeaders): { get(name: string): string | null } {
  return {
    get(name: string): string | null {
      const v = h[name.toLowerCase()];
      if (v === undefined) return null;
      return Array.isArray(v) ? (v[0] ?? null) : v;
    },
  };
}
