// A joiner's handle on its own leg at the edge (issue 16 follow-up), in real workerd (Miniflare)
// against four signed FAKE CLUSTERS on loopback (fake-conference.ts: the owner's participant
// record names the leg once the fake "hello" arrived; fake-cluster.ts: WHIP PATCH rules on the
// leg as on any call). PATCH and GET on the participant URL read the owner's record, then ask
// the leg's cluster. The real transceivers' side: test/system/conference.test.ts.
import { describe, expect, it } from "vitest";
import { conferenceSuite } from "./conference-suite.ts";
import { type CityName, OFFER } from "./fixtures.ts";
import type { Edge } from "./harness.ts";

const TRICKLE = "application/trickle-ice-sdpfrag";
const CANDIDATE = "a=candidate:1 1 udp 2130706431 192.0.2.10 50000 typ host\r\n";
const RESTART = "a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n";

const { secrets, clusters, conferences, bearer, codeOf, edge, marks, since, routes } = conferenceSuite();

interface Joined {
  callId: string;
  location: string;
  etag: string;
  pid: string;
}

/** A call from Frankfurt (owner cluster fra) and a joiner from Sydney (its leg at syd). */
async function joined(e: Edge, city: CityName = "sydney"): Promise<Joined> {
  const call = await e.fetch("/v1/realtime/calls", {
    method: "POST",
    city: "frankfurt",
    headers: { ...bearer(), "content-type": "application/sdp" },
    body: OFFER,
  });
  expect(call.status).toBe(201);
  const callId = call.headers.get("location")!.split("/").pop()!;
  const res = await e.fetch(`/v1/realtime/calls/${callId}/participants`, {
    method: "POST",
    city,
    headers: { ...bearer(), "content-type": "application/sdp" },
    body: OFFER,
  });
  expect(res.status).toBe(201);
  const location = res.headers.get("location")!;
  return { callId, location, etag: res.headers.get("etag")!, pid: location.split("/").pop()! };
}

const patch = (e: Edge, url: string, body: string, headers: Record<string, string> = {}, token?: string) =>
  e.fetch(url, {
    method: "PATCH",
    city: "sydney",
    headers: { ...bearer(token), "content-type": TRICKLE, ...headers },
    body,
  });

const rosterOf = (callId: string) => conferences.get("fra")!.rosters.get(callId)!;
const legIdOf = (callId: string) => rosterOf(callId)[0]!.leg!.legId;

describe("participant handle at the edge (fake clusters)", () => {
  it("trickles through the participant URL to the leg's cluster, with the join's ETag", async () => {
    const e = await edge();
    const j = await joined(e);
    const legId = legIdOf(j.callId);
    const m = marks();
    const res = await patch(e, j.location, CANDIDATE, { "if-match": j.etag });
    expect(res.status).toBe(204);
    // The join's ETag is the leg's: the leg's cluster took it, and says so.
    expect(res.headers.get("etag")).toBe(j.etag);
    expect(res.headers.get("x-relay-cluster")).toBe("syd");
    expect(res.headers.get("server-timing")).toMatch(
      /owner;dur=[\d.]+;desc="fra", leg;dur=[\d.]+;desc="syd"/,
    );
    const got = since(m);
    expect(routes(got.get("fra"))).toEqual([`GET /v1/calls/${j.callId}/participants/${j.pid}`]);
    expect(routes(got.get("syd"))).toEqual([`PATCH /v1/calls/${legId}`]);
    const sent = got.get("syd")![0]!;
    expect(sent.signature).toBe("ok");
    expect(sent.headers["if-match"]).toBe(j.etag);
    expect(sent.headers["content-type"]).toBe(TRICKLE);
    expect(sent.body).toBe(CANDIDATE);
    expect(got.get("fra")![0]!.signature).toBe("ok");
  });

  it("restarts ICE (If-Match *): the leg's new credentials and ETag come back; the old ETag is then stale", async () => {
    const e = await edge();
    const j = await joined(e);
    const res = await patch(e, j.location, RESTART, { "if-match": "*" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(TRICKLE);
    expect(await res.text()).toContain("a=ice-ufrag:NEWU");
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    expect(etag).not.toBe(j.etag);
    const stale = await patch(e, j.location, CANDIDATE, { "if-match": j.etag });
    expect(stale.status).toBe(412);
    expect(await codeOf(stale)).toBe("stale_etag");
    expect((await patch(e, j.location, CANDIDATE, { "if-match": etag })).status).toBe(204);
  });

  it("validates as PATCH on a call: 415 with Accept-Patch before any cluster, the leg's 428 and 422 relayed", async () => {
    const e = await edge();
    const j = await joined(e);
    const m = marks();
    const wrong = await patch(e, j.location, CANDIDATE, {
      "content-type": "application/sdp",
      "if-match": j.etag,
    });
    expect(wrong.status).toBe(415);
    expect(wrong.headers.get("accept-patch")).toBe(TRICKLE);
    expect([...since(m).values()].flat()).toEqual([]);
    const noTag = await patch(e, j.location, CANDIDATE);
    expect(noTag.status).toBe(428);
    expect(await codeOf(noTag)).toBe("if_match_required");
    const bad = await patch(e, j.location, "a=unsupported\r\n", { "if-match": j.etag });
    expect(bad.status).toBe(422);
    expect(bad.headers.get("x-relay-cluster")).toBe("syd");
  });

  it("answers 409 participant_connecting (Retry-After 1) while the hub has not heard the leg", async () => {
    const e = await edge();
    conferences.get("fra")!.holdHellos = true;
    const j = await joined(e);
    const m = marks();
    const res = await patch(e, j.location, CANDIDATE, { "if-match": j.etag });
    expect(res.status).toBe(409);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await codeOf(res)).toBe("participant_connecting");
    expect(routes(since(m).get("syd"))).toEqual([]);
    // GET: the roster entry as the owner has it, leg null.
    const got = await e.fetch(j.location, { headers: bearer() });
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual({ participantId: j.pid, slot: 2, leg: null });
  });

  it("passes the owner's 404 participant_unknown on; a malformed participant id never leaves the edge", async () => {
    const e = await edge();
    const j = await joined(e);
    expect((await e.fetch(j.location, { method: "DELETE", headers: bearer() })).status).toBe(204);
    const gone = await patch(e, j.location, CANDIDATE, { "if-match": j.etag });
    expect(gone.status).toBe(404);
    expect(await codeOf(gone)).toBe("participant_unknown");
    expect(gone.headers.get("x-relay-cluster")).toBe("fra");
    const m = marks();
    const bad = await patch(e, `/v1/realtime/calls/${j.callId}/participants/nope`, CANDIDATE, {
      "if-match": "*",
    });
    expect(bad.status).toBe(404);
    expect(await codeOf(bad)).toBe("participant_not_found");
    expect([...since(m).values()].flat()).toEqual([]);
  });

  it("refuses a leg record it cannot use (no legId, or a legId of another cluster): 502, nothing sent", async () => {
    const e = await edge();
    conferences.get("fra")!.legWithoutId = true;
    const j = await joined(e);
    const m = marks();
    const res = await patch(e, j.location, CANDIDATE, { "if-match": j.etag });
    expect(res.status).toBe(502);
    expect(await codeOf(res)).toBe("cluster_bad_answer");
    const got = await e.fetch(j.location, { headers: bearer() });
    expect(((await got.json()) as { leg: { state: string } }).leg.state).toBe("unknown");
    conferences.get("fra")!.legWithoutId = false;
    const k = await joined(e);
    const leg = rosterOf(k.callId)[0]!.leg!;
    leg.clusterId = 2; // the record says iad, the leg id says syd
    const again = await patch(e, k.location, CANDIDATE, { "if-match": k.etag });
    expect(again.status).toBe(502);
    const patches = routes([...since(m).values()].flat()).filter((r) => r.startsWith("PATCH"));
    expect(patches).toEqual([]);
  });

  it("GET merges the leg's status (state, selected path, codec) from the leg's cluster into the roster entry", async () => {
    const e = await edge();
    const j = await joined(e);
    const legId = legIdOf(j.callId);
    const res = await e.fetch(j.location, { city: "sydney", headers: bearer() });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-relay-cluster")).toBe("fra");
    expect(await res.json()).toEqual({
      participantId: j.pid,
      slot: 2,
      leg: {
        clusterId: 4,
        transceiverId: 7,
        legId,
        state: "connected",
        clientAddress: "203.0.113.7:5000",
        codec: "opus",
        iceRttMs: 41,
        iceRestarts: 0,
        endReason: null,
      },
    });
  });

  it("GET answers the roster entry with leg.state unknown when the leg's cluster does not answer", async () => {
    const e = await edge();
    const j = await joined(e);
    const syd = clusters.get("syd")!;
    const port = syd.port;
    await syd.stop();
    try {
      const res = await e.fetch(j.location, { headers: bearer() });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { participantId: string; leg: Record<string, unknown> };
      expect(body.participantId).toBe(j.pid);
      expect(body.leg).toEqual({
        clusterId: 4,
        transceiverId: 7,
        legId: legIdOf(j.callId),
        state: "unknown",
      });
      // PATCH cannot do without the leg: the edge's 502 for an unreachable cluster.
      const p = await patch(e, j.location, CANDIDATE, { "if-match": j.etag });
      expect(p.status).toBe(502);
      expect(await codeOf(p)).toBe("cluster_unreachable");
    } finally {
      await syd.start(port);
    }
    // The leg's call ended there (404): unknown too.
    syd.calls.delete(legIdOf(j.callId));
    const res = await e.fetch(j.location, { headers: bearer() });
    expect(((await res.json()) as { leg: { state: string } }).leg.state).toBe("unknown");
  });

  it("a client secret scoped to the call may PATCH its participant, not one of another call", async () => {
    const e = await edge();
    const a = await joined(e);
    const b = await joined(e);
    const minted = await e.fetch("/v1/realtime/client_secrets", {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body: JSON.stringify({ call_id: a.callId }),
    });
    const { value } = (await minted.json()) as { value: string };
    expect((await patch(e, a.location, CANDIDATE, { "if-match": a.etag }, value)).status).toBe(204);
    const other = await patch(e, b.location, CANDIDATE, { "if-match": b.etag }, value);
    expect(other.status).toBe(403);
    expect(await codeOf(other)).toBe("client_secret_scoped");
  });

  it("shows no network address to an invitee: no backbone address, no joiner's client address", async () => {
    const e = await edge();
    const j = await joined(e);
    const minted = await e.fetch("/v1/realtime/client_secrets", {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body: JSON.stringify({ call_id: j.callId }),
    });
    const { value } = (await minted.json()) as { value: string };
    const one = (await (await e.fetch(j.location, { headers: bearer(value) })).json()) as Record<
      string,
      unknown
    >;
    expect(one.participantId).toBe(j.pid);
    expect(one).not.toHaveProperty("address");
    expect(one.leg).toMatchObject({ state: "connected", codec: "opus" });
    expect(one.leg).not.toHaveProperty("clientAddress");
    const list = `/v1/realtime/calls/${j.callId}/participants`;
    for (const token of [value, secrets.apiKey]) {
      const res = await e.fetch(list, { headers: bearer(token) });
      expect(res.status).toBe(200);
      const { participants } = (await res.json()) as { participants: Record<string, unknown>[] };
      expect(participants.map((p) => p.participantId)).toContain(j.pid);
      for (const p of participants) expect(p).not.toHaveProperty("address");
    }
  });

  it("counts PATCHes under participants.patch", async () => {
    const e = await edge();
    const j = await joined(e);
    await patch(e, j.location, CANDIDATE, { "if-match": j.etag });
    const text = await (await e.fetch("/internal/metrics", { headers: bearer(secrets.metricsToken) })).text();
    expect(text).toMatch(/gr_edge_requests_total\{route="participants.patch",status="204"\} 1/);
  });
});
