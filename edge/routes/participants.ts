// Joining a call (issue 16): several people in one call, each on their nearest cluster.
//   POST   /v1/realtime/calls/{id}/participants        join (the offer in, the answer out: 201)
//   GET    /v1/realtime/calls/{id}/participants        the roster (from the owner)
//   GET    /v1/realtime/calls/{id}/participants/{pid}  one participant (owner's + its leg's status)
//   PATCH  /v1/realtime/calls/{id}/participants/{pid}  trickle / ICE restart of its leg (WHIP)
//   DELETE /v1/realtime/calls/{id}/participants/{pid}  remove (leave) a participant (owner: 204)
// A join admits the participant at the cluster that owns the call (its id names it), then
// steers the joiner like a new call (nearest healthy cluster, failover) and creates the leg
// there with the hub's address; a leg that cannot be created releases the admitted
// participant. A client secret scoped to the call (client_secrets `call_id`) may do all of this
// for that call and nothing else.
import type { Context, Hono } from "hono";
import { CALL_ID_PATTERN } from "../../shared/callid/callid.ts";
import {
  type CreateLegRequest,
  type CreateLegResponse,
  PARTICIPANT_ID,
  readAdmitResponse,
  readCreateLegResponse,
} from "../../shared/signalling/join.ts";
import { publicList } from "../../shared/signalling/participant-leg.ts";
import type { Caller } from "../../shared/signing/caller.ts";
import type { ClusterSpec } from "../../shared/topology/schema.ts";
import { callerFor } from "../auth/caller.ts";
import { readJson } from "../cluster/client.ts";
import { badCreateAnswer, type CreateOutcome, createAttempt } from "../cluster/create-attempt.ts";
import type { AppEnv } from "../env.ts";
import { EdgeError, Errors } from "../errors.ts";
import { admit, clientIp } from "../http.ts";
import { checkSdpOffer, offerError } from "../sdp.ts";
import { clusterClient } from "../steering/client.ts";
import { type Steered, type SteerScope, steer, steerScope } from "../steering/steer.ts";
import { clusterError, quoteEtag, readOffer, reportSteered, resolveSession } from "./calls.ts";
import { fetchOwner, forward, owningCluster } from "./followups.ts";
import { getParticipant, patchParticipant } from "./participant-leg.ts";

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json" };

export function registerParticipants(app: Hono<AppEnv>): void {
  app.post("/v1/realtime/calls/:id/participants", join);
  app.get("/v1/realtime/calls/:id/participants", (c) =>
    forward(c, {
      route: "participants.list",
      method: "GET",
      suffix: "/participants",
      participant: true,
      view: (body, p) => publicList(body, p.kind === "api_key"),
    }),
  );
  // GET and PATCH need the leg too (participant-leg.ts).
  app.get("/v1/realtime/calls/:id/participants/:pid", getParticipant);
  app.patch("/v1/realtime/calls/:id/participants/:pid", patchParticipant);
  app.delete("/v1/realtime/calls/:id/participants/:pid", (c) => {
    const pid = c.req.param("pid") ?? "";
    return forward(c, {
      route: "participants.leave",
      method: "DELETE",
      suffix: `/participants/${pid}`,
      participant: true,
      check: () => {
        if (!PARTICIPANT_ID.test(pid)) throw Errors.participantNotFound();
      },
    });
  });
}

async function join(c: Context<AppEnv>): Promise<Response> {
  c.set("route", "participants.join");
  const callId = c.req.param("id")!;
  const principal = await admit(c, { create: true, call: callId });
  const offer = await readOffer(c);
  const check = checkSdpOffer(offer.sdp);
  if (!check.ok) throw offerError(check.code, check.message);
  const session = resolveSession(principal, offer.session);
  const owner = await owningCluster(c, callId);
  const s = await steerScope(c);
  const caller = callerFor(principal, clientIp(c));

  // 1. The owner admits the participant (or answers participant_limit, call_ended, ...).
  const res = await fetchOwner(c, s, owner, {
    method: "POST",
    path: `/v1/calls/${callId}/participants`,
    body: new TextEncoder().encode(JSON.stringify({ client: clusterClient(s.client) })),
    headers: JSON_HEADERS,
    caller,
  });
  const body = await readJson(res);
  if (res.status !== 201) {
    const status = res.status >= 200 && res.status < 300 ? 502 : res.status;
    // The owner's Retry-After (a draining or full hub: 503) reaches the client as for a call.
    const retryAfter = res.headers.get("retry-after");
    return clusterError(c, { status, body, retryAfter }, { "x-relay-cluster": owner.name });
  }
  const admitted = readAdmitResponse(body);
  if (!admitted) {
    // Admitted, maybe, but not in a shape a leg can use: free the slot if it names one.
    const pid = (body as { participantId?: unknown } | null)?.participantId;
    if (typeof pid === "string" && PARTICIPANT_ID.test(pid)) await release(c, s, owner, callId, pid);
    return clusterError(c, badCreateAnswer(owner.name), { "x-relay-cluster": owner.name });
  }

  // 2. The leg at the joiner's nearest healthy cluster, with the hub to send to.
  const request: CreateLegRequest = {
    sdp: offer.sdp,
    ...(session !== undefined ? { session } : {}),
    client: clusterClient(s.client),
    ingress: { vip: s.topo.topology.globalVip },
    conference: { callId, ...admitted },
  };
  let steered: Steered<CreateOutcome<CreateLegResponse>>;
  try {
    steered = await steer(c, s, legAttempt(s, request, caller));
  } catch (e) {
    await release(c, s, owner, callId, admitted.participantId);
    throw e;
  }
  const out = steered.result.value;
  const headers = reportSteered(c, "participants.join", s, steered, out, principal);
  if (out.kind === "error") {
    await release(c, s, owner, callId, admitted.participantId);
    return clusterError(c, out, headers);
  }
  headers["content-type"] = "application/sdp";
  headers.location = `/v1/realtime/calls/${callId}/participants/${admitted.participantId}`;
  const etag = out.etag ?? (out.value.etag !== "" ? quoteEtag(out.value.etag) : null);
  if (etag) headers.etag = etag;
  c.get("log").info("participant joined", {
    owner: owner.name,
    cluster: steered.result.cluster.name,
    slot: admitted.slot,
  });
  return c.body(out.value.sdp, 201, headers);
}

function legAttempt(s: SteerScope, request: CreateLegRequest, caller: Caller) {
  return createAttempt(s.key, {
    path: "/v1/legs",
    payload: new TextEncoder().encode(JSON.stringify(request)),
    caller,
    read: (body) => {
      const b = readCreateLegResponse(body);
      return b !== undefined && CALL_ID_PATTERN.test(b.legId) ? b : undefined;
    },
    // The leg may exist there (with this participant's identity): never create a second one.
    unreadableIsFinal: true,
  });
}

/**
 * The leg could not be created: the owner forgets the participant now rather than after its
 * 30 s hello timeout (it would hold a slot of the limit until then). Best effort, awaited so the
 * client's error comes after the slot is free.
 */
async function release(
  c: Context<AppEnv>,
  s: SteerScope,
  owner: ClusterSpec,
  callId: string,
  participantId: string,
): Promise<void> {
  try {
    const res = await fetchOwner(c, s, owner, {
      method: "DELETE",
      path: `/v1/calls/${callId}/participants/${participantId}`,
      headers: { accept: "application/json" },
    });
    await res.body?.cancel();
    if (res.status !== 204 && res.status !== 404)
      c.get("log").warn("admitted participant not released", { owner: owner.name, status: res.status });
  } catch (e) {
    c.get("log").warn("admitted participant not released", {
      owner: owner.name,
      error: e instanceof EdgeError ? e.code : "unknown",
    });
  }
}
