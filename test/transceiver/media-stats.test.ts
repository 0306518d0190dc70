// Jitter, loss and RTCP RTT read from werift's receiver and sender state (shell/werift-media.ts,
// shell/stats.ts) instead of getStats(): a real werift client sends audio with known gaps (lost
// packets) in a burst (arrival spacing near zero against 20 ms of timestamp per packet: known
// jitter) through the loopback relay; the figures must be the RFC 3550 ones and equal to what
// werift's own getStats() reports for the same call.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RTCPeerConnection, RTCRtpReceiver, RtpHeader, RtpPacket, useOPUS } from "werift";
import { leanRoute } from "../../regional/transceiver/shell/lean-route.ts";
import { CallStats } from "../../regional/transceiver/shell/stats.ts";
import {
  type InboundState,
  leanReceive,
  MEDIA_MEMBERS,
  mediaStatsOf,
} from "../../regional/transceiver/shell/werift-media.ts";
import type { TestClient } from "./helpers/client.ts";
import { type Harness, startHarness, until } from "./helpers/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const TS_STEP = 960; // 20 ms at 48 kHz

/** Sends seq from..to-1 back to back, skipping those `lost` says; returns how many were sent. */
function burst(c: TestClient, from: number, to: number, lost: (seq: number) => boolean): number {
  let sent = 0;
  for (let seq = from; seq < to; seq++) {
    if (lost(seq)) continue;
    c.sendAudio(randomBytes(80), seq, seq * TS_STEP);
    sent++;
  }
  return sent;
}

/** RFC 3550 A.8 as werift computes it (Q4 integer), for arrivals all at the same instant. */
function jitterAtZeroSpacing(seqs: number[]): number {
  let q4 = 0;
  for (let i = 1; i < seqs.length; i++) {
    const d = Math.abs(0 - (seqs[i]! - seqs[i - 1]!) * TS_STEP);
    q4 += d - ((q4 + 8) >> 4);
  }
  return (q4 >> 4) / 48_000;
}

async function weriftStats(pc: { getStats(): Promise<unknown> }) {
  const report = (await pc.getStats()) as Map<string, Record<string, unknown>>;
  const inbound = [...report.values()].filter((s) => s.type === "inbound-rtp");
  const remote = [...report.values()].filter((s) => s.type === "remote-inbound-rtp");
  return { inbound, remote };
}

describe("call quality from werift's receiver state", () => {
  it("reports the injected loss exactly and the burst's jitter, as getStats() does", async () => {
    const { client, callId } = await h.connectClient();
    const call = h.t.calls.get(callId)!;
    const audio = call.pc.getTransceivers()[0]!;
    const media = mediaStatsOf(audio);
    expect(Object.hasOwn(audio.receiver, "handleRTP")).toBe(true); // leanReceive is on
    const s: InboundState = { packetsReceived: 0, packetsLost: 0, jitter: 0 };
    expect(media.inbound(s)).toBe(false);

    // 200 sequence numbers, every tenth one never sent: 180 received, 20 lost.
    const lost = (seq: number) => seq % 10 === 5;
    const sent = burst(client, 0, 200, lost);
    expect(sent).toBe(180);
    await until(
      () => media.inbound(s) && s.packetsReceived === 180,
      () => `180 received (${s.packetsReceived})`,
    );
    expect(s.packetsLost).toBe(20);

    // Arrivals a burst apart (close to 0 ms) against 20 ms (40 ms over a gap) of timestamp.
    const seqs = Array.from({ length: 200 }, (_, i) => i).filter((q) => !lost(q));
    const expected = jitterAtZeroSpacing(seqs);
    expect(expected).toBeGreaterThan(0.019);
    expect(s.jitter).toBeGreaterThan(expected * 0.5);
    expect(s.jitter).toBeLessThan(expected * 1.5);

    // The members read are werift's own figures: equal to its getStats() for this call.
    const stream = (audio.receiver as unknown as { remoteStreams: Record<number, object> }).remoteStreams;
    for (const m of MEDIA_MEMBERS["StreamStatistics instance"]) {
      expect(typeof (Object.values(stream)[0] as Record<string, unknown>)[m]).toBe("number");
    }
    const w = await weriftStats(call.pc);
    expect(w.inbound).toHaveLength(1);
    expect(media.inbound(s)).toBe(true);
    expect(w.inbound[0]!.packetsReceived).toBe(s.packetsReceived);
    expect(w.inbound[0]!.packetsLost).toBe(s.packetsLost);
    expect(w.inbound[0]!.jitter).toBe(s.jitter);

    // Into the region's histograms: one loss sample of 20 / 200, then none without traffic, then
    // 0 for a burst without gaps.
    const rh = h.t.metrics.region("stats-test");
    const stats = new CallStats();
    const att = { selectedRtt: () => undefined };
    stats.sample(media, att, rh);
    expect(rh.loss.count).toBe(1);
    expect(rh.loss.sum).toBeCloseTo(0.1, 12);
    expect(rh.jitter.count).toBe(1);
    expect(rh.jitter.sum).toBe(s.jitter);
    stats.sample(media, att, rh);
    expect(rh.loss.count).toBe(1);
    burst(client, 200, 250, () => false);
    await until(() => media.inbound(s) && s.packetsReceived === 230, "230 received");
    stats.sample(media, att, rh);
    expect(rh.loss.count).toBe(2);
    expect(rh.loss.sum).toBeCloseTo(0.1, 12);
  });

  it("reports the RTCP round-trip time werift measured from the client's receiver reports", async () => {
    const { client, callId } = await h.connectClient();
    const call = h.t.calls.get(callId)!;
    const media = mediaStatsOf(call.pc.getTransceivers()[0]!);
    // The echo makes the server send RTP, hence sender reports the client answers.
    let seq = 0;
    const rtt = await until(() => {
      burst(client, seq, seq + 5, () => false);
      seq += 5;
      return media.rtcpRtt();
    }, "an RTCP RTT");
    expect(rtt).toBeGreaterThan(0);
    expect(rtt).toBeLessThan(2);
    const w = await weriftStats(call.pc);
    expect(w.remote).toHaveLength(1);
    expect(w.remote[0]!.roundTripTime).toBe(media.rtcpRtt());
  });
});

describe("leanReceive: werift's receiver without the per-packet work audio does not need", () => {
  const codec = (payloadType: number, feedback: string[] = []) =>
    useOPUS({ payloadType, rtcpFeedback: feedback.map((type) => ({ type })) });
  const packet = (seq: number) =>
    new RtpPacket(
      new RtpHeader({ payloadType: 111, sequenceNumber: seq, timestamp: seq * 960, ssrc: 7 }),
      randomBytes(20),
    );

  it("hands plain audio packets on as parsed, keeps werift's statistics, and defers to werift otherwise", () => {
    const receiver = new RTCRtpReceiver({ debug: {} } as never, "audio", 1);
    const got: RtpPacket[] = [];
    const track = { kind: "audio", onReceiveRtp: { execute: (p: RtpPacket) => got.push(p) } };
    const handle = (p: RtpPacket) =>
      (receiver as unknown as { handleRTP(p: RtpPacket, e: object, t: object): void }).handleRTP(
        p,
        {},
        track,
      );
    try {
      receiver.prepareReceive({ codecs: [codec(111)], encodings: [] } as never);
      expect(leanReceive(receiver)).toBe(true);
      const a = packet(1);
      const b = packet(2);
      handle(a); // the stream's first packet: werift's path (it makes the statistics), a clone
      handle(b); // then the lean path: the packet itself
      expect(got[0]).not.toBe(a);
      expect(got[0]!.payload.equals(a.payload)).toBe(true);
      expect(got[1]).toBe(b);
      handle(packet(5)); // 3 and 4 lost
      const media = mediaStatsOf({ receiver, sender: { rtt: undefined } } as never);
      (receiver.tracks as { ssrc?: number }[]).push({ ssrc: 7 });
      const s: InboundState = { packetsReceived: 0, packetsLost: 0, jitter: 0 };
      expect(media.inbound(s)).toBe(true);
      expect(s).toMatchObject({ packetsReceived: 3, packetsLost: 2 });
      // An unknown payload type is dropped, as werift drops it.
      handle(new RtpPacket(new RtpHeader({ payloadType: 0, sequenceNumber: 6, ssrc: 7 }), randomBytes(4)));
      expect(got).toHaveLength(3);
      // Renegotiated with transport-cc on the lowest payload type: werift's path again (a clone).
      receiver.prepareReceive({ codecs: [codec(100, ["transport-cc"]), codec(111)], encodings: [] } as never);
      const c = packet(7);
      try {
        handle(c);
      } catch {
        // werift's TWCC set-up needs a DTLS transport this bare receiver lacks: it was reached.
      }
      expect(got.at(-1)).not.toBe(c);
    } finally {
      receiver.stop();
    }
  });
});

describe("leanRoute: werift's RTP routing without a new extension map per packet", () => {
  interface Router {
    routeRtp(p: RtpPacket): void;
    ssrcTable: Record<number, object>;
    extIdUriMap: Record<number, string>;
  }
  const routerOf = (pc: RTCPeerConnection) => (pc as unknown as { router: Router }).router;

  it("hands a packet without extensions to its SSRC's receiver with one shared map; werift routes the rest", async () => {
    const pc = new RTCPeerConnection();
    try {
      const r = routerOf(pc);
      const seen: [RtpPacket, object][] = [];
      const receiver = {
        handleRtpBySsrc: (p: RtpPacket, e: object) => seen.push([p, e]),
        sdesMid: undefined,
      };
      r.ssrcTable[7] = receiver;
      r.extIdUriMap[4] = "urn:ietf:params:rtp-hdrext:sdes:mid";
      expect(leanRoute(pc)).toBe(true);
      expect(leanRoute(pc)).toBe(true); // once: the second call wraps nothing
      const plain = (seq: number, ssrc = 7) =>
        new RtpPacket(new RtpHeader({ payloadType: 111, sequenceNumber: seq, ssrc }), randomBytes(8));
      const a = plain(1);
      const b = plain(2);
      r.routeRtp(a);
      r.routeRtp(b);
      expect(seen.map(([p]) => p)).toEqual([a, b]);
      expect(seen[0]![1]).toEqual({});
      expect(seen[1]![1]).toBe(seen[0]![1]);
      expect(Object.isFrozen(seen[0]![1])).toBe(true);
      // With a mid extension: werift's routing, which parses it and labels the receiver.
      const withMid = plain(3);
      withMid.header.extension = true;
      withMid.header.extensions = [{ id: 4, payload: Buffer.from("0") }];
      r.routeRtp(withMid);
      expect(seen[2]![0]).toBe(withMid);
      expect(seen[2]![1]).toEqual({ "urn:ietf:params:rtp-hdrext:sdes:mid": "0" });
      expect(receiver.sdesMid).toBe("0");
      // An SSRC the router does not know: werift's (it finds no receiver and drops it).
      r.routeRtp(plain(4, 8));
      expect(seen).toHaveLength(3);
    } finally {
      await pc.close();
    }
  });

  it("is on for a call: the client's audio reaches the receiver with the shared map", async () => {
    const { client, callId } = await h.connectClient();
    const call = h.t.calls.get(callId)!;
    const receiver = call.pc.getTransceivers()[0]!.receiver as unknown as {
      handleRtpBySsrc(p: RtpPacket, e: object): void;
    };
    const maps: object[] = [];
    const handle = receiver.handleRtpBySsrc;
    receiver.handleRtpBySsrc = (p, e) => {
      maps.push(e);
      handle(p, e);
    };
    burst(client, 0, 20, () => false);
    await until(
      () => maps.length >= 20,
      () => `20 packets routed (${maps.length})`,
    );
    expect(maps.every((e) => e === maps[0] && Object.isFrozen(e))).toBe(true);
  });
});
