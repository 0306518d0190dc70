// A joined call on the real local system (edge in workerd, gateways, relays, POP, a transceiver
// in each of two clusters, the echo agent): werift clients call and join through the edge's
// public API; the backend gets both labelled streams, each client hears the other's tone, the
// participant events arrive, and a leave (DELETE at the edge) leaves the owner's call running.
// Wherever the edge steers them (one transceiver or two),
// the conference works: hub and leg may share a process. The joiner's handle on its own leg:
// GET / PATCH on the participant URL reach the leg (trickle, ICE restart, its status).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { ephemeralPlan, type LocalSystem, startLocalSystem } from "../../scripts/lib/local-system.ts";
import { WAIT_MS } from "../support/wait.ts";
import {
  clientApplyRestartAnswer,
  clientRestartFrag,
  createTestClient,
  type TestClient,
} from "../transceiver/helpers/client.ts";
import { eventsOf, heard, sendTone } from "../transceiver/helpers/conference.ts";
import { until } from "../transceiver/helpers/harness.ts";

let sys: LocalSystem;
let agent: EchoAgent;
const clients: TestClient[] = [];

beforeAll(async () => {
  agent = await startEchoAgent();
  sys = await startLocalSystem({
    plan: await ephemeralPlan("127.0.0.1", 1),
    redis: false,
    apiKey: "conference-key",
    dashboard: false,
    relayWorkers: 1,
    echoDelayMs: 0,
    backendUrl: agent.url,
    restarts: null,
    // Every request of these tests comes from one address: the default 20 per 10 s is too few.
    edgeVars: { RATE_LIMIT_IP_LIMIT: "1000" },
    log: () => {},
  });
}, 120_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await sys?.stop();
  await agent?.close();
});

const auth = () => ({ authorization: `Bearer ${sys.apiKey}` });

interface Offered {
  client: TestClient;
  location: string;
  cluster: string | null;
  answer: string;
  etag: string;
}

async function offerAt(path: string): Promise<Offered> {
  const client = createTestClient({ codecs: "opus" });
  clients.push(client);
  const res = await fetch(`${sys.edgeUrl}${path}`, {
    method: "POST",
    headers: { ...auth(), "content-type": "application/sdp" },
    body: await client.createOffer(),
  });
  const body = await res.text();
  expect(res.status, body).toBe(201);
  await client.setAnswer(body);
  await client.connected(20_000);
  return {
    client,
    location: res.headers.get("location")!,
    cluster: res.headers.get("x-relay-cluster"),
    answer: body,
    etag: res.headers.get("etag")!,
  };
}

const patchAt = (location: string, frag: string, ifMatch: string) =>
  fetch(`${sys.edgeUrl}${location}`, {
    method: "PATCH",
    headers: { ...auth(), "content-type": "application/trickle-ice-sdpfrag", "if-match": ifMatch },
    body: frag,
  });

interface LegView {
  legId: string;
  clusterId: number;
  state: string;
  clientAddress: string | null;
  codec: string | null;
  iceRestarts: number;
}

const legOf = async (location: string): Promise<LegView | null> => {
  const res = await fetch(`${sys.edgeUrl}${location}`, { headers: auth() });
  expect(res.status).toBe(200);
  return ((await res.json()) as { leg: LegView | null }).leg;
};

describe("a joined call through the edge", () => {
  it("carries both participants' audio, their events, a leave and the end", async () => {
    const owner = await offerAt("/v1/realtime/calls");
    const callId = owner.location.split("/").pop()!;
    const joiner = await offerAt(`/v1/realtime/calls/${callId}/participants`);
    expect(joiner.location).toMatch(
      new RegExp(`^/v1/realtime/calls/${callId}/participants/prt_[A-Za-z0-9_-]{16}$`),
    );
    console.log(JSON.stringify({ ownerCluster: owner.cluster, joinerCluster: joiner.cluster }));
    await until(() => eventsOf(owner.client, "participant.joined").length === 1, "joined at the owner");
    await until(() => eventsOf(joiner.client, "participant.joined").length === 1, "joined at the joiner");

    const from = owner.client.received.length;
    await sendTone(joiner.client, 880, 100, 7000);
    await until(() => owner.client.received.length - from >= 60, "the owner receiving");
    const atOwner = heard(owner.client, [440, 880], from + 20);
    const jFrom = joiner.client.received.length;
    await sendTone(owner.client, 440, 100, 300);
    await until(() => joiner.client.received.length - jFrom >= 60, "the joiner receiving");
    const atJoiner = heard(joiner.client, [440, 880], jFrom + 20);
    expect(atOwner[880]).toBeGreaterThan(10 * atOwner[440]!);
    expect(atJoiner[440]).toBeGreaterThan(10 * atJoiner[880]!);
    const slots = await until(
      () => {
        const s = agent.framesBySlot();
        return (s[1] ?? 0) >= 90 && (s[2] ?? 0) >= 90 ? s : undefined;
      },
      () => `both labelled streams at the backend: ${JSON.stringify(agent.framesBySlot())}`,
    );
    expect(Object.keys(slots).sort()).toEqual(["1", "2"]);

    const list = await fetch(`${sys.edgeUrl}/v1/realtime/calls/${callId}/participants`, { headers: auth() });
    expect(list.status).toBe(200);
    const leave = await fetch(`${sys.edgeUrl}${joiner.location}`, { method: "DELETE", headers: auth() });
    expect(leave.status).toBe(204);
    await until(
      () => eventsOf(owner.client, "participant.left").length === 1,
      "participant.left at the owner",
    );
    const st = await fetch(`${sys.edgeUrl}/v1/realtime/calls/${callId}`, { headers: auth() });
    expect(((await st.json()) as { state: string }).state).toBe("connected");
    expect(
      (await fetch(`${sys.edgeUrl}/v1/realtime/calls/${callId}`, { method: "DELETE", headers: auth() }))
        .status,
    ).toBe(204);
  });

  it("lets a joiner trickle, restart ICE and read its own leg through the participant URL", async () => {
    const owner = await offerAt("/v1/realtime/calls");
    const callId = owner.location.split("/").pop()!;
    const joiner = await offerAt(`/v1/realtime/calls/${callId}/participants`);
    // The hub names the leg once its hello arrived (a PATCH before that is 409 participant_connecting).
    let seen: LegView | null = null;
    const leg = await until(
      async () => {
        seen = await legOf(joiner.location);
        return seen?.state === "connected" ? seen : undefined;
      },
      () => `the leg known at the hub and connected (last seen: ${JSON.stringify(seen)})`,
      WAIT_MS,
      250,
    );
    expect(leg.legId).toMatch(/^rtc_[A-Za-z0-9_-]{48}$/);
    expect(leg.codec).toBe("opus");
    expect(leg.clientAddress).toMatch(/:\d+$/);
    expect(leg.iceRestarts).toBe(0);

    // The join's ETag is the leg's: a trickle with it is taken.
    const trickle = await patchAt(joiner.location, "a=end-of-candidates\r\n", joiner.etag);
    expect(trickle.status, await trickle.clone().text()).toBe(204);
    expect(trickle.headers.get("x-relay-cluster")).toBe(joiner.cluster);

    const restart = await patchAt(joiner.location, await clientRestartFrag(joiner.client), "*");
    const frag = await restart.text();
    expect(restart.status, frag).toBe(200);
    expect(restart.headers.get("content-type")).toBe("application/trickle-ice-sdpfrag");
    const etag = restart.headers.get("etag")!;
    expect(etag).not.toBe(joiner.etag);
    await clientApplyRestartAnswer(joiner.client, joiner.answer, frag);

    // Audio both ways after the restart: the owner hears the joiner, the joiner hears the owner.
    const from = owner.client.received.length;
    await sendTone(joiner.client, 880, 100, 9000);
    await until(() => owner.client.received.length - from >= 60, "the owner receiving after the restart");
    const atOwner = heard(owner.client, [440, 880], from + 20);
    expect(atOwner[880]).toBeGreaterThan(10 * atOwner[440]!);
    const jFrom = joiner.client.received.length;
    await sendTone(owner.client, 440, 100, 9000);
    await until(() => joiner.client.received.length - jFrom >= 60, "the joiner receiving after the restart");
    const atJoiner = heard(joiner.client, [440, 880], jFrom + 20);
    expect(atJoiner[440]).toBeGreaterThan(10 * atJoiner[880]!);

    const after = await legOf(joiner.location);
    expect(after).toMatchObject({ legId: leg.legId, state: "connected", iceRestarts: 1 });
    expect((await patchAt(joiner.location, "a=end-of-candidates\r\n", joiner.etag)).status).toBe(412);
    expect((await patchAt(joiner.location, "a=end-of-candidates\r\n", etag)).status).toBe(204);
    expect(
      (await fetch(`${sys.edgeUrl}/v1/realtime/calls/${callId}`, { method: "DELETE", headers: auth() }))
        .status,
    ).toBe(204);
  });
});
