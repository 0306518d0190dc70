// POST /v1/realtime/client_secrets: an API key mints a short-lived secret for a browser.
// Body (JSON, optional): { expires_after?: { anchor: "created_at", seconds: 10..7200 }, session?: {...},
// call_id?: "rtc_..." } → 200 { value, expires_at, session, call_id? }. A `call_id` (checked like
// any call id: its MAC under GR_CALL_ID_KEYS) scopes the secret to joining that call only.: `session` is always the effective realtime session (the
// defaults with the given configuration merged over them), as OpenAI's SDK types promise.
// Stateless: any edge location verifies it (auth/client-secret.ts).
import type { Hono } from "hono";
import { CALL_ID_PATTERN, verifyCallIdWebCrypto } from "../../shared/callid/callid.ts";
import { defaultSession, mergeSession } from "../../shared/realtime/session.ts";
import {
  DEFAULT_TTL_S,
  MAX_SESSION_BYTES,
  MAX_TTL_S,
  MIN_TTL_S,
  mintClientSecret,
} from "../auth/client-secret.ts";
import { randomToken } from "../bytes.ts";
import { callIdKeys, clientSecretKeys } from "../config.ts";
import type { AppEnv } from "../env.ts";
import { Errors } from "../errors.ts";
import { admit, decodeUtf8, mediaType, readBody } from "../http.ts";

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export interface SecretRequest {
  ttlS: number;
  session?: Record<string, unknown>;
  callId?: string;
}

export function parseSecretRequest(text: string): SecretRequest {
  if (text.trim() === "") return { ttlS: DEFAULT_TTL_S };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw Errors.invalidRequest("invalid_json", "the body is not valid JSON");
  }
  if (!isObject(v)) throw Errors.invalidRequest("invalid_json", "the body must be a JSON object");
  let ttlS = DEFAULT_TTL_S;
  if (v.expires_after !== undefined) {
    const e = v.expires_after;
    if (!isObject(e)) throw Errors.invalidRequest("invalid_expires_after", "expires_after must be an object");
    if (e.anchor !== undefined && e.anchor !== "created_at") {
      throw Errors.invalidRequest("invalid_expires_after", 'expires_after.anchor must be "created_at"');
    }
    if (e.seconds !== undefined) {
      if (
        !Number.isInteger(e.seconds) ||
        (e.seconds as number) < MIN_TTL_S ||
        (e.seconds as number) > MAX_TTL_S
      ) {
        throw Errors.invalidRequest(
          "invalid_expires_after",
          `expires_after.seconds must be an integer ${MIN_TTL_S}-${MAX_TTL_S}`,
        );
      }
      ttlS = e.seconds as number;
    }
  }
  const out: SecretRequest = { ttlS };
  if (v.call_id !== undefined) {
    if (typeof v.call_id !== "string" || !CALL_ID_PATTERN.test(v.call_id))
      throw Errors.invalidRequest("invalid_call_id", "call_id must be a call id (rtc_...)");
    out.callId = v.call_id;
  }
  if (v.session === undefined) return out;
  if (!isObject(v.session)) throw Errors.invalidRequest("invalid_session", "session must be a JSON object");
  if (v.session.type !== undefined && v.session.type !== "realtime") {
    throw Errors.invalidRequest(
      "unsupported_session_type",
      'session.type must be "realtime" (transcription sessions are not offered here)',
    );
  }
  if (new TextEncoder().encode(JSON.stringify(v.session)).length > MAX_SESSION_BYTES) {
    throw Errors.invalidRequest(
      "session_too_large",
      `a bound session may be at most ${MAX_SESSION_BYTES} bytes of JSON`,
    );
  }
  out.session = v.session;
  return out;
}

export function registerClientSecrets(app: Hono<AppEnv>): void {
  app.post("/v1/realtime/client_secrets", async (c) => {
    c.set("route", "client_secrets");
    const principal = await admit(c, { create: true });
    if (principal.kind !== "api_key") throw Errors.clientSecretNotAllowed("mint client secrets");
    const keys = await clientSecretKeys(c.env);
    if (!keys) throw Errors.misconfigured("CLIENT_SECRET_KEY is not set: client secrets are disabled");
    const type = mediaType(c.req.header("content-type"));
    if (type !== "" && type !== "application/json") {
      throw Errors.unsupportedType(type, "application/json", { accept: "application/json" });
    }
    const req = parseSecretRequest(decodeUtf8(await readBody(c.req.raw), "the body"));
    if (req.callId !== undefined) {
      // A scope naming no call of ours would mint a secret good for nothing: refuse it now.
      const r = await verifyCallIdWebCrypto(req.callId, await callIdKeys(c.env));
      if (!r.ok) throw Errors.invalidRequest("invalid_call_id", "call_id is not a call of this service");
    }
    const minted = await mintClientSecret(keys, {
      subject: principal.id,
      nowMs: Date.now(),
      ttlS: req.ttlS,
      ...(req.session !== undefined ? { session: req.session } : {}),
      ...(req.callId !== undefined ? { callId: req.callId } : {}),
    });
    c.header("cache-control", "no-store");
    const base = defaultSession(`sess_${randomToken(12)}`, minted.claims.exp);
    return c.json({
      value: minted.value,
      expires_at: minted.claims.exp,
      session: mergeSession(base, req.session),
      ...(req.callId !== undefined ? { call_id: req.callId } : {}),
    });
  });
}
