// shell/client-hop.ts on hand-made packets: what reaches the backend (seq, timestamp, payload)
// when RED packets are lost, repeated, reordered or odd, and the NACKs it sends.

import { describe, expect, it } from "vitest";
import {
  type GenericNack,
  type RTCRtpTransceiver,
  type RtcpTransportLayerFeedback,
  RtpHeader,
  RtpPacket,
} from "werift";
import type { AudioFrameHeader } from "../../regional/transceiver/backend-protocol.ts";
import { writeRed } from "../../regional/transceiver/core/red.ts";
import { ClientHop, type HopDrop } from "../../regional/transceiver/shell/client-hop.ts";

const RED = 63;
const OPUS = 111;

function hop(redPt: number, nack = false) {
  const frames: string[] = [];
  const drops: HopDrop[] = [];
  const nacks: number[][] = [];
  const t = {
    receiver: { rtcpSsrc: 1 },
    dtlsTransport: {
      sendRtcp: async (p: RtcpTransportLayerFeedback[]) => {
        nacks.push([...(p[0]!.feedback as GenericNack).lost]);
        return 0;
      },
    },
  } as unknown as RTCRtpTransceiver;
  const f = { codec: 0, flags: 0, participant: 1, sequenceNumber: 0, timestamp: 0 } as AudioFrameHeader;
  const sink = {
    frame: (h: AudioFrameHeader, p: Uint8Array) =>
      frames.push(`${h.sequenceNumber}/${h.timestamp}/${Buffer.from(p).toString("hex")}`),
    drop: (r: HopDrop) => drops.push(r),
  };
  const h = new ClientHop(t, new Map([[OPUS, 1]]), f, sink, redPt, nack);
  return { h, frames, drops, nacks };
}

const rtp = (pt: number, seq: number, ts: number, payload: Uint8Array, ssrc = 7) =>
  new RtpPacket(
    new RtpHeader({ payloadType: pt, sequenceNumber: seq, timestamp: ts, ssrc }),
    Buffer.from(payload),
  );

/** The RED packet for frame i (payload [i]) with frame i-1 as redundancy. */
function red(i: number, ssrc = 7): RtpPacket {
  const out = new Uint8Array(16);
  const n = writeRed(out, OPUS, Uint8Array.of(i), i > 0 ? Uint8Array.of(i - 1) : null, 1, 960);
  return rtp(RED, i, i * 960, out.subarray(0, n), ssrc);
}

const hex = (i: number) => i.toString(16).padStart(2, "0");
const frame = (i: number) => `${i}/${i * 960}/${hex(i)}`;

describe("client hop", () => {
  it("a lost packet comes back from the next one's redundancy, with its own seq and timestamp, before it", () => {
    const { h, frames, drops } = hop(RED);
    for (const i of [0, 1, 3, 4]) h.receive(red(i), 0);
    expect(frames).toEqual([frame(0), frame(1), frame(2), frame(3), frame(4)]);
    expect(h.status()).toMatchObject({ red: true, redPackets: 4, recovered: 1, duplicates: 0 });
    // The original arriving late is a duplicate now; a repeated packet too.
    h.receive(red(2), 0);
    h.receive(red(4), 0);
    expect(frames).toHaveLength(5);
    expect(drops).toEqual(["duplicate_rtp", "duplicate_rtp"]);
  });

  it("distance 2: two lost packets come back from the third; a wrong offset order is not trusted", () => {
    const { h, frames } = hop(RED);
    const two = (i: number, o1: number, o2: number) => {
      // blocks: i-2 (offset o1), i-1 (offset o2), primary i
      const p = Buffer.from([
        0x80 | OPUS,
        o1 >> 6,
        (o1 & 0x3f) << 2,
        1,
        0x80 | OPUS,
        o2 >> 6,
        (o2 & 0x3f) << 2,
        1,
        OPUS,
        i - 2,
        i - 1,
        i,
      ]);
      return rtp(RED, i, i * 960, p);
    };
    h.receive(red(1), 0);
    h.receive(two(4, 1920, 960), 0);
    expect(frames).toEqual([frame(0), frame(1), frame(2), frame(3), frame(4)]);
    // offsets growing towards the primary: the blocks are not what their position says
    h.receive(two(7, 960, 1920), 0);
    expect(frames.slice(5)).toEqual([frame(7)]);
  });

  it("drops what does not parse or carries no Opus; a new SSRC starts a new seq space", () => {
    const { h, frames, drops } = hop(RED);
    h.receive(rtp(RED, 1, 960, Uint8Array.of(0xef, 0x0f)), 0); // truncated header
    h.receive(rtp(RED, 2, 1920, Uint8Array.of(0x09, 1, 2)), 0); // primary of pt 9
    h.receive(rtp(RED, 3, 2880, Uint8Array.of(0x6f)), 0); // empty primary
    h.receive(rtp(96, 4, 3840, Uint8Array.of(1)), 0); // not negotiated
    expect(drops).toEqual(["red_malformed", "red_malformed", "red_malformed", "not_rtp"]);
    h.receive(red(10, 7), 0);
    h.receive(red(10, 8), 0); // same seq, other SSRC: not a duplicate
    h.receive(rtp(OPUS, 11, 11 * 960, Uint8Array.of(11), 8), 0); // plain Opus next to RED
    expect(frames).toEqual([frame(9), frame(10), frame(9), frame(10), frame(11)]);
  });

  it("a packet of another payload type (another SSRC: video on the bundle) leaves the audio's seq space alone", () => {
    const { h, frames, drops, nacks } = hop(RED, true);
    h.receive(red(1), 0);
    h.receive(red(2), 0);
    h.receive(rtp(96, 500, 0, Uint8Array.of(1), 99), 0); // not negotiated for audio, SSRC 99
    h.receive(red(2), 0); // still a duplicate: the tracker was not started over
    h.receive(red(3), 0);
    expect(frames).toEqual([frame(0), frame(1), frame(2), frame(3)]);
    expect(drops).toEqual(["not_rtp", "duplicate_rtp"]);
    expect(nacks).toEqual([]);
  });

  it("NACK: a gap is asked at once and again after the retry time, a repaired packet is counted", () => {
    const { h, frames, nacks } = hop(-1, true);
    const opus = (i: number) => rtp(OPUS, i, i * 960, Uint8Array.of(i));
    h.receive(opus(1), 0);
    h.receive(opus(4), 10);
    expect(nacks).toEqual([[2, 3]]);
    h.receive(opus(5), 20); // before the retry time (max(2 x RTT 50 ms, 20 ms))
    expect(nacks).toHaveLength(1);
    h.receive(opus(2), 30);
    h.receive(opus(6), 120);
    expect(nacks).toEqual([[2, 3], [3]]);
    h.receive(opus(3), 130);
    expect(frames.map((x) => Number(x.split("/")[0]))).toEqual([1, 4, 5, 2, 6, 3]);
    expect(h.status()).toMatchObject({ nack: true, nacked: 3, repaired: 2, lost: 0 });
  });

  it("without RED or NACK every packet passes untracked, repeats included", () => {
    const { h, frames, drops } = hop(-1, false);
    const p = rtp(OPUS, 5, 4800, Uint8Array.of(5));
    h.receive(p, 0);
    h.receive(p, 0);
    expect(frames).toEqual([frame(5), frame(5)]);
    expect(drops).toEqual([]);
    expect(h.tracking).toBe(false);
  });
});
