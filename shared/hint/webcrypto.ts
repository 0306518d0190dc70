// The same hint verified with WebCrypto (Workers, browsers, Node's globalThis.crypto).
import { decodeBase64 } from "../bytes/base64.ts";
import { constantTimeEqual } from "../bytes/constant-time.ts";
import type { SecretKey } from "../keys.ts";
import {
  HINT_BYTES,
  HINT_CHARS,
  HINT_MAC_BYTES,
  HINT_SIGNED_BYTES,
  HINT_VERSION,
  type HintFields,
  type HintStatus,
  newHintFields,
  readHintFields,
} from "./layout.ts";

/** HMAC-SHA256 CryptoKeys by key id (sign only, unless `usages` says more). */
export async function importHmacKeys(
  keys: readonly SecretKey[],
  usages: KeyUsage[] = ["sign"],
): Promise<Map<number, CryptoKey>> {
  const out = new Map<number, CryptoKey>();
  for (const k of keys) {
    out.set(
      k.id,
      await crypto.subtle.importKey(
        "raw",
        k.secret as BufferSource,
        { name: "HMAC", hash: "SHA-256" },
        false,
        usages,
      ),
    );
  }
  return out;
}

export type HintResult = { ok: true; hint: HintFields } | { ok: false; reason: Exclude<HintStatus, "ok"> };

export async function verifyHintWebCrypto(ufrag: string, keys: Map<number, CryptoKey>): Promise<HintResult> {
  if (ufrag.length !== HINT_CHARS) return { ok: false, reason: "malformed" };
  const bytes = decodeBase64(ufrag, "standard");
  if (!bytes || bytes.length !== HINT_BYTES) return { ok: false, reason: "malformed" };
  const hint = newHintFields();
  readHintFields(bytes, hint);
  if (hint.version !== HINT_VERSION) return { ok: false, reason: "unsupported-version" };
  const key = keys.get(hint.keyId);
  if (!key) return { ok: false, reason: "unknown-key" };
  const tag = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, bytes.subarray(0, HINT_SIGNED_BYTES) as BufferSource),
  );
  return constantTimeEqual(tag, 0, bytes, HINT_SIGNED_BYTES, HINT_MAC_BYTES)
    ? { ok: true, hint }
    : { ok: false, reason: "bad-mac" };
}
