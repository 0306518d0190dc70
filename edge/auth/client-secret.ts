// Short-lived client secrets: minted by an API key holder's server, handed to a browser, verified
// by any edge location with no storage. Stateless and signed:
//
//   "ek_" + base64url(claims JSON) + "." + base64url(HMAC-SHA256(key, "gr-cs-v1." + claims part))
//
// Claims: { v: 1, k: key id, sub: minting API key id, jti, iat, exp (unix seconds), session?,
// call_id? }. `session` binds the secret to a session configuration the browser cannot change;
// `call_id` scopes it to joining that one call (and nothing else: edge/http.ts admit). The key comes
// from CLIENT_SECRET_KEY ("id:base64,..." keyring, first entry mints; or one bare base64 secret).

import { CALL_ID_PATTERN } from "../../shared/callid/callid.ts";
import { importHmacKeys } from "../../shared/hint/webcrypto.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { fromBase64Url, randomToken, toBase64Url, utf8 } from "../bytes.ts";

export const CLIENT_SECRET_PREFIX = "ek_";
export const MIN_TTL_S = 10;
export const MAX_TTL_S = 7200;
export const DEFAULT_TTL_S = 600;
/** Bound session configurations travel inside the token; keep headers small. */
export const MAX_SESSION_BYTES = 4096;
const MAX_TOKEN_CHARS = 8192;
const DOMAIN = "gr-cs-v1.";

export interface ClientSecretClaims {
  v: 1;
  k: number;
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  session?: Record<string, unknown>;
  call_id?: string;
}

export interface ClientSecretKeys {
  activeId: number;
  keys: Map<number, CryptoKey>;
}

export type ClientSecretCheck =
  | { ok: true; claims: ClientSecretClaims }
  | { ok: false; reason: "malformed" | "unknown-key" | "bad-signature" | "expired" };

export async function importClientSecretKeys(
  text: string,
  what = "CLIENT_SECRET_KEY",
): Promise<ClientSecretKeys> {
  const ring = text.includes(":")
    ? parseKeyring(text, what, 255)
    : parseKeyring(`0:${text.trim()}`, what, 255);
  const keys = await importHmacKeys(ring.keys, ["sign", "verify"]);
  return { activeId: ring.active.id, keys };
}

export async function mintClientSecret(
  keys: ClientSecretKeys,
  input: {
    subject: string;
    nowMs: number;
    ttlS: number;
    session?: Record<string, unknown>;
    callId?: string;
  },
): Promise<{ value: string; claims: ClientSecretClaims }> {
  const iat = Math.floor(input.nowMs / 1000);
  const claims: ClientSecretClaims = {
    v: 1,
    k: keys.activeId,
    sub: input.subject,
    jti: randomToken(12),
    iat,
    exp: iat + input.ttlS,
  };
  if (input.session !== undefined) claims.session = input.session;
  if (input.callId !== undefined) claims.call_id = input.callId;
  const body = toBase64Url(utf8(JSON.stringify(claims)));
  const key = keys.keys.get(keys.activeId)!;
  const tag = new Uint8Array(await crypto.subtle.sign("HMAC", key, utf8(DOMAIN + body) as BufferSource));
  return { value: `${CLIENT_SECRET_PREFIX}${body}.${toBase64Url(tag)}`, claims };
}

export function looksLikeClientSecret(token: string): boolean {
  return token.startsWith(CLIENT_SECRET_PREFIX);
}

/**
 * Checks signature and expiry. `graceS` extends validity past `exp` (follow-ups on a call made
 * with the secret may come long after it expired; see docs/edge.md).
 */
export async function verifyClientSecret(
  token: string,
  keys: ClientSecretKeys,
  nowMs: number,
  graceS = 0,
): Promise<ClientSecretCheck> {
  if (token.length > MAX_TOKEN_CHARS || !token.startsWith(CLIENT_SECRET_PREFIX))
    return { ok: false, reason: "malformed" };
  const dot = token.indexOf(".");
  if (dot < 0) return { ok: false, reason: "malformed" };
  const body = token.slice(CLIENT_SECRET_PREFIX.length, dot);
  const tag = fromBase64Url(token.slice(dot + 1));
  const json = fromBase64Url(body);
  if (tag?.length !== 32 || !json) return { ok: false, reason: "malformed" };
  let claims: ClientSecretClaims;
  try {
    claims = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(json)) as ClientSecretClaims;
  } catch {
    return { ok: false, reason: "malformed" };
  }
  if (
    typeof claims !== "object" ||
    claims === null ||
    claims.v !== 1 ||
    !Number.isInteger(claims.k) ||
    !Number.isInteger(claims.exp) ||
    typeof claims.sub !== "string" ||
    typeof claims.jti !== "string" ||
    (claims.call_id !== undefined &&
      (typeof claims.call_id !== "string" || !CALL_ID_PATTERN.test(claims.call_id)))
  ) {
    return { ok: false, reason: "malformed" };
  }
  const key = keys.keys.get(claims.k);
  if (!key) return { ok: false, reason: "unknown-key" };
  const good = await crypto.subtle.verify(
    "HMAC",
    key,
    tag as BufferSource,
    utf8(DOMAIN + body) as BufferSource,
  );
  if (!good) return { ok: false, reason: "bad-signature" };
  if (nowMs >= (claims.exp + graceS) * 1000) return { ok: false, reason: "expired" };
  return { ok: true, claims };
}
