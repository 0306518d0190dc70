// Calls a cluster's signalling API the way the edge does: every request signed with the
// edge↔cluster secret (shared/signing/request.ts).
import { randomBytes } from "node:crypto";
import { importSigningKey, signRequest } from "../../shared/signing/request.ts";

export interface SignedCaller {
  /** JSON-encodes an object body (and sets content-type) unless given a string. */
  call(
    method: string,
    path: string,
    body?: string | object,
    headers?: Record<string, string>,
  ): Promise<Response>;
  signedHeaders(method: string, path: string, body?: Uint8Array): Promise<Record<string, string>>;
}

/** `baseUrl` is read at each call, so it may name a server started later (in beforeAll). */
export function signedCaller(baseUrl: () => string, secret: Uint8Array): SignedCaller {
  const key = importSigningKey(secret);
  const signedHeaders = async (method: string, path: string, body = new Uint8Array(0)) =>
    signRequest(await key, method, path, body, Date.now(), randomBytes(16).toString("base64url"));
  const call = async (
    method: string,
    path: string,
    body?: string | object,
    headers: Record<string, string> = {},
  ) => {
    const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
    const h: Record<string, string> = {
      ...(await signedHeaders(method, path, new TextEncoder().encode(text))),
      ...headers,
    };
    if (body !== undefined && h["content-type"] === undefined) h["content-type"] = "application/json";
    return fetch(baseUrl() + path, { method, headers: h, ...(body !== undefined ? { body: text } : {}) });
  };
  return { call, signedHeaders };
}
