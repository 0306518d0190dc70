// A joined call on the real local system (edge in workerd, gateways, relays, POP, a transceiver
// in each of two clusters, the echo agent): werift clients call and join through the edge's
// public API; the backend gets both labelled streams, each client hears the other's tone, the
// participant events arrive, and a leave (DELETE at the edge) leaves the owner's call running.
// Wherever the edge steers them (one transceiver or two),
// the conference works: hub and leg may share a process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { ephemeralPlan, type LocalSystem, startLocalSystem } from "../../scripts/lib/local-system.ts";
import { createTestClient, type TestClient } from "../transceiver/helpers/client.ts";
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
    log: () => {},
  });
}, 120_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await sys?.stop();
  await agent?.close();
});

const auth = () => ({ authorization: `Bearer ${sys.apiKey}` });

async function offerAt(
  path: string,
): Promise<{ client: TestClient; location: string; cluster: string | null }> {
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
  return { client, location: res.headers.get("location")!, cluster: res.headers.get("x-relay-cluster") };
}

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
});
