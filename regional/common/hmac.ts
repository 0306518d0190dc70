// node:crypto implementations of the shared MAC interfaces (synchronous, for the hot path).
import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import type { MacSync } from "../../shared/hint/codec.ts";
import type { Keyring } from "../../shared/keys.ts";

export function nodeMac(ring: Keyring): MacSync {
  const keys = new Map<number, KeyObject>();
  for (const k of ring.keys) keys.set(k.id, createSecretKey(k.secret));
  return {
    activeKeyId: ring.active.id,
    sign(keyId: number, data: Uint8Array, out: Uint8Array): boolean {
      const key = keys.get(keyId);
      if (key === undefined) return false;
      out.set(createHmac("sha256", key).update(data).digest());
      return true;
    },
  };
}

/** HMAC-SHA1, as STUN MESSAGE-INTEGRITY uses (key = the server's ice-pwd). */
export function hmacSha1(key: Uint8Array, data: Uint8Array): Uint8Array {
  return createHmac("sha1", key).update(data).digest();
}
