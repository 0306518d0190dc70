// Call lifecycle with real werift clients: a dead client is detected through consent
// freshness, the maximum duration, a client that never connects, drain, and backends that are
// slow or gone. Each case has its own transceiver (short timers through config), run concurrently.
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { FlowCloseReason } from "../../shared/backbone/frame.ts";
import { createTestClient } from "./helpers/client.ts";
import { type CallStatus, type Harness, sleep, startHarness, until } from "./helpers/harness.ts";

async function status(h: Harness, callId: string): Promise<CallStatus> {
  return (await (await h.call("GET", `/v1/calls/${callId}`)).json()) as CallStatus;
}

async function withHarness(
  over: Parameters<typeof startHarness>[0],
  f: (h: Harness) => Promise<void>,
  o = {},
) {
  const h = await startHarness(over, o);
  try {
    await f(h);
  } finally {
    await h.close();
  }
}

describe.concurrent("lifecycle", () => {
  it("detects a client that went away (no consent responses) and sends flowClose", async () => {
    await withHarness({ consentTimeoutMs: 8000 }, async (h) => {
      const { callId } = await h.connectClient();
      const alive = await h.connectClient();
      const addr = (await status(h, callId)).clientAddress!;
      h.relay.blackhole(Number(addr.split(":")[1]));
      await until(async () => (await status(h, callId)).state === "ended", "dead client detected");
      const st = await status(h, callId);
      expect(st.endReason).toBe("consent_lost");
      await until(() => h.relay.flowCloses.some((f) => f.address === addr), "flowClose");
      expect(h.relay.flowCloses.find((f) => f.address === addr)!.reason).toBe(FlowCloseReason.consentLost);
      // The other client, which kept answering, is untouched.
      expect((await status(h, alive.callId)).state).toBe("connected");
    });
  });

  it("ends a session at its maximum duration", async () => {
    await withHarness({ maxSessionMs: 4000 }, async (h) => {
      const { callId } = await h.connectClient();
      await until(async () => (await status(h, callId)).state === "ended", "max duration");
      expect((await status(h, callId)).endReason).toBe("max_duration");
      await until(() => h.relay.flowCloses.length > 0, "flowClose");
      expect(h.relay.flowCloses[0]!.reason).toBe(FlowCloseReason.maxDuration);
    });
  });

  it("ends a session whose client never connects", async () => {
    await withHarness({ setupTimeoutMs: 1500 }, async (h) => {
      const c = createTestClient();
      const r = await h.call("POST", "/v1/calls", { sdp: await c.createOffer() });
      const { callId } = (await r.json()) as { callId: string };
      await c.close();
      await until(async () => (await status(h, callId)).state === "ended", "setup timeout");
      expect((await status(h, callId)).endReason).toBe("setup_timeout");
      expect(h.t.metrics.render()).toMatch(
        /gr_transceiver_calls_ended_total\{cluster="1",reason="setup_timeout"\} 1/,
      );
    });
  });

  it("drains: no new sessions (503), existing ones run to the deadline, then end with flowClose", async () => {
    await withHarness({ drainDeadlineMs: 4000 }, async (h) => {
      const { client, callId } = await h.connectClient();
      const drained = h.t.drain();
      const c = createTestClient();
      const r = await h.call("POST", "/v1/calls", { sdp: await c.createOffer() });
      await c.close();
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("5");
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe("draining");
      const health = (await (await fetch(`${h.t.httpUrl}/healthz`)).json()) as { status: string };
      expect(health.status).toBe("draining");
      // Still served while draining.
      client.dc!.send(JSON.stringify({ type: "ping" }));
      await until(() => client.messages.some((m) => m.includes("pong")), "pong while draining");
      await drained;
      expect(h.t.ended.get(callId)?.status.endReason).toBe("drain");
      // Sent as the call ends; it reaches the relay an event-loop turn or so later.
      await until(
        () => h.relay.flowCloses.some((f) => f.reason === FlowCloseReason.drain),
        "flowClose drain",
      );
    });
  });

  it("a backend that never answers costs bounded, counted drops and a notice, not a stall", async () => {
    // Accepts TCP, never completes the WebSocket handshake.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as { port: number }).port;
    try {
      await withHarness(
        { backendUrl: `ws://127.0.0.1:${port}`, backendQueueBytes: 2048, backendConnectTimeoutMs: 30_000 },
        async (h) => {
          const { client, callId } = await h.connectClient();
          for (let i = 0; i < 60; i++) {
            client.sendAudio(Buffer.alloc(80, i), i, i * 960);
            await sleep(10);
          }
          await until(() => h.t.metrics.backendDroppedToBackend.value > 0, "drops counted");
          await until(
            () => client.messages.some((m) => m.includes("transceiver.backend_dropped")),
            "client told",
          );
          const st = await status(h, callId);
          expect(st.state).toBe("connected");
          expect(st.backend.state).toBe("connecting");
          // 2048 bytes hold at most 22 frames of 92 bytes; the rest were dropped.
          expect(st.backend.droppedToBackend).toBeGreaterThanOrEqual(60 - 22);
        },
      );
    } finally {
      silent.close();
    }
  });

  it("ends the session when the backend goes away, and tells the client first", async () => {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((r) => wss.once("listening", r));
    const port = (wss.address() as { port: number }).port;
    wss.on("connection", (ws) => {
      ws.on("message", (d, bin) => {
        if (!bin && String(d).includes('"ping"')) ws.close(1011, "model crashed");
      });
    });
    try {
      await withHarness({ backendUrl: `ws://127.0.0.1:${port}` }, async (h) => {
        const { client, callId } = await h.connectClient();
        await until(() => client.dc?.readyState === "open", "dc open");
        client.dc!.send(JSON.stringify({ type: "ping" }));
        await until(async () => (await status(h, callId)).state === "ended", "ended");
        expect((await status(h, callId)).endReason).toBe("backend_closed");
        expect(client.messages.some((m) => m.includes("transceiver.backend_unavailable"))).toBe(true);
        expect(h.t.metrics.render()).toMatch(
          /gr_transceiver_calls_ended_total\{cluster="1",reason="backend_closed"\} 1/,
        );
      });
    } finally {
      wss.close();
    }
  });
});
