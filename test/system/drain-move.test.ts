// A planned restart without dropped calls (issue 18.4): SIGTERM drains a transceiver, which tells
// each live call's client `transceiver.resume_required` on its data channel; each client resumes
// (a new offer POSTed to the call's URL) and the gateway moves the call to the sibling, then ends
// the old session, so the draining process exits as soon as its calls have moved instead of at
// the drain deadline. Callers sign to the cluster's gateway as the edge does (see chaos.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { ephemeralPlan, type LocalSystem, startLocalSystem } from "../../scripts/lib/local-system.ts";
import { parseClusterKeys } from "../../shared/signing/keys.ts";
import { type SignedCaller, signedCaller } from "../support/signed-call.ts";
import { createTestClient, type TestClient } from "../transceiver/helpers/client.ts";
import { until } from "../transceiver/helpers/harness.ts";

let sys: LocalSystem;
let agent: EchoAgent;
let gw: SignedCaller;
const clients: TestClient[] = [];

beforeAll(async () => {
  agent = await startEchoAgent();
  sys = await startLocalSystem({
    plan: await ephemeralPlan("127.0.0.1", 2),
    redis: false,
    apiKey: "drain-key",
    dashboard: false,
    relayWorkers: 1,
    echoDelayMs: 0,
    backendUrl: agent.url,
    restarts: null,
    // Far beyond the test's own bounds: the process must exit because its calls moved.
    extraEnv: { DRAIN_DEADLINE_MS: "120000" },
    log: () => {},
  });
  // The local system's GR_CLUSTER_SECRET is a keyring ("id:base64"); sign for the gateway as the edge does.
  const keys = parseClusterKeys(sys.secrets.clusterSecret, "GR_CLUSTER_SECRET");
  gw = signedCaller(() => `http://127.0.0.1:${sys.plan.clusters[0]!.gatewayPort}`, keys, { clusterId: 1 });
}, 120_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await sys?.stop();
  await agent?.close();
});

async function offer(
  c: TestClient,
  path: string,
): Promise<{ callId: string; transceiverId: number; status: number }> {
  const r = await gw.call("POST", path, {
    sdp: await c.createOffer(),
    ingress: { vip: sys.topology.globalVip },
  });
  const body = (await r.json()) as { callId: string; sdp: string; transceiverId: number };
  if (r.status === 200 || r.status === 201) {
    await c.setAnswer(body.sdp);
    await c.connected(20_000);
  }
  return { callId: body.callId, transceiverId: body.transceiverId, status: r.status };
}

async function echoes(c: TestClient, tag: number): Promise<void> {
  for (let i = 0; i < 20; i++)
    c.sendAudio(Buffer.from([tag, i]), 2000 + tag * 50 + i, (2000 + tag * 50 + i) * 960);
  await until(() => c.received.some((p) => p.payload[0] === tag), `echo ${tag}`);
}

describe("drain moves live calls to the sibling", { timeout: 120_000 }, () => {
  it("every client is asked to resume, moves, and the drained process exits early", async () => {
    const calls: { client: TestClient; callId: string; transceiverId: number }[] = [];
    for (let i = 0; i < 4; i++) {
      const client = createTestClient();
      clients.push(client);
      calls.push({ client, ...(await offer(client, "/v1/calls")) });
    }
    for (const [i, c] of calls.entries()) await echoes(c.client, 10 + i);
    const victimId = calls[0]!.transceiverId;
    const moving = calls.filter((c) => c.transceiverId === victimId);
    const staying = calls.filter((c) => c.transceiverId !== victimId);
    expect(staying.length).toBeGreaterThan(0);

    const proc = sys.supervisor.running.find((r) => r.name === `fra-local-transceiver-${victimId}`)!;
    const exited = new Promise<number | null>((r) => proc.child.once("exit", (code) => r(code)));
    proc.child.kill("SIGTERM");

    for (const [i, c] of moving.entries()) {
      await until(
        () => c.client.messages.some((m) => m.includes('"transceiver.resume_required"')),
        "the resume notice on the data channel",
      );
      const next = createTestClient();
      clients.push(next);
      const r = await offer(next, `/v1/calls/${c.callId}`);
      expect(r).toMatchObject({ status: 200, callId: c.callId });
      expect(r.transceiverId).not.toBe(victimId);
      await echoes(next, 30 + i);
    }
    // Its calls moved, the gateway ended the old sessions: the drain ends long before its deadline.
    // (The old peer connections are still open: only the gateway's DELETE ended their sessions.)
    const code = await Promise.race([
      exited,
      new Promise<string>((r) => setTimeout(() => r("still draining after 20 s"), 20_000)),
    ]);
    expect(code).toBe(0);
    for (const c of staying) await echoes(c.client, 50);
    const started = agent.events.filter(
      (e): e is { type: string; call_id: string; resumed: boolean } =>
        (e as { type?: string }).type === "session.started",
    );
    for (const c of moving)
      expect(started.filter((e) => e.call_id === c.callId).map((e) => e.resumed)).toEqual([false, true]);
  });
});
