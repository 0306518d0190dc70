// Edge → cluster request authentication (shared/signing/request.ts) for the gateway and the
// transceivers. Each verifier knows its own identity ("gateway:2", "transceiver:2/5") and accepts
// only requests signed for it, fresh (inside the replay window), signed after this process
// started (its nonce memory begins then), and with a nonce it has not seen. Anything else is a
// 401 naming the reason; `rejected` counts them by reason.

import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { Keyring } from "../../shared/keys.ts";
import {
  importSigningKeys,
  NonceWindow,
  type SignatureFailure,
  type SignedParts,
  type SigningKeys,
  signRequest,
  verifyRequest,
} from "../../shared/signing/request.ts";
import { formatTarget, type SignTarget } from "../../shared/signing/target.ts";
import { ApiError } from "./errors.ts";

export type RejectReason = SignatureFailure | "replayed";

const WHY: Record<RejectReason, string> = {
  missing: "the request is not signed",
  malformed: "the signature headers are malformed",
  "wrong-target": "the request was signed for another cluster or component",
  expired: "the signature timestamp is older than the replay window",
  "from-future": "the signature timestamp is ahead of this clock by more than the replay window",
  "before-start": "the request was signed before this process started",
  "unknown-key": "the signing key is not in GR_CLUSTER_SECRET",
  "bad-signature": "the signature does not match",
  replayed: "the nonce was already used (replay)",
};

/** A nonce store shared by several processes (Redis SET NX PX); optional. */
export interface SharedNonces {
  /** True when this nonce was not claimed before (within ttlMs). */
  claim(nonce: string, ttlMs: number): Promise<boolean>;
}

export interface VerifierOptions {
  windowMs: number;
  shared?: SharedNonces;
  now?: () => number;
  /** Told of every refusal (metrics), and of every claim skipped because the store failed. */
  onReject?: (reason: RejectReason) => void;
  onSharedFailure?: () => void;
}

export class RequestVerifier {
  readonly identity: string;
  readonly startedAt: number;
  readonly #keys: SigningKeys;
  readonly #nonces: NonceWindow;
  readonly #windowMs: number;
  readonly #shared: SharedNonces | undefined;
  readonly #now: () => number;
  readonly #o: VerifierOptions;
  readonly rejected = new Map<RejectReason, number>();
  /** Claims skipped because the shared store failed (the local checks still applied). */
  sharedFailures = 0;

  private constructor(keys: SigningKeys, self: SignTarget, o: VerifierOptions) {
    this.#keys = keys;
    this.identity = formatTarget(self);
    this.#windowMs = o.windowMs;
    this.#nonces = new NonceWindow(o.windowMs);
    this.#shared = o.shared;
    this.#now = o.now ?? Date.now;
    this.#o = o;
    this.startedAt = this.#now();
  }

  static async create(ring: Keyring, self: SignTarget, o: VerifierOptions): Promise<RequestVerifier> {
    return new RequestVerifier(await importSigningKeys(ring), self, o);
  }

  get rejectedTotal(): number {
    let n = 0;
    for (const v of this.rejected.values()) n += v;
    return n;
  }

  #reject(reason: RejectReason, signedFor?: string): never {
    this.rejected.set(reason, (this.rejected.get(reason) ?? 0) + 1);
    this.#o.onReject?.(reason);
    const where = reason === "wrong-target" ? ` (signed for ${signedFor}, this is ${this.identity})` : "";
    throw new ApiError("unauthorized", `${WHY[reason]}${where}`);
  }

  /** Resolves with the signed caller ("" when none) when the request is authentic and fresh; rejects with a 401 ApiError otherwise. */
  async verify(
    method: string,
    pathAndQuery: string,
    body: Uint8Array,
    headers: IncomingHttpHeaders,
  ): Promise<string> {
    const now = this.#now();
    const r = await verifyRequest(
      this.#keys,
      { method, pathAndQuery, body, target: this.identity },
      headerGetter(headers),
      now,
      { windowMs: this.#windowMs, notBeforeMs: this.startedAt },
    );
    if (!r.ok) this.#reject(r.reason, r.signedFor);
    if (!this.#nonces.accept(r.nonce, now)) this.#reject("replayed");
    if (this.#shared) {
      let fresh: boolean;
      try {
        fresh = await this.#shared.claim(`${this.identity}|${r.nonce}`, 2 * this.#windowMs);
      } catch {
        // The store is down: the process-local nonces, window and start-time rule still hold.
        this.sharedFailures++;
        this.#o.onSharedFailure?.();
        fresh = true;
      }
      if (!fresh) this.#reject("replayed");
    }
    return r.caller;
  }
}

/** Signs requests the gateway forwards to one of its transceivers (the same cluster keyring). */
export class RequestSigner {
  readonly #keys: SigningKeys;
  private constructor(keys: SigningKeys) {
    this.#keys = keys;
  }
  static async create(ring: Keyring): Promise<RequestSigner> {
    return new RequestSigner(await importSigningKeys(ring));
  }
  sign(p: SignedParts, to: SignTarget): Promise<Record<string, string>> {
    return signRequest(
      this.#keys,
      { ...p, target: formatTarget(to) },
      Date.now(),
      randomBytes(16).toString("base64url"),
    );
  }
}

/** Header access in the shape shared/signing/request.ts expects. */
function headerGetter(h: IncomingHttpHeaders): { get(name: string): string | null } {
  return {
    get(name: string): string | null {
      const v = h[name.toLowerCase()];
      if (v === undefined) return null;
      return Array.isArray(v) ? (v[0] ?? null) : v;
    },
  };
}
