// Edge → cluster request signing, version 2 (docs/wire-formats.md §6). HMAC-SHA256 under a key of
// the GR_CLUSTER_SECRET keyring over method, path (with query), the target (which cluster and
// which component: "gateway:2", "transceiver:2/5"), the caller (x-gr-caller, may be empty),
// timestamp, nonce and the body's SHA-256. WebCrypto only, so the edge worker and the Node
// gateway and transceivers run the same code. The verifier passes its own identity as the target
// and refuses timestamps outside the replay window or from before it started; callers keep the
// nonces they accepted inside the window (NonceWindow).
import { encodeBase64 } from "../bytes/base64.ts";
import { constantTimeEqual } from "../bytes/constant-time.ts";
import type { Keyring } from "../keys.ts";

export const SIGNATURE_HEADER = "x-gr-signature";
export const TIMESTAMP_HEADER = "x-gr-timestamp";
export const NONCE_HEADER = "x-gr-nonce";
export const TARGET_HEADER = "x-gr-target";
export const CALLER_HEADER = "x-gr-caller";
/** Every header the scheme reads: a forwarder strips them all before it signs again. */
export const SIGNING_HEADERS = [
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  NONCE_HEADER,
  TARGET_HEADER,
  CALLER_HEADER,
];
export const DEFAULT_REPLAY_WINDOW_MS = 5_000;
export const CANONICAL_VERSION = "gr-v2";

const enc = new TextEncoder();

export interface SigningKeys {
  readonly active: { readonly id: number; readonly key: CryptoKey };
  readonly byId: ReadonlyMap<number, CryptoKey>;
}

/** What is signed besides time and nonce. `target` is formatTarget(...) of the receiver. */
export interface SignedParts {
  method: string;
  pathAndQuery: string;
  body: Uint8Array;
  target: string;
  /** formatCaller(...) or "" (probes, follow-ups). */
  caller?: string;
}

function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

export async function importSigningKey(secret: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", secret as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
}

export async function importSigningKeys(ring: Keyring): Promise<SigningKeys> {
  const byId = new Map<number, CryptoKey>();
  for (const k of ring.keys) byId.set(k.id, await importSigningKey(k.secret));
  return { active: { id: ring.active.id, key: byId.get(ring.active.id)! }, byId };
}

const oneLine = (s: string): boolean => !/[\r\n]/.test(s);

export async function canonicalRequest(
  keyId: number,
  p: SignedParts,
  timestampMs: number,
  nonce: string,
): Promise<Uint8Array> {
  const digest = hex(new Uint8Array(await crypto.subtle.digest("SHA-256", p.body as BufferSource)));
  return enc.encode(
    [
      CANONICAL_VERSION,
      String(keyId),
      p.method.toUpperCase(),
      p.pathAndQuery,
      p.target,
      p.caller ?? "",
      String(timestampMs),
      nonce,
      digest,
    ].join("\n"),
  );
}

function padTo3(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(bytes.length / 3) * 3);
  out.set(bytes);
  return out;
}

async function mac(key: CryptoKey, data: Uint8Array): Promise<string> {
  // 32-byte tag, padded to 33 for unpadded base64; the pad byte is part of the encoding, always 0.
  return encodeBase64(
    padTo3(new Uint8Array(await crypto.subtle.sign("HMAC", key, data as BufferSource))),
    "url",
  );
}

/** The headers to add to a request. `nonce` must be unique (16 random bytes, base64url). */
export async function signRequest(
  keys: SigningKeys,
  p: SignedParts,
  nowMs: number,
  nonce: string,
): Promise<Record<string, string>> {
  if (!oneLine(p.pathAndQuery) || !oneLine(p.target) || !oneLine(p.caller ?? "")) {
    throw new RangeError("signRequest: a signed field contains a line break");
  }
  const tag = await mac(keys.active.key, await canonicalRequest(keys.active.id, p, nowMs, nonce));
  const h: Record<string, string> = {
    [SIGNATURE_HEADER]: `v2=${keys.active.id}.${tag}`,
    [TIMESTAMP_HEADER]: String(nowMs),
    [NONCE_HEADER]: nonce,
    [TARGET_HEADER]: p.target,
  };
  if (p.caller) h[CALLER_HEADER] = p.caller;
  return h;
}

export type SignatureFailure =
  | "missing"
  | "malformed"
  | "wrong-target"
  | "expired"
  | "from-future"
  | "before-start"
  | "unknown-key"
  | "bad-signature";

export type SignatureCheck =
  | { ok: true; timestampMs: number; nonce: string; keyId: number; caller: string }
  | { ok: false; reason: SignatureFailure; signedFor?: string };

export interface VerifyOptions {
  /** |now - timestamp| must be at most this (the clock-skew tolerance is the same window). */
  windowMs?: number;
  /** Requests signed before this instant are refused (the verifier's start: nonces before it are lost). */
  notBeforeMs?: number;
}

/**
 * `p.target` is the verifier's own identity, `p.caller` is ignored (read from the headers).
 * Cheap checks first; the MAC is computed only for a fresh request addressed here.
 */
export async function verifyRequest(
  keys: SigningKeys,
  p: SignedParts,
  headers: { get(name: string): string | null },
  nowMs: number,
  o: VerifyOptions = {},
): Promise<SignatureCheck> {
  const windowMs = o.windowMs ?? DEFAULT_REPLAY_WINDOW_MS;
  const sig = headers.get(SIGNATURE_HEADER);
  const ts = headers.get(TIMESTAMP_HEADER);
  const nonce = headers.get(NONCE_HEADER);
  const target = headers.get(TARGET_HEADER);
  const caller = headers.get(CALLER_HEADER) ?? "";
  if (!sig || !ts || !nonce || !target) return { ok: false, reason: "missing" };
  const m = /^v2=(\d{1,3})\.([A-Za-z0-9_-]{44})$/.exec(sig);
  if (!m || !/^\d{1,16}$/.test(ts) || !/^[A-Za-z0-9_-]{16,64}$/.test(nonce)) {
    return { ok: false, reason: "malformed" };
  }
  if (target.length > 64 || caller.length > 160 || !oneLine(caller))
    return { ok: false, reason: "malformed" };
  if (target !== p.target) return { ok: false, reason: "wrong-target", signedFor: target };
  const timestampMs = Number(ts);
  if (nowMs - timestampMs > windowMs) return { ok: false, reason: "expired" };
  if (timestampMs - nowMs > windowMs) return { ok: false, reason: "from-future" };
  if (o.notBeforeMs !== undefined && timestampMs < o.notBeforeMs)
    return { ok: false, reason: "before-start" };
  const keyId = Number(m[1]);
  const key = keys.byId.get(keyId);
  if (!key) return { ok: false, reason: "unknown-key" };
  const expected = enc.encode(
    await mac(key, await canonicalRequest(keyId, { ...p, caller }, timestampMs, nonce)),
  );
  const given = enc.encode(m[2]!);
  if (given.length !== expected.length || !constantTimeEqual(given, 0, expected, 0, expected.length)) {
    return { ok: false, reason: "bad-signature" };
  }
  return { ok: true, timestampMs, nonce, keyId, caller };
}

/** Remembers accepted nonces for the replay window, bounded in size. Time comes in as an argument. */
export class NonceWindow {
  readonly #seen = new Map<string, number>();
  readonly #windowMs: number;
  readonly #max: number;
  constructor(windowMs = DEFAULT_REPLAY_WINDOW_MS, max = 100_000) {
    this.#windowMs = windowMs;
    this.#max = max;
  }
  /** False if the nonce was already used (a replay) or the table is full of live nonces. */
  accept(nonce: string, nowMs: number): boolean {
    if (this.#seen.has(nonce)) return false;
    if (this.#seen.size >= this.#max) {
      for (const [n, t] of this.#seen) {
        if (nowMs - t <= 2 * this.#windowMs) break;
        this.#seen.delete(n);
      }
      if (this.#seen.size >= this.#max) return false;
    }
    this.#seen.set(nonce, nowMs);
    return true;
  }
}
