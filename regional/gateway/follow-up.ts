// A follow-up on a call (GET/PATCH/DELETE /v1/calls/{callId}, and everything on its
// /participants) forwarded to the transceiver that holds it, signed again for that transceiver.
// When that transceiver is down, or came back without its calls, the call may have moved
// (findMoved); otherwise the gateway answers for it: the call ended (routing.ts).
import { ApiError } from "../transceiver/errors.ts";
import type { Gateway } from "./gateway.ts";
import { type CallResource, failedCallAnswer } from "./routing.ts";
import { errorCodeOf, type Upstream } from "./upstream.ts";

export interface FollowUp {
  callId: string;
  /** The transceiver that holds the call as far as this replica knows. */
  owner: number;
  method: string;
  target: string;
  headers: Headers;
  body: Uint8Array;
  resource: CallResource;
}

const answer = (a: { status: number; body: unknown }): Upstream => ({
  status: a.status,
  headers: { "content-type": "application/json", "cache-control": "no-store" },
  body: Buffer.from(JSON.stringify(a.body)),
});

export async function routeToCall(g: Gateway, f: FollowUp): Promise<Upstream> {
  const { callId, owner, method, target, headers, body } = f;
  const ended = (failedAt: number) =>
    answer(failedCallAnswer(method, callId, g.config.clusterId, owner, failedAt, f.resource));
  const m = g.members.get(owner);
  const failedAt = g.failedAt(owner);
  if (!m && failedAt === undefined) throw new ApiError("call_id_unknown", "no such call in this cluster");
  if (!m?.healthy) {
    // Its transceiver is down: the call is over, unless another gateway moved it elsewhere.
    const found = await g.findMoved(callId, owner, method, target, headers, body);
    return found ?? ended(failedAt ?? 0);
  }
  let up: Upstream;
  try {
    up = await g.upstream.forward(m, method, target, headers, body);
  } catch (e) {
    g.lost(m, e);
    return ended(g.failedAt(owner) ?? Date.now());
  }
  // A transceiver that came back after failing does not know the calls it held then.
  if (up.status === 404 && failedAt !== undefined && errorCodeOf(up) === "call_id_unknown") {
    const found = await g.findMoved(callId, owner, method, target, headers, body);
    return found ?? ended(failedAt);
  }
  return up;
}
