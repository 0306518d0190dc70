// The real gateway and the join API (issue 16): /v1/calls/{id}/participants[/{pid}] go where the
// call lives (the transceiver its id names, or where it moved), signed anew for it; POST /v1/legs
// goes to the least loaded member with the create loop's failover. Routing is checked against
// signed transceiver STAND-INS (helpers/stand-in.ts: they verify the gateway's signature and
// record what reached them); the dead-transceiver answers against real transceivers.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeMac } from "../../regional/common/hmac.ts";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { Gateway } from "../../regional/gateway/gateway.ts";
import { transceiverOfCallId } from "../../regional/gateway/routing.ts";
import { configWithDefaults } from "../../regional/transceiver/config.ts";
import { startTransceiver, type Transceiver } from "../../regional/transceiver/transceiver.ts";
import { mintCallId } from "../../shared/callid/callid.ts";
import { keyringOf, signedCaller } from "../support/signed-call.ts";
import { createTestClient } from "./helpers/client.ts";
import { quietLog, randomKeyring } from "./helpers/harness.ts";
import { StandIn } from "./helpers/stand-in.ts";

const secret = new Uint8Array(randomBytes(32));
const callIdKeys = randomKeyring(2);
const codeOf = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;

function startGateway(members: Map<number, string>): Promise<Gateway> {
  return Gateway.start(
    {
      clusterId: 1,
      http: { host: "127.0.0.1", port: 0, ipv6: false },
      clusterKeys: keyringOf(secret),
      transceivers: members,
      membership: undefined,
      // Polls only when the test asks: the request path alone must notice a failure.
      pollMs: 60_000,
      staleMs: 600_000,
      replayWindowMs: 30_000,
      upstreamTimeoutMs: 5000,
    },
    quietLog,
  );
}

const callOn = (tid: number) => mintCallId(1, tid, randomBytes(15), nodeMac(callIdKeys));
const PID = `prt_${"A".repeat(16)}`;

describe("gateway routes the join API (signed transceiver stand-ins)", () => {
  const s1 = new StandIn(1);
  const s2 = new StandIn(2);
  let g: Gateway;
  const { call } = signedCaller(() => g.url, secret, { clusterId: 1 });
  beforeAll(async () => {
    await s1.start(keyringOf(secret));
    await s2.start(keyringOf(secret));
    g = await startGateway(
      new Map([
        [1, s1.url],
        [2, s2.url],
      ]),
    );
  });
  afterAll(async () => {
    await g?.stop();
    await s1.stop();
    await s2.stop();
  });

  it("sends a call's participants requests to the transceiver its id names, signed for it", async () => {
    const id = callOn(2);
    const admitted = { participantId: PID, slot: 2, conferenceId: "00".repeat(8) };
    s2.answers.set(`POST /v1/calls/${id}/participants`, { status: 201, body: admitted });
    s2.answers.set(`GET /v1/calls/${id}/participants`, { status: 200, body: { participants: [] } });
    s2.answers.set(`DELETE /v1/calls/${id}/participants/${PID}`, { status: 204 });
    const before1 = s1.requests.length;
    const r = await call(
      "POST",
      `/v1/calls/${id}/participants`,
      { client: { country: "AU" } },
      {
        "x-gr-caller": "key=abcdef012345; net=203.0.113.0/24",
      },
    );
    expect(r.status).toBe(201);
    expect(await r.json()).toEqual(admitted);
    expect((await call("GET", `/v1/calls/${id}/participants`)).status).toBe(200);
    expect((await call("DELETE", `/v1/calls/${id}/participants/${PID}`)).status).toBe(204);
    expect(s2.requests.slice(-3).map((x) => `${x.method} ${x.path}`)).toEqual([
      `POST /v1/calls/${id}/participants`,
      `GET /v1/calls/${id}/participants`,
      `DELETE /v1/calls/${id}/participants/${PID}`,
    ]);
    // The body and the caller the edge signed travel on; nothing reached the other member.
    expect(JSON.parse(s2.requests.at(-3)!.body)).toEqual({ client: { country: "AU" } });
    expect(s2.requests.at(-3)!.caller).toBe("key=abcdef012345; net=203.0.113.0/24");
    expect(s1.requests.length).toBe(before1);
  });

  it("passes the hub's answers through (participant_limit, participant_unknown)", async () => {
    const id = callOn(1);
    s1.answers.set(`POST /v1/calls/${id}/participants`, {
      status: 409,
      body: { error: { type: "conflict_error", code: "participant_limit", message: "full" } },
    });
    s1.answers.set(`GET /v1/calls/${id}/participants/${PID}`, {
      status: 404,
      body: { error: { type: "not_found_error", code: "participant_unknown", message: "no" } },
    });
    const r = await call("POST", `/v1/calls/${id}/participants`, {});
    expect(r.status).toBe(409);
    expect(await codeOf(r)).toBe("participant_limit");
    const p = await call("GET", `/v1/calls/${id}/participants/${PID}`);
    expect(p.status).toBe(404);
    expect(await codeOf(p)).toBe("participant_unknown");
  });

  it("follows a call that moved to a sibling", async () => {
    const id = callOn(1);
    g.moved.set(id, 2);
    s2.answers.set(`GET /v1/calls/${id}/participants`, { status: 200, body: { participants: [] } });
    expect((await call("GET", `/v1/calls/${id}/participants`)).status).toBe(200);
    expect(s2.requests.at(-1)!.path).toBe(`/v1/calls/${id}/participants`);
    g.moved.delete(id);
  });

  it("finds a moved call by the sibling's participant_unknown: not call_ended", async () => {
    const id = callOn(1);
    s2.answers.set(`DELETE /v1/calls/${id}/participants/${PID}`, {
      status: 404,
      body: { error: { type: "not_found_error", code: "participant_unknown", message: "no" } },
    });
    g.lost(g.members.get(1)!, new Error("refused"));
    try {
      const r = await call("DELETE", `/v1/calls/${id}/participants/${PID}`);
      expect(r.status).toBe(404);
      expect(await codeOf(r)).toBe("participant_unknown");
      expect(g.moved.get(id)).toBe(2);
    } finally {
      g.moved.delete(id);
      await g.poll();
    }
    expect(g.members.get(1)!.healthy).toBe(true);
  });

  it("refuses a malformed call id and unsigned requests before any transceiver hears of them", async () => {
    const before = s1.requests.length + s2.requests.length;
    const bad = await call("POST", "/v1/calls/rtc_short/participants", {});
    expect(bad.status).toBe(400);
    expect(await codeOf(bad)).toBe("call_id_malformed");
    const unsigned = await fetch(`${g.url}/v1/calls/${callOn(1)}/participants`, {
      method: "POST",
      body: "{}",
    });
    expect(unsigned.status).toBe(401);
    const legs = await fetch(`${g.url}/v1/legs`, { method: "POST", body: "{}" });
    expect(legs.status).toBe(401);
    expect(s1.requests.length + s2.requests.length).toBe(before);
  });

  it("creates a leg on the least loaded member, the next one on a 503, and counts it", async () => {
    const leg = (tid: number) => ({
      status: 201,
      body: { legId: callOn(tid), sdp: "v=0\r\n", etag: "e1", clusterId: 1, transceiverId: tid },
      headers: { etag: '"e1"' },
    });
    s1.answers.set("POST /v1/legs", leg(1));
    s2.answers.set("POST /v1/legs", leg(2));
    s1.load = 5;
    s2.load = 1;
    await g.poll();
    const body = { sdp: "v=0\r\n", conference: { callId: callOn(1), participantId: PID } };
    const r = await call("POST", "/v1/legs", body);
    expect(r.status).toBe(201);
    expect(r.headers.get("etag")).toBe('"e1"');
    expect(((await r.json()) as { transceiverId: number }).transceiverId).toBe(2);
    expect(JSON.parse(s2.requests.at(-1)!.body)).toEqual(body);
    // The least loaded is full: the next one takes it.
    s2.answers.set("POST /v1/legs", {
      status: 503,
      body: { error: { type: "unavailable_error", code: "at_capacity", message: "full" } },
    });
    const again = await call("POST", "/v1/legs", body);
    expect(again.status).toBe(201);
    expect(((await again.json()) as { transceiverId: number }).transceiverId).toBe(1);
    expect(s2.requests.at(-1)!.path).toBe("/v1/legs");
    expect(g.registry.render()).toMatch(/gr_gateway_requests_total\{route="legs",status="201"\} 2/);
    expect((await call("GET", "/v1/legs")).status).toBe(405);
  });
});

describe("gateway and the participants of a dead transceiver's call (real transceivers)", () => {
  let agent: EchoAgent;
  let t1: Transceiver;
  let t2: Transceiver;
  let g: Gateway;
  let offer: string;
  let n = 0;
  const { call } = signedCaller(() => g.url, secret, { clusterId: 1 });
  const transceiver = (id: number) =>
    startTransceiver(
      configWithDefaults({
        clusterId: 1,
        transceiverId: id,
        hintKeys: randomKeyring(1),
        callIdKeys,
        clusterSecret: secret,
        capacity: 10,
        backendUrl: agent.url,
      }),
      { log: quietLog },
    );
  beforeAll(async () => {
    agent = await startEchoAgent();
    const c = createTestClient();
    offer = await c.createOffer();
    await c.close();
    t1 = await transceiver(1);
    t2 = await transceiver(2);
    g = await startGateway(
      new Map([
        [1, t1.httpUrl],
        [2, t2.httpUrl],
      ]),
    );
  });
  afterAll(async () => {
    await g?.stop();
    await t1?.stop();
    await t2?.stop().catch(() => {});
    await agent?.close();
  });

  it("answers call_ended for a join, the roster and a leave once the call's transceiver died", async () => {
    let dead: string | undefined;
    for (let i = 0; i < 6 && dead === undefined; i++) {
      const r = await call("POST", "/v1/calls", {
        sdp: offer.replace(/a=ice-ufrag:(\S+)/g, `a=ice-ufrag:gp${n++}x`),
      });
      expect(r.status).toBe(201);
      const id = ((await r.json()) as { callId: string }).callId;
      if (transceiverOfCallId(id) === 2) dead = id;
    }
    expect(dead).toBeDefined();
    await t2.stop();
    for (const [method, path] of [
      ["POST", `/v1/calls/${dead}/participants`],
      ["GET", `/v1/calls/${dead}/participants`],
      ["GET", `/v1/calls/${dead}/participants/${PID}`],
      ["DELETE", `/v1/calls/${dead}/participants/${PID}`],
    ] as const) {
      const r = await call(method, path, method === "POST" ? {} : undefined);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(await codeOf(r)).toBe("call_ended");
    }
    expect(g.members.get(2)!.healthy).toBe(false);
    // The call itself still reads as ended, as before.
    const st = await call("GET", `/v1/calls/${dead}`);
    expect(((await st.json()) as { endReason: string }).endReason).toBe("transceiver_failed");
  });
});
