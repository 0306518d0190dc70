// Calls a cluster's signalling API the way the edge does: every request signed with the
// edge↔cluster keyring (shared/signing/request.ts) for one target. The default target is what
// most tests start: cluster 1, transceiver 1. An `x-gr-caller` header given to call() is signed
// as the caller (setup limits).
import { randomBytes } from "node:crypto";
import type { Keyring } from "../../shared/keys.ts";
import { CALLER_HEADER, importSigningKeys, signRequest } from "../../shared/signing/request.ts";
import { formatTarget, type SignTarget } from "../../shared/signing/target.ts";

export interface SignedCaller {
  /** JSON-encodes an object body (and sets content-type) unless given a string. */
  call(
    method: string,
    path: string,
    body?: string | object,
    headers?: Record<string, string>,
  ): Promise<Response>;
  signedHeaders(
    method: string,
    path: string,
    body?: Uint8Array,
    caller?: string,
  ): Promise<Record<string, string>>;
}

export const keyringOf = (secret: Uint8Array | Keyring): Keyring =>
  secret instanceof Uint8Array ? { active: { id: 0, secret }, keys: [{ id: 0, secret }] } : secret;

/** `baseUrl` is read at each call, so it may name a server started later (in beforeAll). */
export function signedCaller(
  baseUrl: () => string,
  secret: Uint8Array | Keyring,
  target: SignTarget = { clusterId: 1, transceiverId: 1 },
): SignedCaller {
  const keys = importSigningKeys(keyringOf(secret));
  const signedHeaders = async (method: string, path: string, body = new Uint8Array(0), caller = "") =>
    signRequest(
      await keys,
      { method, pathAndQuery: path, body, target: formatTarget(target), caller },
      Date.now(),
      randomBytes(16).toString("base64url"),
    );
  const call = async (
    method: string,
    path: string,
    body?: string | object,
    headers: Record<string, string> = {},
  ) => {
    const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
    const { [CALLER_HEADER]: caller, ...rest } = headers;
    const h: Record<string, string> = {
      ...(await signedHeaders(method, path, new TextEncoder().encode(text), caller)),
      ...rest,
    };
    if (body !== undefined && h["content-type"] === undefined) h["content-type"] = "application/json";
    return fetch(baseUrl() + path, { method, headers: h, ...(body !== undefined ? { body: text } : {}) });
  };
  return { call, signedHeaders };
}
