// kill -9 of a transceiver under live calls, on the real local system (edge in workerd, gateway,
// cluster relay, POP, two transceivers in one cluster): the gateway and the cluster relay see it
// within seconds, every way a caller holds a call learns it ended (GET says `ended` with
// `transceiver_failed`, DELETE a clear 404, the WebSocket an error event and 1011), the calls on
// the sibling go on, new calls land on the sibling, and the supervisor brings the process back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { transceiverOfCallId } from "../../regional/gateway/routing.ts";
import { ephemeralPlan, type LocalSystem, startLocalSystem } from "../../scripts/lib/local-system.ts";
import { decodeBase64 } from "../../shared/bytes/base64.ts";
import { callStatus } from "../support/namespaced-system.ts";
import { createTestClient, type TestClient } from "../transceiver/helpers/client.ts";
import { until } from "../transceiver/helpers/harness.ts";

let sys: LocalSystem;
const logs: string[] = [];
const clients: TestClient[] = [];

beforeAll(async () => {
  sys = await startLocalSystem({
    plan: await ephemeralPlan("127.0.0.1", 2),
    redis: false,
    apiKey: "death-key",
    dashboard: false,
    relayWorkers: 1,
    echoDelayMs: 0,
    log: () => {},
    onChildLine: (name, line) => {
      logs.push(`[${name}] ${line}`);
      if (logs.length > 5000) logs.splice(0, 1000);
    },
  });
}, 120_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await sys?.stop();
});

const auth = () => ({ authorization: `Bearer ${sys.apiKey}` });

interface HttpCall {
  client: TestClient;
  callId: string;
  transceiver: number;
}

async function httpCall(): Promise<HttpCall> {
  const client = createTestClient();
  clients.push(client);
  const res = await fetch(`${sys.edgeUrl}/v1/realtime/calls`, {
    method: "POST",
    headers: { ...auth(), "content-type": "application/sdp" },
    body: await client.createOffer(),
  });
  const body = await res.text();
  expect(res.status, body).toBe(201);
  const callId = res.headers.get("location")!.split("/").pop()!;
  await client.setAnswer(body);
  await client.connected(15_000);
  return { client, callId, transceiver: transceiverOfCallId(callId)! };
}

interface WsCall extends HttpCall {
  ws: WebSocket;
  messages: Record<string, unknown>[];
  closed: Promise<number>;
}

async function wsCall(): Promise<WsCall> {
  const client = createTestClient();
  clients.push(client);
  const url = new URL("/v1/realtime/ws", sys.edgeUrl);
  url.protocol = "ws:";
  const ws = new WebSocket(url, ["gr-realtime", `gr-auth.${sys.apiKey}`]);
  const messages: Record<string, unknown>[] = [];
  ws.on("message", (d) => messages.push(JSON.parse(String(d)) as Record<string, unknown>));
  const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  ws.send(JSON.stringify({ type: "offer", sdp: await client.createOffer() }));
  await until(() => messages.some((m) => m.type === "answer" || m.type === "error"), "ws answer");
  const answer = messages.find((m) => m.type === "answer");
  expect(answer, JSON.stringify(messages)).toBeDefined();
  await client.setAnswer(String(answer!.sdp));
  await client.connected(15_000);
  const callId = String(answer!.callId);
  return { client, callId, transceiver: transceiverOfCallId(callId)!, ws, messages, closed };
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, rej) =>
      setTimeout(() => rej(new Error(`timed out waiting for ${what}; ${logs.slice(-40).join("\n")}`)), ms),
    ),
  ]);
}

/** The cluster id inside a call id (bytes 1-2). */
function clusterOfCallId(callId: string): number {
  const b = decodeBase64(callId.slice(4), "url")!;
  return (b[1]! << 8) | b[2]!;
}

/** Audio sent now comes back (the call's whole path works). */
async function echoes(c: TestClient, tag: number): Promise<void> {
  for (let i = 0; i < 20; i++)
    c.sendAudio(Buffer.from([tag, i]), 1000 + tag * 50 + i, (1000 + tag * 50 + i) * 960);
  await until(() => c.received.some((p) => p.payload[0] === tag), `echo ${tag}`);
}

describe("kill -9 of a transceiver under live calls", { timeout: 120_000 }, () => {
  it("is detected, every caller is told, siblings are untouched, and it comes back", async () => {
    const ws = await wsCall();
    const calls = [await httpCall(), await httpCall(), await httpCall()];
    const victimId = ws.transceiver;
    const victims = calls.filter((c) => c.transceiver === victimId);
    const siblings = calls.filter((c) => c.transceiver !== victimId);
    // Least loaded first: the calls are spread over both transceivers.
    expect(victims.length, calls.map((c) => c.transceiver).join(",")).toBeGreaterThan(0);
    expect(siblings.length).toBeGreaterThan(0);

    // The edge steers by the caller's coordinates: every call lands in the same cluster.
    const cluster = sys.plan.clusters.find((c) => c.id === clusterOfCallId(ws.callId))!;
    expect(calls.every((c) => clusterOfCallId(c.callId) === cluster.id)).toBe(true);
    const name = `${cluster.name}-transceiver-${victimId}`;
    const proc = sys.supervisor.running.find((r) => r.name === name)!;
    const t0 = Date.now();
    process.kill(proc.child.pid!, "SIGKILL");

    // The WebSocket caller: an error event naming the failure, `ended`, then 1011.
    const code = await within(ws.closed, 10_000, "the WebSocket to close");
    const wsMs = Date.now() - t0;
    expect(code).toBe(1011);
    const error = ws.messages.find((m) => m.type === "error") as { error: { code: string } } | undefined;
    expect(error?.error.code, JSON.stringify(ws.messages)).toBe("transceiver_failed");
    expect(ws.messages.find((m) => m.type === "ended")).toMatchObject({ reason: "transceiver_failed" });

    // The HTTP callers: GET says what happened (never 500), DELETE finds the call gone.
    const v = victims[0]!;
    const st = await until(async () => {
      const s = await callStatus({ system: sys }, v.callId);
      expect(s.status, JSON.stringify(s.body)).not.toBe(500);
      return s.body.state === "ended";
    }, "GET to say ended").then(() => callStatus({ system: sys }, v.callId));
    const getMs = Date.now() - t0;
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({ callId: v.callId, state: "ended", endReason: "transceiver_failed" });
    const del = await fetch(`${sys.edgeUrl}/v1/realtime/calls/${v.callId}`, {
      method: "DELETE",
      headers: auth(),
    });
    expect(del.status).toBe(404);
    expect(((await del.json()) as { error: { code: string } }).error.code).toBe("call_ended");

    // The cluster relay stopped routing to it.
    await until(
      () =>
        logs.some(
          (l) =>
            l.startsWith(`[${cluster.name}-relay]`) &&
            l.includes("transceiver down") &&
            l.includes(`"transceiverId":${victimId}`),
        ),
      "the cluster relay to see the transceiver down",
    );
    const relayMs = Date.now() - t0;

    // The sibling's calls lose nothing; a new call lands there (or on the restarted process).
    for (const [i, s] of siblings.entries()) {
      expect((await callStatus({ system: sys }, s.callId)).body.state).toBe("connected");
      await echoes(s.client, 40 + i);
    }
    const fresh = await httpCall();
    await echoes(fresh.client, 60);

    // The dead call resumes: a new peer connection POSTs its offer to the call's URL, the cluster
    // creates the call anew on the sibling under the same call id, and media flows again.
    const again = createTestClient();
    clients.push(again);
    const res = await fetch(`${sys.edgeUrl}/v1/realtime/calls/${v.callId}`, {
      method: "POST",
      headers: { ...auth(), "content-type": "application/sdp" },
      body: await again.createOffer(),
    });
    const answer = await res.text();
    expect(res.status, answer).toBe(200);
    expect(res.headers.get("location")).toBe(`/v1/realtime/calls/${v.callId}`);
    await again.setAnswer(answer);
    await again.connected(15_000);
    await echoes(again, 70);
    const resumedMs = Date.now() - t0;
    const resumed = await callStatus({ system: sys }, v.callId);
    expect(resumed.body).toMatchObject({ callId: v.callId, state: "connected" });
    // On the sibling, or on the victim's restarted process if the supervisor was quicker.
    expect(cluster.transceivers.map((t) => t.id)).toContain(resumed.body.transceiverId);
    // Follow-ups reach it where it lives now.
    const hang = await fetch(`${sys.edgeUrl}/v1/realtime/calls/${v.callId}`, {
      method: "DELETE",
      headers: auth(),
    });
    expect(hang.status).toBe(204);
    expect((await callStatus({ system: sys }, v.callId)).body).toMatchObject({
      state: "ended",
      endReason: "hangup",
    });

    // The supervisor restarts it; its old calls are still reported as failed, not unknown.
    await until(
      () => sys.supervisor.running.some((r) => r.name === name && r.child.pid !== proc.child.pid),
      "restart",
    );
    const restarted = sys.supervisor.running.find((r) => r.name === name)!;
    const port = cluster.transceivers.find((t) => t.id === victimId)!.httpPort;
    await until(
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok === true,
      "restarted healthz",
    );
    const gateway = `http://127.0.0.1:${cluster.gatewayPort}`;
    await until(
      async () =>
        ((await (await fetch(`${gateway}/healthz`)).json()) as { transceivers: number }).transceivers === 2,
      "the gateway to see it up again",
    );
    const after = await callStatus({ system: sys }, ws.callId);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ state: "ended", endReason: "transceiver_failed" });
    expect(restarted.child.pid).not.toBe(proc.child.pid);
    console.log(
      JSON.stringify({
        measured: "transceiver kill -9",
        wsToldMs: wsMs,
        getEndedMs: getMs,
        relaySawDownByMs: relayMs,
        resumedAndEchoingMs: resumedMs,
      }),
    );
  });
});
