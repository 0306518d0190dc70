// Reading signalling requests for the API (REST and WebSocket): JSON, the create request (the
// shared contract in shared/signalling/), the signed caller, If-Match. Each failure is an ApiError
// naming what is wrong.
import { readCreateCallRequest } from "../../shared/signalling/call-request.ts";
import { type Caller, parseCaller } from "../../shared/signing/caller.ts";
import type { CreateRequest } from "./calls.ts";
import { ApiError } from "./errors.ts";

export const MAX_JSON_BODY = 256 * 1024;

export function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(body));
  } catch (e) {
    throw new ApiError("body_malformed", `body is not JSON: ${(e as Error).message}`);
  }
}

/** Validates the JSON body of a create request (REST and WebSocket offer). */
export function parseCreateBody(v: unknown): CreateRequest {
  const r = readCreateCallRequest(v);
  if (!r.ok) throw new ApiError(r.code, r.message);
  return r.value;
}

/** The signed x-gr-caller value ("" when absent); a malformed one is the signer's bug: 400. */
export function callerOf(signed: string): Caller | undefined {
  if (signed === "") return undefined;
  const c = parseCaller(signed);
  if (!c) throw new ApiError("body_malformed", 'x-gr-caller: expected "key=<12 hex>; net=<prefix>"');
  return c;
}

/** Entity tags of an If-Match value; ["*"] for the wildcard. */
export function parseIfMatch(v: string): string[] {
  if (v.trim() === "*") return ["*"];
  return v
    .split(",")
    .map((t) =>
      t
        .trim()
        .replace(/^W\//, "")
        .replace(/^"(.*)"$/, "$1"),
    )
    .filter((t) => t !== "");
}

/** Media type without parameters, lower-cased. */
export function mediaType(contentType: string | undefined | null): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/** The whole body of a request, refusing more than `limit` bytes (413 body_too_large). */
export async function readBody(req: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > limit)
    throw new ApiError("body_too_large", `body has ${declared} bytes, the limit is ${limit}`);
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new ApiError("body_too_large", `body is over the limit of ${limit} bytes`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
