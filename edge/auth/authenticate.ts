// Who is calling: an API key (hashed lookup) or a client secret (signature + expiry).

import { Errors } from "../errors.ts";
import { type ApiKeyHashes, lookupApiKey } from "./api-key.ts";
import { type ClientSecretKeys, looksLikeClientSecret, verifyClientSecret } from "./client-secret.ts";

export type Principal =
  | { kind: "api_key"; id: string }
  | {
      kind: "client_secret";
      /** The secret's own id (jti): its rate-limit bucket. */
      id: string;
      /** The API key that minted it. */
      sub: string;
      session?: Record<string, unknown>;
      /** A secret scoped to one call may only join that call. */
      callId?: string;
      expiresAt: number;
    };

/** The token of "Authorization: Bearer <token>"; throws 401 when absent or malformed. */
export function bearerToken(header: string | null | undefined): string {
  if (!header) throw Errors.missingCredentials();
  const m = /^Bearer +([\x21-\x7e]{1,8192})\s*$/i.exec(header);
  if (!m) throw Errors.badAuthorization();
  return m[1]!;
}

function mintedByListedKey(sub: string, hashes: ApiKeyHashes): boolean {
  if (!/^[0-9a-f]{12}$/.test(sub)) return false;
  for (const h of hashes) if (h.startsWith(sub)) return true;
  return false;
}

export async function authenticate(
  token: string,
  hashes: ApiKeyHashes,
  secretKeys: ClientSecretKeys | null,
  nowMs: number,
  graceS = 0,
): Promise<Principal> {
  if (looksLikeClientSecret(token)) {
    if (!secretKeys) throw Errors.invalidClientSecret();
    const r = await verifyClientSecret(token, secretKeys, nowMs, graceS);
    if (!r.ok) throw r.reason === "expired" ? Errors.expiredClientSecret() : Errors.invalidClientSecret();
    // Revoking an API key (removing its hash) revokes every secret it minted, at once.
    if (!mintedByListedKey(r.claims.sub, hashes)) throw Errors.invalidClientSecret();
    const p: Principal = {
      kind: "client_secret",
      id: r.claims.jti,
      sub: r.claims.sub,
      expiresAt: r.claims.exp,
    };
    if (r.claims.session !== undefined) p.session = r.claims.session;
    if (r.claims.call_id !== undefined) p.callId = r.claims.call_id;
    return p;
  }
  const id = await lookupApiKey(token, hashes);
  if (!id) throw Errors.invalidApiKey();
  return { kind: "api_key", id };
}
