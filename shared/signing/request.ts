// Edge → cluster request signing (docs/wire-formats.md §6). HMAC-SHA256 over method, path (with
// query), timestamp, nonce and the body's SHA-256, with a shared secret. WebCrypto only, so the
// edge worker and the Node transceiver run the same code. The verifier rejects timestamps outside
// the replay window; callers keep the nonces they accepted inside it (see NonceWindow).
import { encodeBase64 } from "../bytes/base64.ts";
import { constantTimeEqual } from "../bytes/constant-time.ts";

export const SIGNATURE_HEADER = "x-gr-signature";
export const TIMESTAMP_HEADER = "x-gr-timestamp";
export const NONCE_HEADER = "x-gr-nonce";
export const DEFAULT_REPLAY_WINDOW_MS = 30_000;

const enc = new TextEncoder();

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

export async function canonicalRequest(
  method: string,
  pathAndQuery: string,
  timestampMs: number,
  nonce: string,
  body: Uint8Array,
): Promise<Uint8Array> {
  const digest = hex(new Uint8Array(await crypto.subtle.digest("SHA-256", body as BufferSource)));
  return enc.encode(`gr-v1\n${method.toUpperCase()}\n${pathAndQuery}\n${timestampMs}\n${nonce}\n${digest}`);
}

function padTo3(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(bytes.length / 3) * 3);
  out.set(bytes);
  return out;
}

async function mac(key: CryptoKey, data: Uint8Array): Promise<Uint8Array> {
  // 32-byte tag, padded to 33 for unpadded base64; the pad byte is part of the encoding, always 0.
  return padTo3(new Uint8Array(await crypto.subtle.sign("HMAC", key, data as BufferSource)));
}

/** Returns the headers to add to a request. `nonce` must be unique (16 random bytes, base64url). */
export async function signRequest(
  key: CryptoKey,
  method: string,
  pathAndQuery: string,
  body: Uint8Array,
  nowMs: number,
  nonce: string,
): Promise<Record<string, string>> {
  const tag = await mac(key, await canonicalRequest(method, pathAndQuery, nowMs, nonce, body));
  return {
    [SIGNATURE_HEADER]: `v1=${encodeBase64(tag, "url")}`,
    [TIMESTAMP_HEADER]: String(nowMs),
    [NONCE_HEADER]: nonce,
  };
}

export type SignatureCheck =
  | { ok: true; timestampMs: number; nonce: string }
  | { ok: false; reason: "missing" | "malformed" | "expired" | "bad-signature" };

export async function verifyRequest(
  key: CryptoKey,
  method: string,
  pathAndQuery: string,
  body: Uint8Array,
  headers: { get(name: string): string | null },
  nowMs: number,
  windowMs = DEFAULT_REPLAY_WINDOW_MS,
): Promise<SignatureCheck> {
  const sig = headers.get(SIGNATURE_HEADER);
  const ts = headers.get(TIMESTAMP_HEADER);
  const nonce = headers.get(NONCE_HEADER);
  if (!sig || !ts || !nonce) return { ok: false, reason: "missing" };
  if (!/^\d{1,16}$/.test(ts) || !/^[A-Za-z0-9_-]{16,64}$/.test(nonce) || !sig.startsWith("v1=")) {
    return { ok: false, reason: "malformed" };
  }
  const timestampMs = Number(ts);
  if (Math.abs(nowMs - timestampMs) > windowMs) return { ok: false, reason: "expired" };
  const expected = enc.encode(
    `v1=${encodeBase64(await mac(key, await canonicalRequest(method, pathAndQuery, timestampMs, nonce, body)), "url")}`,
  );
  const given = enc.encode(sig);
  if (given.length !== expected.length || !constantTimeEqual(given, 0, expected, 0, expected.length)) {
    return { ok: false, reason: "bad-signature" };
  }
  return { ok: true, timestampMs, nonce };
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
