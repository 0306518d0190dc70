// Edge → cluster request authentication (shared/signing/request.ts) with a replay window: a
// signature outside the window, with a reused nonce, or missing, is refused with 401.
import type { IncomingHttpHeaders } from "node:http";
import { importSigningKey, NonceWindow, verifyRequest } from "../../shared/signing/request.ts";
import { ApiError } from "./errors.ts";
import { headerGetter } from "./http.ts";

export class RequestVerifier {
  readonly #key: CryptoKey;
  readonly #nonces: NonceWindow;
  readonly #windowMs: number;
  rejected = 0;

  private constructor(key: CryptoKey, windowMs: number) {
    this.#key = key;
    this.#windowMs = windowMs;
    this.#nonces = new NonceWindow(windowMs);
  }

  static async create(secret: Uint8Array, windowMs: number): Promise<RequestVerifier> {
    return new RequestVerifier(await importSigningKey(secret), windowMs);
  }

  /** Resolves when the request is authentic and fresh; rejects with a 401 ApiError otherwise. */
  async verify(
    method: string,
    pathAndQuery: string,
    body: Uint8Array,
    headers: IncomingHttpHeaders,
  ): Promise<void> {
    const now = Date.now();
    const r = await verifyRequest(
      this.#key,
      method,
      pathAndQuery,
      body,
      headerGetter(headers),
      now,
      this.#windowMs,
    );
    if (!r.ok) {
      this.rejected++;
      const why = {
        missing: "the request is not signed",
        malformed: "the signature headers are malformed",
        expired: "the signature timestamp is outside the replay window",
        "bad-signature": "the signature does not match",
      }[r.reason];
      throw new ApiError("unauthorized", why);
    }
    if (!this.#nonces.accept(r.nonce, now)) {
      this.rejected++;
      throw new ApiError("unauthorized", "the nonce was already used (replay)");
    }
  }
}
