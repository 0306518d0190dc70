// The conversation survives a kill -9 of its transceiver (issue 18.3, "the backend keeps the
// conversation"): on the real local system with two transceivers and the echo agent as the
// backend, a caller creates conversation items on its data channel, its transceiver is killed,
// it resumes on the sibling under the same call id, and the echo agent's session.created on the
// new data channel says `resumed: true` with the items it kept; an earlier item can be retrieved
// and a response continues the conversation. Callers sign to the gateway as in chaos.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { ephemeralPlan, type LocalSystem, startLocalSystem } from "../../scripts/lib/local-system.ts";
import { parseClusterKeys } from "../../shared/signing/keys.ts";
import { type SignedCaller, signedCaller } from "../support/signed-call.ts";
import { createTestClient, type TestClient } from "../transceiver/helpers/client.ts";
import { until } from "../transceiver/helpers/harness.ts";

type Ev = Record<string, unknown> & { type: string };

let sys: LocalSystem;
let agent: EchoAgent;
let gw: SignedCaller;
const clients: TestClient[] = [];

beforeAll(async () => {
  agent = await startEchoAgent();
  sys = await startLocalSystem({
    plan: await ephemeralPlan("127.0.0.1", 2),
    redis: false,
    apiKey: "resume-key",
    dashboard: false,
    relayWorkers: 1,
    echoDelayMs: 0,
    backendUrl: agent.url,
    restarts: null,
    log: () => {},
  });
  const keys = parseClusterKeys(sys.secrets.clusterSecret, "GR_CLUSTER_SECRET");
  gw = signedCaller(() => `http://127.0.0.1:${sys.plan.clusters[0]!.gatewayPort}`, keys, { clusterId: 1 });
}, 120_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await sys?.stop();
  await agent?.close();
});

async function offer(
  path: string,
  status: number,
): Promise<{ client: TestClient; callId: string; transceiverId: number }> {
  const client = createTestClient();
  clients.push(client);
  const r = await gw.call("POST", path, {
    sdp: await client.createOffer(),
    ingress: { vip: sys.topology.globalVip },
  });
  const body = (await r.json()) as { callId: string; sdp: string; transceiverId: number };
  expect(r.status, JSON.stringify(body)).toBe(status);
  await client.setAnswer(body.sdp);
  await client.connected(20_000);
  return { client, callId: body.callId, transceiverId: body.transceiverId };
}

/** The next event of `type` on the client's data channel (consumed up to it). */
async function next(c: TestClient, type: string): Promise<Ev> {
  const find = () => c.messages.findIndex((m) => (JSON.parse(m) as Ev).type === type);
  await until(() => find() >= 0, type);
  return JSON.parse(c.messages.splice(0, find() + 1).at(-1)!) as Ev;
}

const send = (c: TestClient, o: unknown) => c.dc!.send(JSON.stringify(o));

describe("the backend keeps the conversation across a kill -9", { timeout: 120_000 }, () => {
  it("items from before the crash are there after the resume on the sibling", async () => {
    const a = await offer("/v1/calls", 201);
    const created = await next(a.client, "session.created");
    expect(created).not.toHaveProperty("resumed");
    send(a.client, {
      type: "conversation.item.create",
      item: {
        id: "u_before",
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "before the crash" }],
      },
    });
    await next(a.client, "conversation.item.done");
    send(a.client, { type: "response.create" });
    const first = await next(a.client, "response.done");

    const proc = sys.supervisor.running.find((r) => r.name === `fra-local-transceiver-${a.transceiverId}`)!;
    process.kill(proc.child.pid!, "SIGKILL");
    await until(() => agent.kept.kept === 1, "the agent keeps the call whose transceiver vanished");
    for (;;) {
      const st = (await (await gw.call("GET", `/v1/calls/${a.callId}`)).json()) as { state?: string };
      if (st.state === "ended") break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const b = await offer(`/v1/calls/${a.callId}`, 200);
    expect(b.callId).toBe(a.callId);
    expect(b.transceiverId).not.toBe(a.transceiverId);
    const again = await next(b.client, "session.created");
    expect(again).toMatchObject({
      resumed: true,
      item_count: 2,
      response_count: 1,
      session: { id: (created.session as { id: string }).id },
    });
    send(b.client, { type: "conversation.item.retrieve", item_id: "u_before" });
    expect(await next(b.client, "conversation.item.retrieved")).toMatchObject({ item: { id: "u_before" } });
    send(b.client, { type: "response.create" });
    const done = await next(b.client, "response.done");
    expect(done.response).toMatchObject({
      conversation_id: (first.response as { conversation_id: string }).conversation_id,
      output: [{ content: [{ transcript: "before the crash" }] }],
    });
    expect(agent.kept).toMatchObject({ kept: 0, restored: 1 });
    const started = agent.events.filter(
      (e): e is { type: string; call_id: string; resumed: boolean } =>
        (e as { type?: string }).type === "session.started",
    );
    expect(started.filter((e) => e.call_id === a.callId).map((e) => e.resumed)).toEqual([false, true]);
  });
});
