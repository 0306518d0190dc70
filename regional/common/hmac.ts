// MAC implementations of the shared interfaces for Node (synchronous, for the hot path).
// HMAC-SHA256 for hints and call ids uses the precomputed-midstate implementation in
// shared/bytes/sha256.ts: two SHA-256 compressions per tag and no allocation, about 3x the rate of
// createHmac for these 9- and 20-byte inputs (bench/wire). Output is byte-identical to
// node:crypto and WebCrypto (test/shared/sha256.test.ts, test/shared/hint.test.ts).
import { createHmac } from "node:crypto";
import { HmacSha256 } from "../../shared/bytes/sha256.ts";
import type { MacSync } from "../../shared/hint/codec.ts";
import type { Keyring } from "../../shared/keys.ts";

export function nodeMac(ring: Keyring): MacSync {
  // Indexed by key id (4 bits on the wire; parseKeyring caps ids at 999): a dense array lookup.
  let maxId = 0;
  for (const k of ring.keys) maxId = Math.max(maxId, k.id);
  const keys: (HmacSha256 | undefined)[] = new Array<HmacSha256 | undefined>(maxId + 1).fill(undefined);
  for (const k of ring.keys) keys[k.id] = new HmacSha256(k.secret);
  return {
    activeKeyId: ring.active.id,
    sign(keyId: number, data: Uint8Array, out: Uint8Array): boolean {
      const key = keys[keyId];
      if (key === undefined) return false;
      key.signInto(data, 0, data.length, out, 0);
      return true;
    },
  };
}

/** HMAC-SHA1, as STUN MESSAGE-INTEGRITY uses (key = the server's ice-pwd). */
export function hmacSha1(key: Uint8Array, data: Uint8Array): Uint8Array {
  return createHmac("sha1", key).update(data).digest();
}
