// The edge's use of the one offer check (shared/sdp/offer.ts, the transceiver runs the same):
// an offer no transceiver could answer is refused here, before it crosses the ocean, with the
// error body the cluster would have sent for it, except that the structural problems keep the
// edge's own 400 `invalid_sdp`. Never throws; the text is the caller's.
import { inspectOffer, type OfferProblem } from "../shared/sdp/offer.ts";
import { EdgeError, Errors } from "./errors.ts";

export type SdpCheck = { ok: true } | { ok: false; code: OfferProblem; message: string };

export function checkSdpOffer(text: string): SdpCheck {
  const r = inspectOffer(text);
  return r.ok ? { ok: true } : { ok: false, code: r.code, message: r.message };
}

/** The edge's error for a refused offer. */
export function offerError(code: OfferProblem, message: string): EdgeError {
  switch (code) {
    case "sdp_malformed":
    case "no_audio":
      return Errors.invalidSdp(message);
    case "sdp_too_large":
      return new EdgeError(413, "invalid_request_error", code, message);
    default:
      // What the transceiver answers for an offer it cannot take (422, docs/transceiver.md).
      return new EdgeError(422, "invalid_request_error", code, message);
  }
}
