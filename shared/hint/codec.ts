// Mint and verify routing hints synchronously. The MAC comes in as a small interface so this
// file stays runtime-neutral: relays and transceivers pass node:crypto (regional/common/hmac.ts);
// webcrypto.ts verifies the same bytes with WebCrypto.
import { decodeBase64Into, encodeBase64 } from "../bytes/base64.ts";
import { constantTimeEqual } from "../bytes/constant-time.ts";
import {
  HINT_BYTES,
  HINT_CHARS,
  HINT_MAC_BYTES,
  HINT_SIGNED_BYTES,
  HINT_VERSION,
  type HintFields,
  type HintStatus,
  readHintFields,
  writeHintSigned,
} from "./layout.ts";

/** HMAC-SHA256 under a key id: writes the 32-byte tag into `out`; false if the key id is unknown. */
export interface MacSync {
  sign(keyId: number, data: Uint8Array, out: Uint8Array): boolean;
  readonly activeKeyId: number;
}

export interface MintHintInput {
  clusterId: number;
  transceiverId: number;
  /** 4 random bytes from a CSPRNG. */
  random: Uint8Array;
}

/** Returns the 24-character ufrag for a session. */
export function mintHint(input: MintHintInput, mac: MacSync): string {
  const bytes = new Uint8Array(HINT_BYTES);
  const tag = new Uint8Array(32);
  writeHintSigned(bytes, mac.activeKeyId, input.clusterId, input.transceiverId, input.random);
  if (!mac.sign(mac.activeKeyId, bytes.subarray(0, HINT_SIGNED_BYTES), tag)) {
    throw new RangeError(`hint: active key id ${mac.activeKeyId} is not in the keyring`);
  }
  bytes.set(tag.subarray(0, HINT_MAC_BYTES), HINT_SIGNED_BYTES);
  return encodeBase64(bytes, "standard");
}

/**
 * A verifier with its own scratch buffers: `verify` allocates nothing of its own (the HMAC
 * implementation may). One per worker; not re-entrant.
 */
export class HintVerifier {
  readonly #mac: MacSync;
  readonly #bytes = new Uint8Array(HINT_BYTES);
  readonly #tag = new Uint8Array(32);
  readonly #signed: Uint8Array;

  constructor(mac: MacSync) {
    this.#mac = mac;
    this.#signed = this.#bytes.subarray(0, HINT_SIGNED_BYTES);
  }

  /** Verifies the ufrag at `src[off..off+len]`; on "ok" the fields are in `out`. */
  verify(src: Uint8Array, off: number, len: number, out: HintFields): HintStatus {
    if (len !== HINT_CHARS) return "malformed";
    if (decodeBase64Into(src, off, len, this.#bytes, "standard") !== HINT_BYTES) return "malformed";
    readHintFields(this.#bytes, out);
    if (out.version !== HINT_VERSION) return "unsupported-version";
    if (!this.#mac.sign(out.keyId, this.#signed, this.#tag)) return "unknown-key";
    return constantTimeEqual(this.#tag, 0, this.#bytes, HINT_SIGNED_BYTES, HINT_MAC_BYTES) ? "ok" : "bad-mac";
  }

  /** Convenience for control-plane callers holding a string ufrag. */
  verifyString(ufrag: string, out: HintFields): HintStatus {
    if (ufrag.length !== HINT_CHARS) return "malformed";
    const src = new Uint8Array(HINT_CHARS);
    for (let i = 0; i < HINT_CHARS; i++) {
      const c = ufrag.charCodeAt(i);
      if (c > 127) return "malformed";
      src[i] = c;
    }
    return this.verify(src, 0, HINT_CHARS, out);
  }
}
