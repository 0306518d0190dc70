// A joiner's handle on its own leg (the join's Location), the two routes that need the leg:
//   GET   /v1/realtime/calls/{id}/participants/{pid}  the owner's roster entry + its leg's status
//   PATCH /v1/realtime/calls/{id}/participants/{pid}  trickle / ICE restart of the leg (WHIP)
// The owner's participant record names the leg (`leg: { clusterId, transceiverId, legId }`, null
// until the leg's hello reached the hub); the leg is an ordinary call at its cluster, so the edge
// asks that cluster for `GET` / `PATCH /v1/calls/{legId}`, signed for it. The leg id is a call
// id: its MAC is checked and its cluster must be the one the record names.
import type { Context } from "hono";
import { PARTICIPANT_ID } from "../../shared/signalling/join.ts";
import {
  type ParticipantLeg,
  publicRecord,
  readLegStatus,
  readParticipantLeg,
  withLegStatus,
} from "../../shared/signalling/participant-leg.ts";
import type { ClusterSpec } from "../../shared/topology/schema.ts";
import type { Principal } from "../auth/authenticate.ts";
import { readJson } from "../cluster/client.ts";
import type { AppEnv } from "../env.ts";
import { EdgeError, Errors } from "../errors.ts";
import { admit, FOLLOW_UP_GRACE_S } from "../http.ts";
import { type SteerScope, steerScope } from "../steering/steer.ts";
import { clusterOfCallId, fetchOwner, owningCluster, relay, trickleBody } from "./followups.ts";

type Hop = [string, string, number];

interface OwnerRecord {
  owner: ClusterSpec;
  principal: Principal;
  s: SteerScope;
  /** The owner's answer when it is not a 200 with a JSON record (relayed as it is). */
  answer?: Response;
  entry?: { [k: string]: unknown };
  hops: Hop[];
}

/** Admission (a client secret scoped to the call is enough), then the owner's record. */
async function ownerRecord(c: Context<AppEnv>, before?: () => Promise<void>): Promise<OwnerRecord> {
  const callId = c.req.param("id")!;
  const pid = c.req.param("pid") ?? "";
  const principal = await admit(c, { create: false, graceS: FOLLOW_UP_GRACE_S, call: callId });
  if (!PARTICIPANT_ID.test(pid)) throw Errors.participantNotFound();
  await before?.();
  const owner = await owningCluster(c, callId);
  const s = await steerScope(c);
  const t0 = Date.now();
  const res = await fetchOwner(c, s, owner, {
    method: "GET",
    path: `/v1/calls/${callId}/participants/${pid}`,
    headers: { accept: "application/json" },
  });
  const hops: Hop[] = [["owner", owner.name, Date.now() - t0]];
  if (res.status !== 200) return { owner, principal, s, answer: res, hops };
  const entry = await readJson(res);
  if (typeof entry !== "object" || entry === null || Array.isArray(entry))
    throw Errors.clusterBadAnswer(owner.name);
  return { owner, principal, s, entry: entry as { [k: string]: unknown }, hops };
}

/** The leg's cluster, if the leg id is a valid call id of the cluster the record names. */
async function legCluster(c: Context<AppEnv>, leg: ParticipantLeg): Promise<ClusterSpec | undefined> {
  const cluster = await clusterOfCallId(c, leg.legId);
  return cluster?.id === leg.clusterId ? cluster : undefined;
}

export async function getParticipant(c: Context<AppEnv>): Promise<Response> {
  c.set("route", "participants.get");
  const r = await ownerRecord(c);
  if (r.answer) return relay(c, r.answer, r.owner.name, r.hops);
  const entry = r.entry!;
  const leg = readParticipantLeg(entry);
  let body: { [k: string]: unknown } = entry;
  const cluster = leg ? await legCluster(c, leg) : undefined;
  if (leg === undefined || (leg !== null && !cluster))
    c.get("log").warn("participant record without a usable leg", { owner: r.owner.name });
  if (leg === undefined) {
    body = withLegStatus(entry, { state: "unknown" });
  } else if (leg !== null) {
    const t0 = Date.now();
    const status = cluster ? await legStatus(c, r.s, cluster, leg.legId) : undefined;
    if (cluster) r.hops.push(["leg", cluster.name, Date.now() - t0]);
    body = withLegStatus(entry, status ?? { state: "unknown" });
  }
  body = publicRecord(body, r.principal.kind === "api_key");
  const res = new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
  return relay(c, res, r.owner.name, r.hops);
}

/** The leg's call status at its cluster; undefined when that cluster does not answer 200. */
async function legStatus(c: Context<AppEnv>, s: SteerScope, cluster: ClusterSpec, legId: string) {
  try {
    const res = await fetchOwner(c, s, cluster, {
      method: "GET",
      path: `/v1/calls/${legId}`,
      headers: { accept: "application/json" },
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      c.get("log").info("leg status not available", { cluster: cluster.name, status: res.status });
      return undefined;
    }
    return readLegStatus(await readJson(res));
  } catch (e) {
    // Unreachable or timed out (fetchOwner marked the cluster down): the roster entry alone.
    c.get("log").info("leg status not available", {
      cluster: cluster.name,
      error: e instanceof EdgeError ? e.code : "unknown",
    });
    return undefined;
  }
}

export async function patchParticipant(c: Context<AppEnv>): Promise<Response> {
  c.set("route", "participants.patch");
  let patch: Awaited<ReturnType<typeof trickleBody>> | undefined;
  // The body is checked (415) before any cluster is asked, as for PATCH on a call.
  const r = await ownerRecord(c, async () => {
    patch = await trickleBody(c);
  });
  if (r.answer) return relay(c, r.answer, r.owner.name, r.hops);
  const leg = readParticipantLeg(r.entry);
  if (leg === null) throw Errors.participantConnecting();
  const cluster = leg === undefined ? undefined : await legCluster(c, leg);
  if (!leg || !cluster) {
    c.get("log").warn("participant record without a usable leg", { owner: r.owner.name });
    throw Errors.clusterBadAnswer(r.owner.name);
  }
  const t0 = Date.now();
  const res = await fetchOwner(c, r.s, cluster, {
    method: "PATCH",
    path: `/v1/calls/${leg.legId}`,
    body: patch!.body,
    headers: { accept: "application/json, application/trickle-ice-sdpfrag", ...patch!.headers },
  });
  r.hops.push(["leg", cluster.name, Date.now() - t0]);
  return relay(c, res, cluster.name, r.hops);
}
