// The join API at the edge (issue 16) in real workerd (Miniflare) against four signed FAKE
// CLUSTERS on loopback (fake-conference.ts speaks the participants and legs contract): the edge's
// own logic (admit at the owner, steer the joiner, the leg there, release on failure, routing of
// the roster and of a leave, call-scoped client secrets, CORS). The real transceiver's side is
// tested in test/transceiver.
import { describe, expect, it } from "vitest";
import { conferenceSuite } from "./conference-suite.ts";
import { type CityName, OFFER } from "./fixtures.ts";
import type { Edge } from "./harness.ts";

const { secrets, conferences, bearer, codeOf, edge, marks, since, routes } = conferenceSuite();
const conference = (n: string) => conferences.get(n)!;

/** A call made from `city` (its owner cluster is the city's nearest). */
async function callFrom(e: Edge, city: CityName): Promise<string> {
  const res = await e.fetch("/v1/realtime/calls", {
    method: "POST",
    city,
    headers: { ...bearer(), "content-type": "application/sdp" },
    body: OFFER,
  });
  expect(res.status).toBe(201);
  return res.headers.get("location")!.split("/").pop()!;
}

const join = (e: Edge, callId: string, city: CityName, token?: string, body = OFFER) =>
  e.fetch(`/v1/realtime/calls/${callId}/participants`, {
    method: "POST",
    city,
    headers: { ...bearer(token), "content-type": "application/sdp" },
    body,
  });

async function secretFor(e: Edge, callId?: unknown): Promise<Response> {
  return e.fetch("/v1/realtime/client_secrets", {
    method: "POST",
    headers: { ...bearer(), "content-type": "application/json" },
    body: JSON.stringify(callId === undefined ? {} : { call_id: callId }),
  });
}

describe("join API at the edge (fake cluster)", () => {
  it("admits at the owner's cluster, creates the leg at the joiner's nearest cluster", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    const m = marks();
    const res = await join(e, callId, "sydney");
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/sdp");
    expect(res.headers.get("x-relay-cluster")).toBe("syd");
    expect(res.headers.get("location")).toMatch(
      new RegExp(`^/v1/realtime/calls/${callId}/participants/prt_[A-Za-z0-9_-]{16}$`),
    );
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]+"$/);
    expect(await res.text()).toContain("s=leg@syd");
    const got = since(m);
    expect(routes(got.get("fra"))).toEqual([`POST /v1/calls/${callId}/participants`]);
    expect(routes(got.get("syd"))).toEqual(["POST /v1/legs"]);
    expect(routes(got.get("iad"))).toEqual([]);
    expect(routes(got.get("gru"))).toEqual([]);
    // Both signed for their cluster; the leg carries what the owner answered.
    const admit = got.get("fra")![0]!;
    const leg = got.get("syd")![0]!;
    expect([admit.signature, leg.signature]).toEqual(["ok", "ok"]);
    const pid = res.headers.get("location")!.split("/").pop();
    const roster = conference("fra").rosters.get(callId)!;
    expect(roster.map((p) => p.participantId)).toEqual([pid]);
    const body = JSON.parse(leg.body) as {
      sdp: string;
      client: { country?: string };
      ingress: unknown;
      conference: { conferenceId: string };
    };
    expect(body.sdp).toBe(OFFER);
    expect(body.client.country).toBe("AU");
    expect(body.ingress).toEqual({ vip: "198.51.100.10:3478" });
    expect(body.conference).toMatchObject({
      callId,
      participantId: pid,
      slot: 2,
      hub: { address: "127.0.0.1:7400", clusterId: 1, transceiverId: 7 },
    });
    expect(body.conference.conferenceId).toMatch(/^[0-9a-f]{16}$/);
    expect(leg.headers["x-gr-caller"]).toBeTruthy();
  });

  it("takes the offer as multipart/form-data (sdp + session) like POST /v1/realtime/calls", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    const form = new FormData();
    form.set("sdp", OFFER);
    form.set("session", JSON.stringify({ type: "realtime", instructions: "hi" }));
    const m = marks();
    const res = await e.fetch(`/v1/realtime/calls/${callId}/participants`, {
      method: "POST",
      city: "sydney",
      headers: bearer(),
      body: form,
    });
    expect(res.status).toBe(201);
    const leg = since(m).get("syd")![0]!;
    expect(JSON.parse(leg.body)).toMatchObject({ sdp: OFFER, session: { instructions: "hi" } });
  });

  it("passes the owner's participant_limit (409) through and creates no leg", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    conference("fra").limit = 2;
    expect((await join(e, callId, "virginia")).status).toBe(201);
    const m = marks();
    const res = await join(e, callId, "sydney");
    expect(res.status).toBe(409);
    expect(await codeOf(res)).toBe("participant_limit");
    expect(res.headers.get("x-relay-cluster")).toBe("fra");
    const legs = [...since(m).values()].flat().filter((r) => r.path === "/v1/legs");
    expect(legs).toEqual([]);
  });

  it("passes the owner's 503 on with its Retry-After and creates no leg", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    conference("fra").admitDraining = true;
    const m = marks();
    const res = await join(e, callId, "sydney");
    expect(res.status).toBe(503);
    expect(await codeOf(res)).toBe("draining");
    expect(res.headers.get("retry-after")).toBe("7");
    expect(res.headers.get("x-relay-cluster")).toBe("fra");
    expect([...since(m).values()].flat().filter((r) => r.path === "/v1/legs")).toEqual([]);
  });

  it("answers 404 call_ended for an ended call, 404 call_not_found for a malformed or forged id", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    conference("fra").ended.add(callId);
    const res = await join(e, callId, "sydney");
    expect(res.status).toBe(404);
    expect(await codeOf(res)).toBe("call_ended");
    const m = marks();
    const forged = `${callId.slice(0, -4)}${callId.endsWith("AAAA") ? "BBBB" : "AAAA"}`;
    for (const id of ["rtc_nope", forged]) {
      const r = await join(e, id, "sydney");
      expect(r.status).toBe(404);
      expect(await codeOf(r)).toBe("call_not_found");
    }
    expect([...since(m).values()].flat()).toEqual([]);
  });

  it("refuses a bad offer with the offer check's code before any cluster hears of it", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    const m = marks();
    const res = await join(e, callId, "sydney", undefined, "v=0\r\nnot an offer\r\n");
    expect(res.status).toBe(400);
    expect(await codeOf(res)).toBe("invalid_sdp");
    expect([...since(m).values()].flat()).toEqual([]);
  });

  it("fails the leg over to the next nearest cluster when the nearest is full", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    conference("syd").legMode = "full";
    const res = await join(e, callId, "sydney");
    expect(res.status).toBe(201);
    expect(res.headers.get("x-relay-cluster")).not.toBe("syd");
    expect(conference("fra").rosters.get(callId)).toHaveLength(1);
  });

  it.each([
    ["a final 4xx from the leg's cluster", "bad-offer", 422, "no_acceptable_codec"],
    ["every cluster full", "full", 503, "no_cluster_available"],
  ] as const)("releases the admitted participant at the owner on %s", async (_, mode, status, code) => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    for (const c of conferences.values()) c.legMode = mode;
    const m = marks();
    const res = await join(e, callId, "sydney");
    expect(res.status).toBe(status);
    expect(await codeOf(res)).toBe(code);
    const fra = since(m).get("fra")!;
    expect(fra.map((r) => r.method)).toEqual(["POST", "DELETE"]);
    expect(fra[1]!.path).toMatch(new RegExp(`^/v1/calls/${callId}/participants/prt_[A-Za-z0-9_-]{16}$`));
    expect(fra[1]!.signature).toBe("ok");
    // The one admitted is the one released.
    expect(conference("fra").rosters.get(callId)).toEqual([]);
  });

  it("does not fail a leg over after an unreadable 201 (two legs for one participant): 502, released", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    for (const c of conferences.values()) c.legMode = "bad-answer";
    const m = marks();
    const res = await join(e, callId, "sydney");
    expect(res.status).toBe(502);
    expect(await codeOf(res)).toBe("cluster_bad_answer");
    const got = since(m);
    const legs = [...got.values()].flat().filter((r) => r.path === "/v1/legs");
    expect(legs).toHaveLength(1);
    expect(routes(got.get("fra")).map((r) => r.split(" ")[0])).toEqual(["POST", "DELETE"]);
    expect(conference("fra").rosters.get(callId)).toEqual([]);
  });

  it("answers 502 for an admit it cannot read, releasing the participant it names", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    conference("fra").admitWithoutHub = true;
    const m = marks();
    const res = await join(e, callId, "sydney");
    expect(res.status).toBe(502);
    expect(await codeOf(res)).toBe("cluster_bad_answer");
    expect(routes(since(m).get("fra")).map((r) => r.split(" ")[0])).toEqual(["POST", "DELETE"]);
    expect(routes(since(m).get("syd"))).toEqual([]);
    expect(conference("fra").rosters.get(callId)).toEqual([]);
  });

  it("lists, reads and removes participants at the owner's cluster, wherever the request comes from", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    const joined = await join(e, callId, "sydney");
    const location = joined.headers.get("location")!;
    const m = marks();
    const list = await e.fetch(`/v1/realtime/calls/${callId}/participants`, {
      city: "sydney",
      headers: bearer(),
    });
    expect(list.status).toBe(200);
    expect(list.headers.get("x-relay-cluster")).toBe("fra");
    const pid = location.split("/").pop();
    const legId = conference("fra").rosters.get(callId)![0]!.leg!.legId;
    expect(((await list.json()) as { participants: { participantId: string }[] }).participants).toEqual([
      { participantId: pid, slot: 2, leg: { clusterId: 4, transceiverId: 7, legId } },
    ]);
    expect((await e.fetch(location, { city: "sydney", headers: bearer() })).status).toBe(200);
    const del = await e.fetch(location, { method: "DELETE", city: "sydney", headers: bearer() });
    expect(del.status).toBe(204);
    expect(del.headers.get("x-relay-cluster")).toBe("fra");
    const again = await e.fetch(location, { method: "DELETE", city: "sydney", headers: bearer() });
    expect(again.status).toBe(404);
    expect(await codeOf(again)).toBe("participant_unknown");
    const got = since(m);
    expect(routes(got.get("fra"))).toEqual([
      `GET /v1/calls/${callId}/participants`,
      `GET /v1/calls/${callId}/participants/${pid}`,
      `DELETE /v1/calls/${callId}/participants/${pid}`,
      `DELETE /v1/calls/${callId}/participants/${pid}`,
    ]);
    // Reading one participant asks its leg's cluster for the leg's status (participant-leg.test.ts).
    expect(routes(got.get("syd"))).toEqual([`GET /v1/calls/${legId}`]);
    // A participant id that is not one never leaves the edge.
    const bad = await e.fetch(`/v1/realtime/calls/${callId}/participants/nope`, {
      method: "DELETE",
      headers: bearer(),
    });
    expect(bad.status).toBe(404);
    expect(await codeOf(bad)).toBe("participant_not_found");
  });

  it("a client secret scoped to a call joins that call and nothing else", async () => {
    const e = await edge();
    const callA = await callFrom(e, "frankfurt");
    const callB = await callFrom(e, "virginia");
    const minted = await secretFor(e, callA);
    expect(minted.status).toBe(200);
    const { value, call_id } = (await minted.json()) as { value: string; call_id: string };
    expect(call_id).toBe(callA);
    const ok = await join(e, callA, "sydney", value);
    expect(ok.status).toBe(201);
    const pid = ok.headers.get("location")!.split("/").pop();
    expect(
      (await e.fetch(`/v1/realtime/calls/${callA}/participants`, { headers: bearer(value) })).status,
    ).toBe(200);
    const other = await join(e, callB, "sydney", value);
    expect(other.status).toBe(403);
    expect(await codeOf(other)).toBe("client_secret_scoped");
    const create = await e.fetch("/v1/realtime/calls", {
      method: "POST",
      city: "sydney",
      headers: { ...bearer(value), "content-type": "application/sdp" },
      body: OFFER,
    });
    expect(create.status).toBe(403);
    expect(await codeOf(create)).toBe("client_secret_scoped");
    // Nor may it hang up the call it joined.
    const hangup = await e.fetch(`/v1/realtime/calls/${callA}`, { method: "DELETE", headers: bearer(value) });
    expect(hangup.status).toBe(403);
    // It may leave.
    const leave = await e.fetch(`/v1/realtime/calls/${callA}/participants/${pid}`, {
      method: "DELETE",
      headers: bearer(value),
    });
    expect(leave.status).toBe(204);
    // An unscoped secret joins any call, as an API key does.
    const any = (await (await secretFor(e)).json()) as { value: string; call_id?: string };
    expect(any.call_id).toBeUndefined();
    expect((await join(e, callB, "sydney", any.value)).status).toBe(201);
  });

  it.each([
    ["not a call id", "rtc_short"],
    ["not a string", 42],
    ["a forged call id", `rtc_${"A".repeat(48)}`],
  ])("refuses to mint a secret scoped to %s", async (_, callId) => {
    const e = await edge();
    const res = await secretFor(e, callId);
    expect(res.status).toBe(400);
    expect(await codeOf(res)).toBe("invalid_call_id");
  });

  it("answers CORS preflights and 405 with Allow on the participant paths", async () => {
    const e = await edge();
    const base = `/v1/realtime/calls/rtc_${"x".repeat(48)}/participants`;
    const pre = await e.fetch(base, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "POST" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-methods")).toBe("GET, POST, OPTIONS");
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("accept-post")).toBe("application/sdp, multipart/form-data");
    const one = await e.fetch(`${base}/prt_${"a".repeat(16)}`, { method: "OPTIONS" });
    expect(one.headers.get("access-control-allow-methods")).toBe("GET, PATCH, DELETE, OPTIONS");
    expect(one.headers.get("accept-patch")).toBe("application/trickle-ice-sdpfrag");
    const put = await e.fetch(base, { method: "PUT", headers: bearer() });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, POST, OPTIONS");
    const post = await e.fetch(`${base}/prt_${"a".repeat(16)}`, { method: "POST", headers: bearer() });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, PATCH, DELETE, OPTIONS");
    // A real answer carries the CORS headers and exposes Location and X-Relay-Cluster.
    const callId = await callFrom(e, "frankfurt");
    const res = await e.fetch(`/v1/realtime/calls/${callId}/participants`, {
      method: "POST",
      city: "sydney",
      headers: { ...bearer(), "content-type": "application/sdp", origin: "https://app.example" },
      body: OFFER,
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toContain("Location");
  });

  it("counts joins and leaves under their route labels", async () => {
    const e = await edge();
    const callId = await callFrom(e, "frankfurt");
    const joined = await join(e, callId, "sydney");
    await e.fetch(joined.headers.get("location")!, { method: "DELETE", headers: bearer() });
    const text = await (await e.fetch("/internal/metrics", { headers: bearer(secrets.metricsToken) })).text();
    expect(text).toMatch(/gr_edge_requests_total\{route="participants.join",status="201"\} 1/);
    expect(text).toMatch(/gr_edge_requests_total\{route="participants.leave",status="204"\} 1/);
  });
});
