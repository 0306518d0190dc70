// Real werift client peers through the frame-wrapping loopback relay into one transceiver:
// echoed audio, data channel, ICE restart, address change, hang-up with flowClose, garbage.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hmacSha1 } from "../../regional/common/hmac.ts";
import { configWithDefaults } from "../../regional/transceiver/config.ts";
import { startTransceiver } from "../../regional/transceiver/transceiver.ts";
import { FlowCloseReason, FrameType } from "../../shared/backbone/frame.ts";
import { encodeBindingRequest } from "../../shared/stun/writer.ts";
import { clientApplyRestartAnswer, clientRestartFrag, type TestClient } from "./helpers/client.ts";
import {
  type CallStatus,
  callStatus,
  type Harness,
  quietLog,
  randomKeyring,
  sleep,
  startHarness,
  until,
} from "./helpers/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ pathQuietMs: 1000 });
});
afterAll(async () => {
  await h?.close();
});

const status = (callId: string): Promise<CallStatus> => callStatus(h, callId);

/** Sends n packets (20 ms apart) with payloads tagged `tag`, returns the payloads sent. */
async function talk(c: TestClient, tag: number, n: number, seq0: number): Promise<string[]> {
  const sent: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = Buffer.concat([Buffer.from([tag, i]), randomBytes(78)]);
    sent.push(p.toString("hex"));
    c.sendAudio(p, (seq0 + i) & 0xffff, (seq0 + i) * 960);
    await sleep(20);
  }
  return sent;
}

const echoed = (c: TestClient, tag: number) =>
  c.received.filter((p) => p.payload[0] === tag).map((p) => p.payload.toString("hex"));

describe("media through the shared socket", () => {
  it("echoes the caller's audio: the same payloads, in order", async () => {
    const { client, callId } = await h.connectClient({ fec: true });
    const sent = await talk(client, 1, 50, 1000);
    await until(() => echoed(client, 1).length >= 50, "50 echoed packets");
    expect(echoed(client, 1)).toEqual(sent);
    const st = await status(callId);
    expect(st.state).toBe("connected");
    expect(st.codec).toBe("opus");
    expect(st.opusFec).toBe(true);
    expect(st.clientAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(st.popId).toBe(1);
    expect(st.backend.framesToBackend).toBeGreaterThanOrEqual(50);
  });

  it("round-trips JSON events on oai-events, and the backend saw session.started", async () => {
    const { client, callId } = await h.connectClient({ session: { instructions: "be brief" } });
    await until(() => client.dc?.readyState === "open", "data channel open");
    client.dc!.send(JSON.stringify({ type: "ping" }));
    client.dc!.send(
      JSON.stringify({
        type: "conversation.item.create",
        item: { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
      }),
    );
    const types = () => client.messages.map((m) => (JSON.parse(m) as { type: string }).type);
    await until(() => types().includes("conversation.item.done"), "item events back");
    // The echo backend speaks the Realtime protocol: session.created first, then the answers.
    expect(types()).toEqual([
      "session.created",
      "pong",
      "conversation.item.created",
      "conversation.item.added",
      "conversation.item.done",
    ]);
    expect(JSON.parse(client.messages[0]!).session.instructions).toBe("be brief");
    expect(JSON.parse(client.messages[2]!).item.content).toEqual([{ type: "input_text", text: "hi" }]);
    const started = h.agent.events.find(
      (e) =>
        (e as { type: string; call_id?: string }).type === "session.started" &&
        (e as { call_id: string }).call_id === callId,
    ) as { session: unknown; audio: { codec: string } };
    expect(started.session).toEqual({ instructions: "be brief" });
    expect(started.audio.codec).toBe("opus");
  });

  it("negotiates PCMU when the client offers only PCMU, and echoes it", async () => {
    const { client, callId, answer } = await h.connectClient({ codecs: "pcmu" });
    expect(answer).toMatch(/a=rtpmap:0 PCMU\/8000/);
    expect(answer).not.toMatch(/opus/i);
    for (let i = 0; i < 10; i++) {
      client.track.writeRtp(
        new (await import("werift")).RtpPacket(
          new (await import("werift")).RtpHeader({ sequenceNumber: i, timestamp: i * 160, payloadType: 0 }),
          Buffer.from([7, i, ...randomBytes(158)]),
        ),
      );
      await sleep(20);
    }
    await until(() => echoed(client, 7).length >= 10, "PCMU echo");
    expect((await status(callId)).codec).toBe("pcmu");
  });

  it("keeps media flowing across an ICE restart (WHIP PATCH If-Match: *)", async () => {
    const { client, callId, answer, etag } = await h.connectClient();
    await talk(client, 2, 10, 0);
    await until(() => echoed(client, 2).length >= 10, "echo before restart");
    const before = await status(callId);
    const frag = await clientRestartFrag(client);
    const r = await h.call("PATCH", `/v1/calls/${callId}`, frag, {
      "content-type": "application/trickle-ice-sdpfrag",
      "if-match": "*",
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/trickle-ice-sdpfrag");
    const newEtag = r.headers.get("etag")!;
    expect(newEtag).not.toBe(`"${etag}"`);
    const answerFrag = await r.text();
    const newUfrag = /a=ice-ufrag:(\S+)/.exec(answerFrag)![1]!;
    expect(newUfrag).toHaveLength(24);
    expect(answer).not.toContain(newUfrag);
    expect(answerFrag).toMatch(/a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 \d+ typ host/);
    await clientApplyRestartAnswer(client, answer, answerFrag);
    const sent = await talk(client, 3, 25, 5000);
    await until(() => echoed(client, 3).length >= 20, "echo after restart");
    const got = echoed(client, 3);
    // Packets sent while the new pair was being nominated may be lost; what arrives is in order.
    expect(sent.filter((p) => got.includes(p))).toEqual(got);
    const after = await status(callId);
    expect(after.state).toBe("connected");
    expect(after.iceRestarts).toBe(before.iceRestarts + 1);
    // The old ETag is stale now.
    const stale = await h.call("PATCH", `/v1/calls/${callId}`, "a=end-of-candidates\r\n", {
      "content-type": "application/trickle-ice-sdpfrag",
      "if-match": `"${etag}"`,
    });
    expect(stale.status).toBe(412);
  });

  it("keeps the session when the client's address changes (NAT rebinding)", async () => {
    const { client, callId } = await h.connectClient();
    await talk(client, 4, 5, 0);
    await until(() => echoed(client, 4).length >= 5, "echo before move");
    const before = await status(callId);
    const realPort = Number(before.clientAddress!.split(":")[1]);
    const apparent = 20001; // below the ephemeral range the real port is from; each test its own (one relay remaps all)
    h.relay.remap(realPort, apparent);
    // The client's next consent check arrives from the new address once the old path is quiet.
    let seq = 100;
    await until(async () => {
      await talk(client, 5, 5, seq);
      seq += 5;
      return (await status(callId)).clientAddress === `127.0.0.1:${apparent}`;
    }, "session moved to the new address");
    const sent = await talk(client, 6, 20, 2000);
    await until(() => echoed(client, 6).length >= 20, "echo after move");
    expect(echoed(client, 6)).toEqual(sent);
    const after = await status(callId);
    expect(after.callId).toBe(callId);
    expect(after.state).toBe("connected");
    expect(after.addressChanges).toBe(1);
  });

  it("a valid USE-CANDIDATE check from an address that cannot answer our check never moves the call", async () => {
    const { client, callId, answer } = await h.connectClient();
    const serverUfrag = /a=ice-ufrag:(\S+)/.exec(answer)![1]!;
    const serverPwd = /a=ice-pwd:(\S+)/.exec(answer)![1]!;
    const clientUfrag = /a=ice-ufrag:(\S+)/.exec(client.pc.localDescription!.sdp)![1]!;
    await talk(client, 8, 3, 0);
    const before = (await status(callId)).clientAddress;
    const check = (pwd: string) =>
      encodeBindingRequest({
        transactionId: randomBytes(12),
        username: `${serverUfrag}:${clientUfrag}`,
        password: pwd,
        hmacSha1,
        useCandidate: true,
      });
    // Wrong password: dropped, the session stays where it is.
    const bad = h.t.metrics.drops.bad_integrity.value;
    h.relay.sendFrame(FrameType.data, "127.0.0.2", 4444, check("x".repeat(32)));
    await until(() => h.t.metrics.drops.bad_integrity.value > bad, "bad integrity counted");
    // Right password, from an address nobody answers at: our check goes there, nothing comes back.
    const checked = h.t.metrics.pathEventCount("checked");
    const expired = h.t.metrics.pathEventCount("expired");
    h.relay.sendFrame(FrameType.data, "127.0.0.2", 4444, check(serverPwd));
    await until(() => h.t.metrics.pathEventCount("checked") > checked, "our check sent");
    const sent = await talk(client, 10, 10, 100);
    await until(() => echoed(client, 10).length >= 10, "echo keeps flowing");
    expect(echoed(client, 10)).toEqual(sent);
    const st = await status(callId);
    expect(st.clientAddress).toBe(before);
    expect(st.addressChanges).toBe(0);
    await until(() => h.t.metrics.pathEventCount("expired") > expired, "the candidate expired");
    expect((await status(callId)).clientAddress).toBe(before);
  });

  it("a valid check for one call, sent from another call's address, takes nothing away from it", async () => {
    const a = await h.connectClient();
    const b = await h.connectClient();
    const serverUfrag = /a=ice-ufrag:(\S+)/.exec(a.answer)![1]!;
    const serverPwd = /a=ice-pwd:(\S+)/.exec(a.answer)![1]!;
    const clientUfrag = /a=ice-ufrag:(\S+)/.exec(a.client.pc.localDescription!.sdp)![1]!;
    await talk(b.client, 13, 5, 0);
    await until(() => echoed(b.client, 13).length >= 5, "b's echo");
    const bAddress = (await status(b.callId)).clientAddress!;
    const [ip, port] = bAddress.split(":");
    const inUse = h.t.metrics.drops.path_in_use.value;
    h.relay.sendFrame(
      FrameType.data,
      ip!,
      Number(port),
      encodeBindingRequest({
        transactionId: randomBytes(12),
        username: `${serverUfrag}:${clientUfrag}`,
        password: serverPwd,
        hmacSha1,
        useCandidate: true,
      }),
    );
    await until(() => h.t.metrics.drops.path_in_use.value > inUse, "path_in_use counted");
    const sent = await talk(b.client, 14, 20, 100);
    await until(() => echoed(b.client, 14).length >= 20, "b's echo after the forged check");
    expect(echoed(b.client, 14)).toEqual(sent);
    expect((await status(b.callId)).clientAddress).toBe(bAddress);
    expect((await status(a.callId)).clientAddress).not.toBe(bAddress);
  });

  it("a genuine move (USE-CANDIDATE from the client's new address) completes within one check round trip", async () => {
    const { client, callId, answer } = await h.connectClient();
    const serverUfrag = /a=ice-ufrag:(\S+)/.exec(answer)![1]!;
    const serverPwd = /a=ice-pwd:(\S+)/.exec(answer)![1]!;
    const clientUfrag = /a=ice-ufrag:(\S+)/.exec(client.pc.localDescription!.sdp)![1]!;
    await talk(client, 11, 3, 0);
    await until(() => echoed(client, 11).length >= 3, "echo before the move");
    const realPort = Number((await status(callId)).clientAddress!.split(":")[1]);
    const apparent = 20002; // below the ephemeral range the real port is from; each test its own (one relay remaps all)
    h.relay.remap(realPort, apparent);
    const checked = h.t.metrics.pathEventCount("checked");
    const validated = h.t.metrics.pathEventCount("validated");
    // The client's nominating check from its new address (what it sends after a network change).
    h.relay.sendFrame(
      FrameType.data,
      "127.0.0.1",
      apparent,
      encodeBindingRequest({
        transactionId: randomBytes(12),
        username: `${serverUfrag}:${clientUfrag}`,
        password: serverPwd,
        hmacSha1,
        useCandidate: true,
      }),
    );
    await until(async () => (await status(callId)).clientAddress === `127.0.0.1:${apparent}`, "moved");
    // One check of ours, one answer: the move took one round trip.
    expect(h.t.metrics.pathEventCount("checked")).toBe(checked + 1);
    expect(h.t.metrics.pathEventCount("validated")).toBe(validated + 1);
    expect((await status(callId)).addressChanges).toBe(1);
    const sent = await talk(client, 12, 20, 500);
    await until(() => echoed(client, 12).length >= 20, "echo after the move");
    expect(echoed(client, 12)).toEqual(sent);
  });

  it("hang-up ends the session and sends flowClose for the client's address", async () => {
    const { callId } = await h.connectClient();
    const addr = (await status(callId)).clientAddress;
    const r = await h.call("DELETE", `/v1/calls/${callId}`);
    expect(r.status).toBe(204);
    await until(() => h.relay.flowCloses.some((f) => f.address === addr), "flowClose");
    expect(h.relay.flowCloses.find((f) => f.address === addr)!.reason).toBe(FlowCloseReason.hangup);
    const st = await status(callId);
    expect(st.state).toBe("ended");
    expect(st.endReason).toBe("hangup");
    expect((await h.call("DELETE", `/v1/calls/${callId}`)).status).toBe(404);
  });

  it("drops and counts garbage on the UDP socket, answers pings, and keeps sessions working", async () => {
    const { client } = await h.connectClient();
    const m = h.t.metrics.drops;
    const b = {
      frame: m.bad_frame.value,
      addr: m.unknown_address.value,
      ufrag: m.unknown_ufrag.value,
      stun: m.bad_stun.value,
    };
    for (let i = 0; i < 50; i++) h.relay.sendRaw(randomBytes(1 + (i % 60)));
    h.relay.sendRaw(Buffer.alloc(28)); // zero header: bad magic
    h.relay.sendFrame(
      FrameType.data,
      "127.0.0.9",
      9999,
      Buffer.from([0x80, 0x60, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
    );
    h.relay.sendFrame(
      FrameType.data,
      "127.0.0.9",
      9999,
      encodeBindingRequest({ transactionId: randomBytes(12), username: "AAAAAAAAAAAAAAAAAAAAAAAA:abcd" }),
    );
    h.relay.sendFrame(
      FrameType.data,
      "127.0.0.9",
      9999,
      Buffer.from([0, 1, 0, 0, 0x21, 0x12, 0xa4, 0x42, 1]),
    );
    h.relay.sendFrame(FrameType.ping, "0.0.0.0", 0, Buffer.from("probe-1"));
    await until(() => h.relay.pongs.some((p) => p.toString() === "probe-1"), "pong");
    await until(() => m.bad_frame.value >= b.frame + 51, "bad frames counted");
    expect(m.unknown_address.value).toBeGreaterThan(b.addr);
    expect(m.unknown_ufrag.value).toBe(b.ufrag + 1);
    expect(m.bad_stun.value).toBe(b.stun + 1);
    const sent = await talk(client, 9, 10, 0);
    await until(() => echoed(client, 9).length >= 10, "echo after garbage");
    expect(echoed(client, 9)).toEqual(sent);
    const metrics = await (await fetch(`${h.t.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/gr_transceiver_drops_total\{cluster="1",reason="bad_frame"\} \d+/);
  });
});

describe("in-process echo backend (BACKEND_URL=internal:echo)", () => {
  it("is injected, never picked by URL: an embedded transceiver without one refuses to start", async () => {
    const config = configWithDefaults({
      clusterId: 1,
      transceiverId: 9,
      hintKeys: randomKeyring(1),
      callIdKeys: randomKeyring(2),
      clusterSecret: new Uint8Array(randomBytes(32)),
      backendUrl: "internal:echo",
    });
    await expect(startTransceiver(config, { log: quietLog })).rejects.toThrow(/must inject it/);
  });

  it("echoes audio after the delay and answers events without a WebSocket", async () => {
    const h2 = await startHarness({ backendUrl: "internal:echo?delay_ms=30" });
    try {
      const { client, callId } = await h2.connectClient();
      const sent = await talk(client, 10, 20, 0);
      client.dc!.send(JSON.stringify({ type: "ping" }));
      const pong = () => client.messages.some((m) => JSON.parse(m).type === "pong");
      await until(() => echoed(client, 10).length >= 20 && pong(), "in-process echo");
      expect(echoed(client, 10)).toEqual(sent);
      expect(JSON.parse(client.messages[0]!).type).toBe("session.created");
      const st = (await (await h2.call("GET", `/v1/calls/${callId}`)).json()) as CallStatus;
      expect(st.backend.state).toBe("open");
      expect(st.backend.framesFromBackend).toBeGreaterThanOrEqual(20);
      expect(h2.agent.connections).toBe(0);
    } finally {
      await h2.close();
    }
  });
});

describe("clean-up and media metrics", () => {
  it("samples RTT, jitter and loss, and ending every session releases its routes and timers", async () => {
    const h3 = await startHarness({ statsIntervalMs: 1000 });
    try {
      const before = process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
      const calls = await Promise.all([h3.connectClient(), h3.connectClient(), h3.connectClient()]);
      for (const { client } of calls) void talk(client, 11, 150, 0);
      await until(async () => {
        const m = await (await fetch(`${h3.t.httpUrl}/metrics`)).text();
        const count = (name: string) =>
          Number(new RegExp(`^${name}_count\\{cluster="1",region="EU"\\} (\\d+)`, "m").exec(m)?.[1] ?? 0);
        return (
          count("gr_transceiver_ice_rtt_seconds") > 0 &&
          count("gr_transceiver_rtcp_rtt_seconds") > 0 &&
          count("gr_transceiver_jitter_seconds") > 0 &&
          count("gr_transceiver_packet_loss_ratio") > 0
        );
      }, "RTT, jitter and loss samples");
      expect(h3.t.mux.ufragCount).toBe(3);
      expect(h3.t.mux.pathCount).toBeGreaterThanOrEqual(3);
      for (const { callId } of calls)
        expect((await h3.call("DELETE", `/v1/calls/${callId}`)).status).toBe(204);
      for (const { client } of calls) await client.close();
      await until(() => h3.t.mux.pathCount === 0, "paths released");
      expect(h3.t.mux.ufragCount).toBe(0);
      expect(h3.t.calls.size).toBe(0);
      // werift's own timers of closed peer connections are gone too (a few seconds for its last ones).
      await until(
        () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length <= before + 2,
        "timers released",
      );
    } finally {
      await h3.close();
    }
  });
});

describe("a connected socket per relay source (TRANSCEIVER_CONNECT_RELAYS, dgram I/O)", () => {
  it("sends through a socket connected to the relay, on the same port, and media flows", async () => {
    const h5 = await startHarness({ connectRelays: true, io: "dgram" });
    try {
      const { client } = await h5.connectClient();
      const sent = await talk(client, 13, 20, 0);
      await until(() => echoed(client, 13).length >= 20, "echo through connected sockets");
      expect(echoed(client, 13)).toEqual(sent);
      const { readFileSync } = await import("node:fs");
      const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, "0");
      const rows = readFileSync("/proc/net/udp", "utf8")
        .split("\n")
        .map((l) => l.trim().split(/\s+/))
        .filter((f) => f[1] === `0100007F:${hex(h5.t.udpAddress.port)}`);
      // The listening socket, plus one connected to the relay's backbone port (state 01 = established).
      expect(rows.some((f) => f[2] === `0100007F:${hex(h5.relay.backbone.port)}` && f[3] === "01")).toBe(
        true,
      );
    } finally {
      await h5.close();
    }
  });
});

describe("several sockets on the one port (TRANSCEIVER_SOCKETS)", () => {
  it("binds the port with SO_REUSEPORT and serves sessions through it", async () => {
    const h4 = await startHarness({ socketCount: 3 });
    try {
      const { client } = await h4.connectClient();
      const sent = await talk(client, 12, 20, 0);
      await until(() => echoed(client, 12).length >= 20, "echo with three sockets");
      expect(echoed(client, 12)).toEqual(sent);
      const { readFileSync } = await import("node:fs");
      const hex = h4.t.udpAddress.port.toString(16).toUpperCase().padStart(4, "0");
      const bound = readFileSync("/proc/net/udp", "utf8")
        .split("\n")
        .filter((l) => l.trim().split(/\s+/)[1] === `0100007F:${hex}`);
      expect(bound).toHaveLength(3);
    } finally {
      await h4.close();
    }
  });
});
