// Repair on the client hop through the real transceiver: werift clients that offer RED (RFC 2198)
// or NACK, the loopback relay dropping every 20th RTP datagram from the client (5 %, the same
// datagrams every run). With RED the backend gets every frame back (the next packet's redundant
// block), without it about 95 %; what the client receives is RED of the previous frame; NACK
// asks the client again; Chromium's offer gets red in the answer.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenericNack, Red, RtcpTransportLayerFeedback, type RtpPacket } from "werift";
import { newRedBlocks, parseRed } from "../../regional/transceiver/core/red.ts";
import { clientApplyRestartAnswer, clientRestartFrag, type TestClient } from "./helpers/client.ts";
import { type CallStatus, callStatus, type Harness, sleep, startHarness, until } from "./helpers/harness.ts";

const FRAMES = 200;
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const status = (callId: string): Promise<CallStatus> => callStatus(h, callId);

/** RTP (not RTCP: second byte 192-223) from a client. */
const isRtp = (d: Buffer) => d.length >= 12 && (d[0]! & 0xc0) === 0x80 && !(d[1]! >= 192 && d[1]! <= 223);

/** Drops every 20th RTP datagram from the client at `port` (counting from its first). */
function dropEvery20th(): { dropped: number } {
  const s = { dropped: 0 };
  let n = 0;
  h.relay.onFromClient = (d) => {
    if (!isRtp(d)) return false;
    n++;
    if (n % 20 !== 0) return false;
    s.dropped++;
    return true;
  };
  return s;
}

/** Sends FRAMES Opus-sized payloads tagged `tag`, 5 ms apart; returns them (hex). */
async function talk(c: TestClient, tag: number, seq0: number, frames = FRAMES): Promise<string[]> {
  const sent: string[] = [];
  for (let i = 0; i < frames; i++) {
    const p = Buffer.concat([Buffer.from([tag, i]), randomBytes(58)]);
    sent.push(p.toString("hex"));
    c.sendAudio(p, (seq0 + i) & 0xffff, ((seq0 + i) * 960) >>> 0);
    await sleep(5);
  }
  return sent;
}

/** Raw RTP the client's transport receives (before werift splits RED). */
function rawIn(c: TestClient): RtpPacket[] {
  const raw: RtpPacket[] = [];
  c.transceiver.dtlsTransport!.onRtp.subscribe((rtp) => raw.push(rtp));
  return raw;
}

const echoedTags = (c: TestClient, tag: number) =>
  new Set(c.received.filter((p) => p.payload[0] === tag).map((p) => p.payload.toString("hex")));

describe("repair on the client hop", () => {
  it("RED: with 5 % loss from the client the backend gets >= 99 % of the frames, recovered ones with their seq", async () => {
    const { client, callId, answer } = await h.connectClient({ red: true, redDistance: 1, fec: true });
    expect(answer).toMatch(/^m=audio \d+ \S+ 63 97 /m);
    expect(answer).toContain("a=fmtp:63 97/97");
    const raw = rawIn(client);
    const loss = dropEvery20th();
    const sent = await talk(client, 7, 5000);
    await until(
      async () => (await status(callId)).backend.framesToBackend >= FRAMES - 1,
      "frames at the backend",
    );
    await sleep(300);
    h.relay.onFromClient = undefined;
    const st = await status(callId);
    console.log(
      "FIG",
      JSON.stringify({
        dropped: loss.dropped,
        toBackend: st.backend.framesToBackend,
        repair: st.clientRepair,
      }),
    );
    expect(loss.dropped).toBeGreaterThanOrEqual(FRAMES / 20 - 1);
    expect(st.backend.framesToBackend).toBeGreaterThanOrEqual(Math.ceil(FRAMES * 0.99));
    expect(st.clientRepair).toMatchObject({ red: true, nack: false });
    expect(st.clientRepair!.recovered).toBeGreaterThanOrEqual(loss.dropped - 1);
    expect(st.codec).toBe("opus");
    // The echo came back as RED of the previous frame: our parser and werift's agree.
    await until(() => echoedTags(client, 7).size >= Math.ceil(FRAMES * 0.99), "echo at the client");
    const echoed = echoedTags(client, 7);
    expect(sent.filter((p) => echoed.has(p)).length).toBeGreaterThanOrEqual(Math.ceil(FRAMES * 0.99));
    const red = raw.filter((p) => p.header.payloadType === 63 && p.payload.length > 0);
    expect(red.length).toBeGreaterThanOrEqual(FRAMES * 0.95);
    const b = newRedBlocks();
    let withRedundancy = 0;
    for (let i = 1; i < red.length; i++) {
      expect(parseRed(red[i]!.payload, b)).toBe("ok");
      const w = Red.deSerialize(red[i]!.payload);
      expect(w.blocks.length).toBe(b.count);
      const primary = red[i]!.payload.subarray(b.start[b.count - 1]!);
      expect(primary.toString("hex")).toBe(w.blocks[w.blocks.length - 1]!.block.toString("hex"));
      if (b.count !== 2) continue;
      withRedundancy++;
      expect(b.pt[0]).toBe(97);
      // Its redundant block is the previous packet's primary, 960 ticks (20 ms) back.
      const prev = red[i - 1]!;
      if (((red[i]!.header.sequenceNumber - prev.header.sequenceNumber) & 0xffff) !== 1) continue;
      const pb = newRedBlocks();
      parseRed(prev.payload, pb);
      const prevPrimary = prev.payload.subarray(pb.start[pb.count - 1]!).toString("hex");
      expect(red[i]!.payload.subarray(b.start[0]!, b.start[0]! + b.length[0]!).toString("hex")).toBe(
        prevPrimary,
      );
      expect(b.tsOffset[0]).toBe((red[i]!.header.timestamp - prev.header.timestamp) >>> 0);
    }
    expect(withRedundancy).toBeGreaterThanOrEqual(red.length * 0.9);
  });

  it("RED stays one wrapping deep across an ICE restart (werift's own encoder stays off)", async () => {
    const { client, callId, answer } = await h.connectClient({ red: true });
    const raw = rawIn(client);
    const frag = await clientRestartFrag(client);
    const r = await h.call("PATCH", `/v1/calls/${callId}`, frag, {
      "content-type": "application/trickle-ice-sdpfrag",
      "if-match": "*",
    });
    expect(r.status).toBe(200);
    await clientApplyRestartAnswer(client, answer, await r.text());
    const from = raw.length;
    const sent = new Set(await talk(client, 11, 30000, 40));
    await until(() => raw.length - from >= 30, "echo after the restart");
    const b = newRedBlocks();
    let primaries = 0;
    for (const p of raw.slice(from)) {
      expect(p.header.payloadType).toBe(63);
      expect(parseRed(p.payload, b)).toBe("ok");
      expect(b.count).toBeLessThanOrEqual(2);
      const primary = p.payload.subarray(b.start[b.count - 1]!).toString("hex");
      if (sent.has(primary)) primaries++;
    }
    expect(primaries).toBeGreaterThanOrEqual(30);
  });

  it("without RED the same loss stays lost: about 95 % at the backend", async () => {
    const { client, callId, answer } = await h.connectClient({ fec: true });
    expect(answer).not.toContain("red/48000");
    const loss = dropEvery20th();
    await talk(client, 8, 9000);
    await until(
      async () => (await status(callId)).backend.framesToBackend >= FRAMES - loss.dropped,
      "frames at the backend",
    );
    await sleep(300);
    h.relay.onFromClient = undefined;
    const st = await status(callId);
    console.log(
      "FIG",
      JSON.stringify({
        dropped: loss.dropped,
        toBackend: st.backend.framesToBackend,
        repair: st.clientRepair,
      }),
    );
    expect(st.backend.framesToBackend).toBe(FRAMES - loss.dropped);
    expect(st.backend.framesToBackend).toBeLessThanOrEqual(Math.floor(FRAMES * 0.96));
    expect(st.clientRepair).toMatchObject({ red: false, nack: false, recovered: 0 });
  });

  it("NACK: gaps in what the client sends are asked again and answered; the client's NACKs are answered", async () => {
    const { client, callId, answer } = await h.connectClient({ nack: true });
    expect(answer).toMatch(/^a=rtcp-fb:\d+ nack$/m);
    const raw = rawIn(client);
    const loss = dropEvery20th();
    await talk(client, 9, 20000);
    await until(
      async () => (await status(callId)).backend.framesToBackend >= FRAMES,
      "frames at the backend",
    );
    h.relay.onFromClient = undefined;
    const st = await status(callId);
    console.log(
      "FIG",
      JSON.stringify({
        dropped: loss.dropped,
        toBackend: st.backend.framesToBackend,
        repair: st.clientRepair,
      }),
    );
    expect(st.backend.framesToBackend).toBe(FRAMES);
    expect(st.clientRepair).toMatchObject({ red: false, nack: true });
    expect(st.clientRepair!.nacked).toBeGreaterThanOrEqual(loss.dropped);
    expect(st.clientRepair!.repaired).toBe(loss.dropped);
    // The client asks for a packet it had: werift's sender history sends it again.
    await until(() => raw.length >= 50, "echo at the client");
    const want = raw[raw.length - 5]!;
    const before = raw.filter((p) => p.header.sequenceNumber === want.header.sequenceNumber).length;
    const nack = new GenericNack({
      senderSsrc: client.transceiver.receiver.rtcpSsrc,
      mediaSourceSsrc: want.header.ssrc,
      lost: [want.header.sequenceNumber],
    });
    await client.transceiver.dtlsTransport!.sendRtcp([new RtcpTransportLayerFeedback({ feedback: nack })]);
    await until(
      () => raw.filter((p) => p.header.sequenceNumber === want.header.sequenceNumber).length > before,
      "retransmission",
    );
    const again = raw.filter((p) => p.header.sequenceNumber === want.header.sequenceNumber).at(-1)!;
    expect(again.payload.toString("hex")).toBe(want.payload.toString("hex"));
  });

  it("answers Chromium's offer with red before opus", async () => {
    const sdp = readFileSync(new URL("./fixtures/chrome-like-offer.sdp", import.meta.url), "utf8");
    const res = await h.call("POST", "/v1/calls", {
      sdp,
      client: { region: "test", continent: "EU" },
      ingress: { vip: `${h.relay.vip.host}:${h.relay.vip.port}`, popId: 1 },
    });
    expect(res.status).toBe(201);
    const j = (await res.json()) as { callId: string; sdp: string };
    expect(j.sdp).toMatch(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 63 111 0\r$/m);
    expect(j.sdp).toContain("a=rtpmap:63 red/48000/2\r\n");
    expect(j.sdp).toContain("a=fmtp:63 111/111\r\n");
    expect(j.sdp).toContain("a=fmtp:111 minptime=10;useinbandfec=1\r\n");
    expect((await status(j.callId)).clientRepair).toMatchObject({ red: true, nack: false });
    expect((await h.call("DELETE", `/v1/calls/${j.callId}`)).status).toBe(204);
  });
});
