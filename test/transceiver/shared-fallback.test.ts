// Shared backend connections with a backend that does not take them (regional/transceiver/shell/
// shared-backend.ts): an old backend (101 without x-gr-shared) and one that refuses an upgrade
// without x-gr-call-id get one connection per call, the calls that waited on the probe keep what
// they sent; the backend is asked again after SHARED_RETRY_MS. Then the transceiver end to end:
// a real client call over a shared connection, and over its own with BACKEND_SHARED_CONNECTIONS=0.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { startEchoAgent } from "../../regional/echo-agent/agent.ts";
import type { BackendCall, BridgeHandlers } from "../../regional/transceiver/backend-link.ts";
import { SHARED_HEADER } from "../../regional/transceiver/backend-shared.ts";
import { BackendBridge } from "../../regional/transceiver/shell/bridge.ts";
import { SHARED_RETRY_MS, SharedBackend } from "../../regional/transceiver/shell/shared-backend.ts";
import { webSocketBackend } from "../../regional/transceiver/shell/websocket-backend.ts";
import { until } from "../support/wait.ts";
import { startHarness } from "./helpers/harness.ts";
import {
  asksShared,
  cleanupAfterEach,
  frame,
  openCall,
  payload,
  seqs,
  startTestBackend,
  type TestBackend,
  type TestCall,
} from "./helpers/shared-backend.ts";

const cleanup = cleanupAfterEach();

async function testBackend(o: Parameters<typeof startTestBackend>[0]): Promise<TestBackend> {
  const be = await startTestBackend(o);
  cleanup.push(() => be.close());
  return be;
}

function connector(url: string) {
  const c = webSocketBackend({
    backendUrl: url,
    backendQueueBytes: 64 * 1024,
    backendConnectTimeoutMs: 2000,
    backendSharedConnections: 2,
    clusterId: 3,
    transceiverId: 7,
  });
  cleanup.push(() => c.close?.());
  return c;
}

const started = (c: TestCall) => JSON.stringify({ type: "session.started", call_id: c.callId });
const probes = (be: TestBackend) => be.upgrades.filter(asksShared).length;

/** What a call sends while its connection connects: an event, three frames, an event. */
function talkWhileWaiting(c: TestCall, tag: number): (string | number)[] {
  c.link.sendEvent(started(c));
  for (let f = 0; f < 3; f++) c.link.sendAudio(frame(tag * 10 + f), payload(tag, f));
  c.link.sendEvent('{"type":"ping"}');
  return [started(c), tag * 10, tag * 10 + 1, tag * 10 + 2, '{"type":"ping"}'];
}

/** A call the per-call connection carries: it echoes a frame. */
async function echoesAlone(be: TestBackend, c: TestCall, seq: number): Promise<void> {
  c.link.sendAudio(frame(seq), payload(0, seq));
  await until(() => seqs(c).includes(seq), `${c.callId} echoes ${seq}`);
  expect(be.perCall.filter((p) => p.callId === c.callId)).toHaveLength(1);
  expect([...c.errors, ...c.closes]).toEqual([]);
}

describe.each(["old", "refuse"] as const)("a backend that takes no shared connections (%s)", (mode) => {
  it("moves the calls waiting on the probe to connections of their own with what they sent, in order; later calls go straight there", async () => {
    const be = await testBackend({ mode });
    const k = connector(be.url);
    const calls = [openCall(k, "rtc_a"), openCall(k, "rtc_b"), openCall(k, "rtc_c")];
    const sent = calls.map((c, i) => talkWhileWaiting(c, i + 1));
    const perCall = (id: string) => be.perCall.find((p) => p.callId === id);
    await until(
      () => calls.every((c, i) => perCall(c.callId)?.messages.length === sent[i]!.length),
      "every waiting call's messages on its own connection",
    );
    for (const [i, c] of calls.entries()) {
      expect(perCall(c.callId)!.messages).toEqual(sent[i]);
      await until(() => c.audio.length === 3, `${c.callId}'s echoes`);
      expect(c.link.framesToBackend).toBe(3);
      expect(c.link.droppedToBackend).toBe(0);
    }
    // One probe asked (and, from an old backend, was closed); each call asked with its id, not shared.
    expect(probes(be)).toBe(1);
    expect(be.upgrades[0]![SHARED_HEADER]).toBe("1");
    const own = be.upgrades.slice(1);
    expect(own.map((h) => h["x-gr-call-id"]).sort()).toEqual(["rtc_a", "rtc_b", "rtc_c"]);
    expect(own.every((h) => h[SHARED_HEADER] === undefined)).toBe(true);
    // Every upgrade says which cluster and transceiver ask; the probe is no one call's.
    expect(be.upgrades[0]!["x-gr-call-id"]).toBeUndefined();
    for (const h of be.upgrades) expect([h["x-gr-cluster-id"], h["x-gr-transceiver-id"]]).toEqual(["3", "7"]);
    expect(be.shared).toEqual([]);
    if (mode === "old") {
      expect(be.unnamed).toHaveLength(1);
      await until(() => be.unnamed[0]!.closeCode === 1000, "the probe closed by the transceiver");
    } else {
      expect(be.unnamed).toEqual([]);
    }

    const later = openCall(k, "rtc_later");
    await echoesAlone(be, later, 77);
    expect(probes(be)).toBe(1);
    expect(be.upgrades.at(-1)!["x-gr-call-id"]).toBe("rtc_later");
    for (const c of calls) expect([...c.errors, ...c.closes]).toEqual([]);
  });
});

describe("asking again after SHARED_RETRY_MS", () => {
  it("gives calls their own connections until then, then probes again and picks up a backend upgraded in place", async () => {
    const be = await testBackend({ mode: "old" });
    let now = 1_000;
    const o = { url: be.url, queueBytes: 64 * 1024, connectTimeoutMs: 2000 };
    const sb = new SharedBackend({
      ...o,
      clusterId: 1,
      transceiverId: 1,
      connections: 2,
      perCall: (call: BackendCall, h: BridgeHandlers) =>
        new BackendBridge({ ...o, headers: { "x-gr-call-id": call.callId } }, h),
      onError: () => {},
      now: () => now,
    });
    cleanup.push(() => sb.close());
    const first = openCall(sb, "rtc_1");
    await until(() => sb.mode === "per_call", "per_call after the probe");
    await echoesAlone(be, first, 1);

    now += SHARED_RETRY_MS - 1;
    await echoesAlone(be, openCall(sb, "rtc_2"), 2);
    expect(probes(be)).toBe(1);

    now += 1;
    const third = openCall(sb, "rtc_3");
    expect(sb.mode).toBe("unknown");
    await until(() => probes(be) === 2, "a second probe");
    await echoesAlone(be, third, 3);
    expect(sb.mode).toBe("per_call");

    // The backend now takes shared connections; the next probe is due SHARED_RETRY_MS after the last no.
    be.mode = "shared";
    now += SHARED_RETRY_MS;
    const fourth = openCall(sb, "rtc_4");
    fourth.link.sendAudio(frame(4), payload(4, 4));
    await until(() => seqs(fourth).includes(4), "rtc_4 echoes over a shared connection");
    expect(sb.mode).toBe("shared");
    expect(sb.openConnections).toBe(1);
    expect(be.peerOf("rtc_4").channels.size).toBe(1);
    expect(be.perCall.some((p) => p.callId === "rtc_4")).toBe(false);
  });
});

describe("the transceiver end to end", () => {
  const sharedGauge = (text: string) =>
    Number(/^gr_transceiver_backend_shared_connections\{cluster="1"\} (\d+)$/m.exec(text)?.[1] ?? -1);

  for (const backendSharedConnections of [4, 0]) {
    it(`echoes a client's audio with BACKEND_SHARED_CONNECTIONS=${backendSharedConnections}`, async () => {
      const agent = await startEchoAgent();
      cleanup.push(() => agent.close());
      const h = await startHarness({ backendSharedConnections }, { agent });
      let closed = false;
      cleanup.push(() => (closed ? undefined : h.close()));
      const { client } = await h.connectClient();
      const sent: string[] = [];
      for (let i = 0; i < 20; i++) {
        const p = Buffer.concat([Buffer.from([5, i]), randomBytes(60)]);
        sent.push(p.toString("hex"));
        client.sendAudio(p, 100 + i, (100 + i) * 960);
        await new Promise((r) => setTimeout(r, 20));
      }
      const echoed = () =>
        client.received.filter((p) => p.payload[0] === 5).map((p) => p.payload.toString("hex"));
      await until(() => echoed().length >= 20, "20 echoed packets");
      expect(echoed()).toEqual(sent);
      expect(agent.connections).toBe(1);
      if (backendSharedConnections > 0) {
        expect(agent.sharedConnections).toBeGreaterThanOrEqual(1);
        expect(sharedGauge(h.t.metrics.render())).toBeGreaterThanOrEqual(1);
      } else {
        expect(agent.sharedConnections).toBe(0);
        expect(sharedGauge(h.t.metrics.render())).toBeLessThanOrEqual(0);
      }
      // The transceiver stopping closes its shared connections.
      closed = true;
      await h.close();
      await until(
        () => agent.connections === 0 && agent.sharedConnections === 0,
        "the agent's connections closed",
      );
    });
  }
});
