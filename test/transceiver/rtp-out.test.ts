// RtpOut (shell/rtp-out.ts) sends a call's audio as werift's sender.sendRtp would: a real
// werift client receives the same SSRC, payload type, sequence and timestamp numbering whichever
// path sent a packet, the sender's report counters move the same way (the client's view of our
// sender reports agrees), and a sender in a state the direct path does not cover goes through
// werift's own path.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RTCRtpSender, RtpHeader, RtpPacket } from "werift";
import { RtpOut } from "../../regional/transceiver/shell/rtp-out.ts";
import { type Harness, startHarness, until } from "./helpers/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

interface Counters {
  packetCount: number;
  octetCount: number;
  headerBytesSent: number;
  sequenceNumber?: number;
  timestamp?: number;
  rtpContinuityPending: boolean;
}
const counters = (s: RTCRtpSender) => s as unknown as Counters;
const perPacketHeader = (c: Counters) => c.headerBytesSent / c.packetCount;
interface Transport {
  packetsSent: number;
  bytesSent: number;
}

async function connectedSender() {
  const { client, callId } = await h.connectClient({ dataChannel: false });
  const call = h.t.calls.get(callId)!;
  const sender = call.pc.getTransceivers()[0]!.sender;
  // Both paths drop packets until the server's DTLS is up (werift's canSendRtp).
  await until(() => sender.dtlsTransport?.state === "connected", "server DTLS connected");
  return { client, sender };
}

describe("RtpOut: audio RTP without werift's per-packet path", () => {
  it("numbers, labels and counts packets exactly as werift's sendRtp does", async () => {
    const { client, sender } = await connectedSender();
    const out = new RtpOut(sender);
    expect(out.direct).toBe(true);
    const pt = sender.codec!.payloadType!;
    const payloads = Array.from({ length: 20 }, () => randomBytes(90));
    const c = counters(sender);
    // 10 through werift's own path, then 10 directly, continuing the same input numbering.
    for (let i = 0; i < 10; i++) {
      const header = new RtpHeader({ payloadType: pt, sequenceNumber: 500 + i, timestamp: 4000 + i * 960 });
      await sender.sendRtp(new RtpPacket(header, payloads[i]!));
    }
    const afterWerift = { ...c };
    const dtls = sender.dtlsTransport as unknown as Transport;
    const pair = (sender.dtlsTransport.iceTransport.connection as unknown as { nominated: Transport })
      .nominated;
    const before = { dtls: { ...dtls }, pair: { ...pair } };
    for (let i = 10; i < 20; i++) out.send(pt, 500 + i, 4000 + i * 960, i === 15, payloads[i]!);
    // The shared socket's pair: sent by the direct chain, with werift's transport counters moved.
    expect(out.directSends).toBe(10);
    expect(out.encryptFailures).toBe(0);
    expect(dtls.packetsSent - before.dtls.packetsSent).toBe(10);
    expect(pair.packetsSent - before.pair.packetsSent).toBe(10);
    expect(pair.bytesSent - before.pair.bytesSent).toBe(dtls.bytesSent - before.dtls.bytesSent);
    // SRTP adds a 10-byte tag to each 12-byte header + 90-byte payload.
    expect(pair.bytesSent - before.pair.bytesSent).toBe(10 * (perPacketHeader(c) + 90 + 10));
    await until(
      () => client.received.length >= 20,
      () => `20 packets (${client.received.length})`,
    );
    const got: RtpPacket[] = client.received.slice(0, 20);
    expect(got.map((p) => p.payload.toString("hex"))).toEqual(payloads.map((p) => p.toString("hex")));
    const first = got[0]!.header;
    for (let i = 0; i < 20; i++) {
      const hd = got[i]!.header;
      expect(hd.ssrc).toBe(first.ssrc);
      expect(hd.payloadType).toBe(first.payloadType);
      expect(hd.sequenceNumber).toBe((first.sequenceNumber + i) & 0xffff);
      expect(hd.timestamp).toBe((first.timestamp + i * 960) >>> 0);
      expect(hd.marker).toBe(i === 15);
      expect(hd.extensions).toEqual([]);
    }
    // The direct path moved the counters by what werift's own path moves them per packet.
    const perPacket = perPacketHeader(afterWerift);
    expect(c.packetCount - afterWerift.packetCount).toBe(10);
    expect(c.octetCount - afterWerift.octetCount).toBe(10 * 90);
    expect(c.headerBytesSent - afterWerift.headerBytesSent).toBe(10 * perPacket);
    expect(c.sequenceNumber).toBe(got[19]!.header.sequenceNumber);
    expect(c.timestamp).toBe(got[19]!.header.timestamp);

    // The client's receiver sees our sender reports with those counts (werift's RTCP loop runs).
    const recv = client.transceiver.receiver as unknown as {
      remotePacketCountBySsrc: Record<number, number>;
    };
    await until(
      () => recv.remotePacketCountBySsrc[first.ssrc] === c.packetCount,
      "a sender report with the count",
    );
    expect(recv.remotePacketCountBySsrc[first.ssrc]).toBe(20);
  });

  it("goes through werift's path when the sender has a continuity rewrite pending", async () => {
    const { client, sender } = await connectedSender();
    const out = new RtpOut(sender);
    const pt = sender.codec!.payloadType!;
    out.send(pt, 100, 96_000, false, randomBytes(40));
    await until(() => client.received.length >= 1, "first packet");
    // A source switch (what replaceTrack does): werift re-bases the numbering on the next packet.
    sender.replaceRTP(client.received[0]!.header);
    expect(counters(sender).rtpContinuityPending).toBe(true);
    out.send(pt, 9000, 5_000_000, false, randomBytes(40));
    await until(() => client.received.length >= 2, "second packet");
    expect(counters(sender).rtpContinuityPending).toBe(false);
    // werift made the numbering continue across the switch; the direct path keeps its offsets.
    out.send(pt, 9001, 5_000_960, false, randomBytes(40));
    await until(() => client.received.length >= 3, "third packet");
    const [a, b, d] = client.received.map((p) => p.header);
    expect(b!.sequenceNumber).toBe((a!.sequenceNumber + 1) & 0xffff);
    expect(d!.sequenceNumber).toBe((b!.sequenceNumber + 1) & 0xffff);
    expect(d!.timestamp).toBe((b!.timestamp + 960) >>> 0);
  });

  it("sends a werift client's audio the same way (what bench/transceiver/clients.ts does): echoed in order", async () => {
    const { client } = await h.connectClient({ dataChannel: false });
    const sender = client.transceiver.sender;
    await until(() => sender.dtlsTransport?.state === "connected", "client DTLS connected");
    const out = new RtpOut(sender);
    expect(out.direct).toBe(true);
    const payloads = Array.from({ length: 10 }, (_, i) =>
      Buffer.concat([Buffer.from([0xee, i]), randomBytes(60)]),
    );
    for (const [i, p] of payloads.entries()) out.send(111, 7000 + i, (7000 + i) * 960, false, p);
    // The client's pair is on werift's own socket: werift's send chain, not the direct one.
    expect(out.directSends).toBe(0);
    const echoed = () => client.received.filter((p) => p.payload[0] === 0xee);
    await until(
      () => echoed().length >= 10,
      () => `10 echoes (${echoed().length})`,
    );
    expect(echoed().map((p) => p.payload.toString("hex"))).toEqual(payloads.map((p) => p.toString("hex")));
  });
});
