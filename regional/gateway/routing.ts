// Follow-ups route by the call id alone: bytes 3-4 name the transceiver that holds the call (the
// layout only; the edge checked the MAC and the transceiver checks it again). When that
// transceiver has failed, the gateway answers for it: the call is over (`transceiver_failed`).
import { decodeBase64 } from "../../shared/bytes/base64.ts";
import { CALL_ID_BYTES, CALL_ID_LENGTH, CALL_ID_PREFIX } from "../../shared/callid/callid.ts";
import { ApiError } from "../transceiver/errors.ts";

/** The transceiver id inside a call id, or undefined when the id is malformed. */
export function transceiverOfCallId(callId: string): number | undefined {
  if (callId.length !== CALL_ID_LENGTH || !callId.startsWith(CALL_ID_PREFIX)) return undefined;
  const b = decodeBase64(callId.slice(CALL_ID_PREFIX.length), "url");
  if (!b || b.length !== CALL_ID_BYTES) return undefined;
  return (b[3]! << 8) | b[4]!;
}

export const FAILED_REASON = "transceiver_failed";

/** What a follow-up acts on: the call itself, or its participants (the call's conference). */
export type CallResource = "call" | "participants";

/**
 * The answer for a call whose transceiver failed at `failedAt` (ms since epoch, 0 if unknown):
 * GET on the call tells what happened in the shape of the call status; everything else (a join,
 * the roster, a participant) finds the call ended.
 */
export function failedCallAnswer(
  method: string,
  callId: string,
  clusterId: number,
  transceiverId: number,
  failedAt: number,
  resource: CallResource = "call",
): { status: number; body: unknown } {
  if (method === "GET" && resource === "call") {
    return {
      status: 200,
      body: {
        callId,
        state: "ended",
        clusterId,
        transceiverId,
        endReason: FAILED_REASON,
        endedAt: failedAt > 0 ? new Date(failedAt).toISOString() : null,
      },
    };
  }
  const e = new ApiError(
    "call_ended",
    "the call ended: the transceiver that held it failed (transceiver_failed)",
  );
  return { status: e.status, body: e.toJSON() };
}
