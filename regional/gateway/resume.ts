// Resume (issue 18.3): a call whose transceiver failed gets a new offer POSTed to its URL and is
// created anew, same call id, on a sibling (or on its own transceiver, restarted). The gateway
// remembers where it lives now (moved.ts); a replica that does not know asks the live members.
import { ApiError } from "../transceiver/errors.ts";
import type { Gateway } from "./gateway.ts";
import type { Member } from "./members.ts";
import { errorCodeOf, type Upstream } from "./upstream.ts";

/**
 * The call's current transceiver takes the offer if it is up and not draining (a call live there
 * is refused with 409; a restarted process resumes it); otherwise, or when it answers 503
 * (draining), the least loaded sibling does. A call moved away from a transceiver that is still
 * up (draining) is then ended there, so the old session does not hold the drain.
 */
export async function resumeCall(
  g: Gateway,
  callId: string,
  owner: number,
  target: string,
  headers: Headers,
  body: Uint8Array,
): Promise<Upstream> {
  const m = g.members.get(owner);
  const siblings = g.candidates().filter((c) => c.id !== owner);
  const tried = m?.healthy && !m.draining ? [m, ...siblings] : siblings;
  if (tried.length === 0)
    throw new ApiError("no_transceiver", "no transceiver of this cluster can resume the call", 2);
  let last: Upstream | undefined;
  for (const c of tried) {
    let up: Upstream;
    try {
      up = await g.upstream.forward(c, "POST", target, headers, body);
    } catch (e) {
      g.lost(c, e);
      continue;
    }
    last = up;
    if (up.status === 503) continue;
    if (up.status === 200) {
      c.load++;
      g.moved.set(callId, c.id);
      g.log.info("call resumed", { transceiverId: c.id, from: owner });
      if (m?.healthy && c.id !== owner) void endMovedAway(g, m, callId);
    }
    return up;
  }
  if (last) return last;
  throw new ApiError("no_transceiver", "no transceiver of this cluster answered", 2);
}

/**
 * Forwards the follow-up to each live member but `owner` until one knows the call (signed anew
 * for each member, as every forwarded request is).
 */
export async function findMovedCall(
  g: Gateway,
  callId: string,
  owner: number,
  method: string,
  target: string,
  headers: Headers,
  body: Uint8Array,
): Promise<Upstream | undefined> {
  for (const m of g.members.values()) {
    if (m.id === owner || !m.healthy) continue;
    let up: Upstream;
    try {
      up = await g.upstream.forward(m, method, target, headers, body);
    } catch (e) {
      g.lost(m, e);
      continue;
    }
    if ((up.status === 404 && !knowsTheCall(up)) || up.status === 401 || isMalformedId(up)) continue;
    g.moved.set(callId, m.id);
    return up;
  }
  return undefined;
}

/**
 * A 404 from the member that holds the call: it knows the call but not the participant named
 * (a leave after the leg already ended). The call is there, not ended.
 */
function knowsTheCall(up: Upstream): boolean {
  return errorCodeOf(up) === "participant_unknown";
}

/**
 * The gateway checked the id's shape, so a member calling it malformed does not know the path:
 * a transceiver of an older version during a rolling upgrade (e.g. /participants), not the call.
 */
function isMalformedId(up: Upstream): boolean {
  return up.status === 400 && errorCodeOf(up) === "call_id_malformed";
}

/** Ends the old session of a call that moved away from a live (draining) transceiver. */
async function endMovedAway(g: Gateway, m: Member, callId: string): Promise<void> {
  const path = `/v1/calls/${callId}`;
  try {
    const up = await g.upstream.forward(m, "DELETE", path, new Headers(), new Uint8Array(0));
    if (up.status !== 204 && up.status !== 404)
      g.log.warn("old session of a moved call not ended", { transceiverId: m.id, status: up.status });
  } catch (e) {
    g.log.warn("old session of a moved call not ended", { transceiverId: m.id, error: (e as Error).message });
  }
}
