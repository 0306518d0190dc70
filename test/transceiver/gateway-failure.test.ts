// The gateway when a transceiver stops answering: it is out of routing at the first failed probe
// or request, and follow-ups on its calls are answered here (GET: ended, transceiver_failed;
// DELETE/PATCH: 404 call_ended), never 500. Real transceivers, a real gateway.
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

const secret = new Uint8Array(randomBytes(32));
const hintKeys = randomKeyring(1);
const callIdKeys = randomKeyring(2);
let agent: EchoAgent;
let t1: Transceiver;
let t2: Transceiver;
let g: Gateway;
let offer: string;
let n = 0;
const uniqueOffer = () => offer.replace(/a=ice-ufrag:(\S+)/g, `a=ice-ufrag:gf${n++}x`);
const { call } = signedCaller(() => g.url, secret, { clusterId: 1 });

const transceiver = (id: number) =>
  startTransceiver(
    configWithDefaults({
      clusterId: 1,
      transceiverId: id,
      hintKeys,
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
  g = await Gateway.start(
    {
      clusterId: 1,
      http: { host: "127.0.0.1", port: 0, ipv6: false },
      clusterKeys: keyringOf(secret),
      transceivers: new Map([
        [1, t1.httpUrl],
        [2, t2.httpUrl],
      ]),
      membership: undefined,
      // Polls only when the test asks: the request path alone must notice the failure.
      pollMs: 60_000,
      staleMs: 600_000,
      replayWindowMs: 30_000,
      upstreamTimeoutMs: 5000,
    },
    quietLog,
  );
});
afterAll(async () => {
  await g?.stop();
  await t1?.stop();
  await t2?.stop().catch(() => {});
  await agent?.close();
});

async function callOn(id: number): Promise<string> {
  for (let i = 0; i < 6; i++) {
    const r = await call("POST", "/v1/calls", { sdp: uniqueOffer() });
    expect(r.status).toBe(201);
    const callId = ((await r.json()) as { callId: string }).callId;
    if (transceiverOfCallId(callId) === id) return callId;
  }
  throw new Error(`no call landed on transceiver ${id}`);
}

describe("gateway and a transceiver that died", () => {
  it("answers for the dead transceiver's calls and routes new ones to the sibling", async () => {
    const dead = await callOn(2);
    const alive = await callOn(1);
    await t2.stop(); // its HTTP port now refuses connections
    // The first follow-up finds the connection refused: the gateway answers for the call.
    const st = await call("GET", `/v1/calls/${dead}`);
    expect(st.status).toBe(200);
    expect(await st.json()).toMatchObject({
      callId: dead,
      state: "ended",
      clusterId: 1,
      transceiverId: 2,
      endReason: "transceiver_failed",
    });
    expect(g.members.get(2)!.healthy).toBe(false);
    for (const method of ["DELETE", "PATCH"]) {
      const r = await call(method, `/v1/calls/${dead}`, method === "PATCH" ? "a=mid:0\r\n" : undefined, {
        "content-type": "application/trickle-ice-sdpfrag",
      });
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe("call_ended");
    }
    // The sibling's call is untouched and new calls go there.
    expect(((await (await call("GET", `/v1/calls/${alive}`)).json()) as { state: string }).state).not.toBe(
      "ended",
    );
    const fresh = await call("POST", "/v1/calls", { sdp: uniqueOffer() });
    expect(fresh.status).toBe(201);
    expect(transceiverOfCallId(((await fresh.json()) as { callId: string }).callId)).toBe(1);
    // Probes agree; the failure is counted once.
    await g.poll();
    expect(g.candidates().map((m) => m.id)).toEqual([1]);
    expect(g.registry.render()).toMatch(/gr_gateway_transceiver_failures_total 1\n/);
    const health = (await (await fetch(`${g.url}/healthz`)).json()) as { transceivers: number };
    expect(health.transceivers).toBe(1);
  });

  it("a call id naming a transceiver it never knew is still unknown, not ended", async () => {
    const foreign = `rtc_${Buffer.from([0x12, 0, 1, 0, 9, ...randomBytes(31)]).toString("base64url")}`;
    const r = await call("GET", `/v1/calls/${foreign}`);
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("call_id_unknown");
  });

  it("resumes a dead transceiver's call on the sibling under the same id; a second replica finds it", async () => {
    // t2 is down since the first test; this call was on it.
    const dead = mintCallId(1, 2, randomBytes(15), nodeMac(callIdKeys));
    const r = await call("POST", `/v1/calls/${dead}`, { sdp: uniqueOffer() });
    const body = (await r.json()) as { callId: string; transceiverId: number; sdp: string };
    expect(r.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ callId: dead, transceiverId: 1 });
    expect(t1.calls.has(dead)).toBe(true);
    expect(g.moved.get(dead)).toBe(1);
    // Follow-ups go where it lives now.
    expect(((await (await call("GET", `/v1/calls/${dead}`)).json()) as { callId: string }).callId).toBe(dead);
    // A live call is not resumed a second time.
    const twice = await call("POST", `/v1/calls/${dead}`, { sdp: uniqueOffer() });
    expect(twice.status).toBe(409);
    // Another gateway replica never saw the resume: it asks the live members and remembers.
    const replica = await Gateway.start(
      { ...g.config, http: { host: "127.0.0.1", port: 0, ipv6: false } },
      quietLog,
    );
    try {
      const other = signedCaller(() => replica.url, secret, { clusterId: 1 });
      const st = await other.call("GET", `/v1/calls/${dead}`);
      expect(st.status).toBe(200);
      expect(((await st.json()) as { transceiverId: number }).transceiverId).toBe(1);
      expect(replica.moved.get(dead)).toBe(1);
      expect((await other.call("DELETE", `/v1/calls/${dead}`)).status).toBe(204);
    } finally {
      await replica.stop();
    }
    expect(t1.calls.has(dead)).toBe(false);
  });

  it("a transceiver resumes only authentic call ids of its own cluster", async () => {
    const direct = signedCaller(() => t1.httpUrl, secret);
    const foreign = mintCallId(2, 1, randomBytes(15), nodeMac(callIdKeys));
    const forged = `rtc_${Buffer.from([0x12, 0, 1, 0, 2, ...randomBytes(31)]).toString("base64url")}`;
    for (const [id, code] of [
      [foreign, "wrong_transceiver"],
      [forged, "call_id_unknown"],
      ["rtc_short", "call_id_malformed"],
    ] as const) {
      const r = await direct.call("POST", `/v1/calls/${id}`, { sdp: uniqueOffer() });
      expect([400, 404]).toContain(r.status);
      expect(((await r.json()) as { error: { code: string } }).error.code, id).toBe(code);
    }
  });
});
