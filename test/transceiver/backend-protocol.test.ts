// The backend audio frame header: golden bytes, round trips, and never throwing on any input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AUDIO_FRAME_HEADER_BYTES,
  AudioCodec,
  encodeAudioFrame,
  newAudioFrameHeader,
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

  it("round-trips every header and payload", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(AudioCodec.opus, AudioCodec.pcmu),
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0, max: 0xffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.uint8Array({ maxLength: 1500 }),
        (codec, flags, sequenceNumber, timestamp, payload) => {
          const f = encodeAudioFrame({ codec, flags, sequenceNumber, timestamp }, payload);
          const h = newAudioFrameHeader();
          expect(readAudioFrameHeader(f, h)).toBe("ok");
          expect(h).toEqual({ codec, flags, sequenceNumber, timestamp });
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
