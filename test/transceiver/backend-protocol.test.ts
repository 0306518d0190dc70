// The backend audio frame header: golden bytes, round trips, and never throwing on any input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AUDIO_FRAME_HEADER_BYTES,
  AudioCodec,
  BridgeEvent,
  encodeAudioFrame,
  newAudioFrameHeader,
  participantEvent,
  readAudioFrameHeader,
} from "../../regional/transceiver/backend-protocol.ts";

describe("audio frame header", () => {
  it("matches the documented layout byte for byte", () => {
    const f = encodeAudioFrame(
      { codec: AudioCodec.opus, flags: 1, sequenceNumber: 0xbeef, timestamp: 0x01020304 },
      Uint8Array.of(0xfc, 0xff, 0xfe),
    );
    expect([...f]).toEqual([1, 1, 1, 0, 0xbe, 0xef, 1, 2, 3, 4, 0, 0, 0xfc, 0xff, 0xfe]);
    expect(AUDIO_FRAME_HEADER_BYTES).toBe(12);
  });

  it("carries the participant slot in byte 3 (0 when the sender sets none: everyone)", () => {
    const h = { codec: AudioCodec.pcmu, flags: 0, sequenceNumber: 1, timestamp: 2 };
    expect(encodeAudioFrame({ ...h, participant: 3 }, new Uint8Array(0))[3]).toBe(3);
    const old = encodeAudioFrame(h, new Uint8Array(0));
    expect(old[3]).toBe(0);
    const read = newAudioFrameHeader();
    read.participant = 9;
    expect(readAudioFrameHeader(old, read)).toBe("ok");
    expect(read.participant).toBe(0);
  });

  it("names participants in participant.joined / participant.left", () => {
    expect(JSON.parse(participantEvent("joined", "rtc_x", "prt_abc", 2))).toEqual({
      type: BridgeEvent.participantJoined,
      call_id: "rtc_x",
      participant_id: "prt_abc",
      slot: 2,
    });
    expect(JSON.parse(participantEvent("left", "rtc_x", "owner", 1, "transceiver_failed"))).toMatchObject({
      type: "participant.left",
      reason: "transceiver_failed",
    });
  });

  it("round-trips every header and payload", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(AudioCodec.opus, AudioCodec.pcmu),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0, max: 0xffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 255 }),
        fc.uint8Array({ maxLength: 1500 }),
        (codec, flags, sequenceNumber, timestamp, participant, payload) => {
          const f = encodeAudioFrame({ codec, flags, sequenceNumber, timestamp, participant }, payload);
          const h = newAudioFrameHeader();
          expect(readAudioFrameHeader(f, h)).toBe("ok");
          expect(h).toEqual({ codec, flags, sequenceNumber, timestamp, participant });
          expect([...f.subarray(12)]).toEqual([...payload]);
        },
      ),
    );
  });

  it("rejects bad frames with a reason and never throws", () => {
    const h = newAudioFrameHeader();
    expect(readAudioFrameHeader(new Uint8Array(11), h)).toBe("truncated");
    expect(readAudioFrameHeader(Uint8Array.of(2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), h)).toBe("bad-version");
    expect(readAudioFrameHeader(Uint8Array.of(1, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), h)).toBe("bad-codec");
    expect(readAudioFrameHeader(new Uint8Array(12 + 1501).fill(1, 0, 2), h)).toBe("too-large");
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
        readAudioFrameHeader(b, h);
      }),
    );
  });
});

describe("the in-process echo and participant slots", () => {
  it("echoes each frame with its slot and counts frames per slot across its links", async () => {
    const { inProcessEchoBackend } = await import("../../regional/echo-agent/in-process.ts");
    const connector = inProcessEchoBackend("internal:echo");
    const got: number[] = [];
    const handlers = {
      onAudio: (h: { participant?: number }) => got.push(h.participant ?? -1),
      onEvent: () => {},
      onDrop: () => {},
      onError: () => {},
      onClose: () => {},
    };
    const call = { callId: "rtc_x", clusterId: 1, transceiverId: 1 };
    const a = connector.open(call, handlers);
    const b = connector.open(call, handlers);
    const h = { codec: AudioCodec.opus, flags: 0, sequenceNumber: 1, timestamp: 960 };
    a.sendAudio({ ...h, participant: 1 }, Uint8Array.of(1));
    a.sendAudio({ ...h, participant: 2 }, Uint8Array.of(2));
    b.sendAudio({ ...h, participant: 2 }, Uint8Array.of(3));
    expect(got).toEqual([1, 2, 2]);
    expect([connector.framesBySlot[1], connector.framesBySlot[2]]).toEqual([1, 2]);
    a.close();
    b.close();
  });
});
