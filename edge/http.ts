// Request plumbing shared by the routes: admission (rate limits + auth), capped body reads and
// media types.
import type { Context } from "hono";
import { authenticate, bearerToken, type Principal } from "./auth/authenticate.ts";
import { apiKeyHashes, clientSecretKeys, tuning } from "./config.ts";
import type { AppEnv } from "./env.ts";
import { Errors } from "./errors.ts";
import { limiters } from "./runtime.ts";

export const MAX_BODY_BYTES = 64 * 1024;
/** Follow-ups on a call made with a client secret are accepted this long after it expired. */
export const FOLLOW_UP_GRACE_S = 3600;

export function clientIp(c: Context<AppEnv>): string {
  return c.req.header("cf-connecting-ip") ?? "unknown";
}

export interface AdmitOptions {
  /** Creating work (calls, secrets, sockets) also counts against the credential's limit. */
  create: boolean;
  /** Token found elsewhere than the Authorization header (WebSocket subprotocol). */
  token?: string | null;
  graceS?: number;
  /**
   * The call this request joins or acts on as a participant. A client secret scoped to a call
   * is admitted only where this names that call; every other route leaves it unset.
   */
  call?: string;
}

/** The per-client-address limit alone (public routes). */
export async function admitIp(c: Context<AppEnv>): Promise<void> {
  const ipCheck = await limiters(c.env, tuning(c.env)).ip.limit(`ip:${clientIp(c)}`, Date.now());
  if (!ipCheck.ok) throw Errors.rateLimited("ip", ipCheck.retryAfterS);
}

/** Per-IP limit, then authentication, then (for creations) the per-credential limit. */
export async function admit(c: Context<AppEnv>, o: AdmitOptions): Promise<Principal> {
  await admitIp(c);
  const now = Date.now();
  const token = o.token ?? bearerToken(c.req.header("authorization"));
  const [hashes, secrets] = await Promise.all([apiKeyHashes(c.env), clientSecretKeys(c.env)]);
  const principal = await authenticate(token, hashes, secrets, now, o.graceS ?? 0);
  if (principal.kind === "client_secret" && principal.callId !== undefined && principal.callId !== o.call)
    throw Errors.secretScoped();
  if (o.create) {
    const bucket = principal.kind === "api_key" ? `key:${principal.id}` : `cs:${principal.id}`;
    const keyCheck = await limiters(c.env, tuning(c.env)).key.limit(bucket, now);
    if (!keyCheck.ok) throw Errors.rateLimited("key", keyCheck.retryAfterS);
  }
  return principal;
}

/** The media type without parameters, lower-cased ("" when absent). */
export function mediaType(header: string | undefined | null): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}

/** Reads the body, refusing more than `max` bytes without buffering them (413). */
export async function readBody(req: Request, max = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared && Number(declared) > max) throw Errors.tooLarge(max);
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw Errors.tooLarge(max);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let off = 0;
  for (const ch of chunks) {
    out.set(ch, off);
    off += ch.byteLength;
  }
  return out;
}

export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw Errors.invalidRequest("invalid_encoding", `${what} is not valid UTF-8`);
  }
}
