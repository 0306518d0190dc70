// Resuming a call here whose transceiver failed (issue 18.3): the caller POSTs a new offer to the
// call's URL and the gateway sends it to a sibling, which creates the session under the same call
// id. The id keeps naming the transceiver that minted it; what counts is that it is authentic and
// belongs to this cluster (the MAC is checked here with GR_CALL_ID_KEYS).
import { verifyCallId } from "../../shared/callid/callid.ts";
import type { MacSync } from "../../shared/hint/codec.ts";
import { ApiError } from "./errors.ts";

/**
 * Sent to every live call's client when its transceiver starts draining (issue 18.4): a client
 * that resumes (a new offer POSTed to the call's URL) moves to a sibling now; one that does not
 * keeps its call until it ends or the drain deadline passes.
 */
export const RESUME_REQUIRED = JSON.stringify({ type: "transceiver.resume_required", reason: "drain" });

/** The call id a resumed session takes, after checking it; throws a typed ApiError. */
export function adoptCallId(
  callId: string,
  mac: MacSync,
  clusterId: number,
  live: ReadonlyMap<string, unknown>,
): string {
  const v = verifyCallId(callId, mac);
  if (!v.ok) {
    if (v.reason === "malformed" || v.reason === "unsupported-version")
      throw new ApiError("call_id_malformed", `call id is ${v.reason}`);
    throw new ApiError("call_id_unknown", "no such call");
  }
  if (v.callId.clusterId !== clusterId)
    throw new ApiError("wrong_transceiver", `call belongs to cluster ${v.callId.clusterId}`);
  if (live.has(callId)) throw new ApiError("duplicate_offer", "this call is live here; hang up or PATCH it");
  return callId;
}
