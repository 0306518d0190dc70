// Shared backend connections (version-3 messages of kind/channel/length/body records): golden
// bytes written out by hand from the spec in backend-shared.ts, every rejection with its status,
// the encoders' bounds, and round trips / never throwing on any bytes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AudioCodec,
  AudioFlags,
  type AudioFrameHeader,
} from "../../regional/transceiver/backend-protocol.ts";
import {
  appendSharedAudio,
  appendSharedClose,
  appendSharedRecord,
  appendSharedText,
  SHARED_MAX_CLOSE_REASON,
  SHARED_MAX_EVENT_BYTES,
  SHARED_MAX_OPEN_BYTES,
  SHARED_RECORD_HEADER_BYTES,
  SHARED_STATUSES,
  SHARED_VERSION,
  SharedKind,
  SharedMessageReader,
  type SharedStatus,
  sharedAudioBytes,
  sharedTextBytes,
  startSharedMessage,
} from "../../regional/transceiver/backend-shared.ts";

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ""), "hex");
const toHex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

// ---- the golden message, by hand ------------------------------------------------------------
// kind | channel (u32 BE) | body length (u32 BE) | body
const OPEN = "01 00000001 00000013 7b2263616c6c5f6964223a227274635f78227d"; // {"call_id":"rtc_x"}
const EVENT = "02 00000001 0000000c 7b2274797065223a2278227d"; // {"type":"x"}
// frame: version 1, Opus, marker, slot 2, seq beef, ts 01020304, reserved 0000, payload fc ff fe
const AUDIO = "03 00000001 0000000f 01 01 01 02 beef 01020304 0000 fcfffe";
const CLOSE = "04 00000001 00000005 03e8 627965"; // 1000, "bye"
const GOLDEN = `03 ${OPEN} ${EVENT} ${AUDIO} ${CLOSE}`;
const GOLDEN_BYTES = 1 + (9 + 19) + (9 + 12) + (9 + 15) + (9 + 5);
const AUDIO_HEADER: AudioFrameHeader = {
  codec: AudioCodec.opus,
  flags: AudioFlags.marker,
  sequenceNumber: 0xbeef,
  timestamp: 0x01020304,
  participant: 2,
};

const STATUSES = new Set<string>(SHARED_STATUSES);
const MIN: Record<number, number> = { 1: 2, 2: 1, 3: 12, 4: 2 };
const MAX: Record<number, number> = { 1: 1024, 2: 256 * 1024, 3: 12 + 1500, 4: 2 + 123 };

interface Rec {
  kind: number;
  channel: number;
  bodyStart: number;
  bodyEnd: number;
  code?: number;
  frame?: AudioFrameHeader;
}
interface Walk {
  /** start()'s status when not "ok", else the status that ended the walk ("end" or an error). */
  status: SharedStatus | "end";
  records: Rec[];
  /** Two more next() calls after the walk ended. */
  after: string[];
}

/** Walks a whole message; every ok record is copied out (the reader's fields are reused). */
function walk(buf: Uint8Array, r = new SharedMessageReader()): Walk {
  const records: Rec[] = [];
  const s0 = r.start(buf);
  if (s0 !== "ok") return { status: s0, records, after: [r.next(), r.next()] };
  // each ok record advances at least 10 bytes: a reader that loops forever is a finding, not a hang
  for (let i = 0; i <= buf.length; i++) {
    const s = r.next();
    if (s !== "ok") return { status: s, records, after: [r.next(), r.next()] };
    const rec: Rec = { kind: r.kind, channel: r.channel, bodyStart: r.bodyStart, bodyEnd: r.bodyEnd };
    if (r.kind === SharedKind.audio) rec.frame = { ...r.frame };
    if (r.kind === SharedKind.close) rec.code = r.code;
    records.push(rec);
  }
  throw new Error("reader did not stop");
}

describe("shared message golden vector", () => {
  it("the encoders produce exactly the bytes of the spec", () => {
    const buf = Buffer.alloc(200, 0xaa);
    let off = startSharedMessage(buf);
    expect(off).toBe(1);
    const open = '{"call_id":"rtc_x"}';
    off = appendSharedText(buf, off, SharedKind.open, 1, open, Buffer.byteLength(open));
    expect(off).toBe(1 + sharedTextBytes(19));
    off = appendSharedText(buf, off, SharedKind.event, 1, '{"type":"x"}', 12);
    off = appendSharedAudio(buf, off, 1, AUDIO_HEADER, Uint8Array.of(0xfc, 0xff, 0xfe));
    expect(off).toBe(1 + 28 + 21 + sharedAudioBytes(3));
    off = appendSharedClose(buf, off, 1, 1000, "bye");
    expect(off).toBe(GOLDEN_BYTES);
    expect(toHex(buf.subarray(0, off))).toBe(toHex(hex(GOLDEN)));
    expect(buf[off]).toBe(0xaa); // nothing written past the end
  });

  it("appendSharedRecord with the same bodies gives the same bytes", () => {
    const buf = Buffer.alloc(GOLDEN_BYTES);
    let off = startSharedMessage(buf);
    for (const [kind, rec] of [
      [SharedKind.open, OPEN],
      [SharedKind.event, EVENT],
      [SharedKind.audio, AUDIO],
      [SharedKind.close, CLOSE],
    ] as const) {
      off = appendSharedRecord(buf, off, kind, 1, hex(rec).subarray(SHARED_RECORD_HEADER_BYTES));
    }
    expect(off).toBe(GOLDEN_BYTES);
    expect(toHex(buf)).toBe(toHex(hex(GOLDEN)));
  });

  it("the reader walks them back: kinds, channels, body bounds, frame header, close code", () => {
    const buf = hex(GOLDEN);
    expect(buf.length).toBe(GOLDEN_BYTES);
    const w = walk(buf);
    expect(w.status).toBe("end");
    expect(w.after).toEqual(["end", "end"]);
    expect(w.records).toEqual([
      { kind: SharedKind.open, channel: 1, bodyStart: 10, bodyEnd: 29 },
      { kind: SharedKind.event, channel: 1, bodyStart: 38, bodyEnd: 50 },
      { kind: SharedKind.audio, channel: 1, bodyStart: 59, bodyEnd: 74, frame: AUDIO_HEADER },
      { kind: SharedKind.close, channel: 1, bodyStart: 83, bodyEnd: 88, code: 1000 },
    ]);
    const [open, event, audio, close] = w.records as [Rec, Rec, Rec, Rec];
    expect(buf.toString("utf8", open.bodyStart, open.bodyEnd)).toBe('{"call_id":"rtc_x"}');
    expect(buf.toString("utf8", event.bodyStart, event.bodyEnd)).toBe('{"type":"x"}');
    expect(toHex(buf.subarray(audio.bodyStart + 12, audio.bodyEnd))).toBe("fcfffe");
    expect(buf.toString("utf8", close.bodyStart + 2, close.bodyEnd)).toBe("bye");
  });

  it("the channel is a whole u32, big endian (above 2^31 too)", () => {
    const buf = hex("03 02 fedcba98 00000001 7b 02 ffffffff 00000001 7d");
    expect(walk(buf).records.map((r) => r.channel)).toEqual([0xfedcba98, 0xffffffff]);
    const out = Buffer.alloc(buf.length);
    let off = startSharedMessage(out);
    off = appendSharedText(out, off, SharedKind.event, 0xfedcba98, "{", 1);
    off = appendSharedText(out, off, SharedKind.event, 0xffffffff, "}", 1);
    expect(toHex(out)).toBe(toHex(buf));
  });

  it("a message sitting in a larger buffer reads the same through a view", () => {
    const big = Buffer.alloc(GOLDEN_BYTES + 40, 0x03);
    hex(GOLDEN).copy(big, 17);
    expect(walk(big.subarray(17, 17 + GOLDEN_BYTES))).toEqual(walk(hex(GOLDEN)));
  });
});

describe("shared message reader rejections", () => {
  /** The open record, then `bad`, then an event that must not be handed out. */
  const around = (bad: string): Buffer => hex(`03 ${OPEN} ${bad} ${EVENT}`);
  const expectStops = (buf: Uint8Array, status: SharedStatus, before = 1): void => {
    const w = walk(buf);
    expect(w.status).toBe(status);
    expect(w.records.length).toBe(before);
    if (before > 0) expect(w.records[0]).toMatchObject({ kind: SharedKind.open, channel: 1, bodyEnd: 29 });
    expect(w.after).toEqual(["end", "end"]);
  };

  it("a version other than 3 (0, the audio frame's 1, the batch's 2, 4, ff)", () => {
    for (const v of ["00", "01", "02", "04", "ff"])
      expectStops(hex(`${v} ${OPEN} ${EVENT}`), "bad-version", 0);
    expect(SHARED_VERSION).toBe(3);
  });

  it("a message too short for one record header", () => {
    expectStops(new Uint8Array(0), "truncated", 0);
    expectStops(hex("03"), "truncated", 0);
    expectStops(hex("03 02 00000001 0000"), "truncated", 0);
  });

  it("a truncated record header, and any 1-8 bytes left over after a record", () => {
    const rest = hex(EVENT);
    for (let n = 1; n < SHARED_RECORD_HEADER_BYTES; n++) {
      expectStops(Buffer.concat([hex(`03 ${OPEN}`), rest.subarray(0, n)]), "truncated");
    }
    // nine bytes or more are a record header: zeros are kind 0
    expectStops(Buffer.concat([hex(`03 ${OPEN}`), new Uint8Array(9)]), "bad-kind");
  });

  it("an unknown kind", () => {
    for (const k of ["00", "05", "80", "ff"]) expectStops(around(`${k} 00000001 00000001 7b`), "bad-kind");
  });

  it("channel 0", () => {
    expectStops(around("02 00000000 00000001 7b"), "bad-channel");
    expectStops(around("03 00000000 0000000c 010100000000000000000000"), "bad-channel");
  });

  it("a body length past the end of the message", () => {
    expectStops(hex(`03 ${OPEN} 02 00000001 0000000d 7b2274797065223a2278227d`), "bad-length");
    expectStops(hex(`03 ${OPEN} 02 00000001 ffffffff 7b`), "bad-length");
    expectStops(hex(`03 ${OPEN} 04 00000001 00000002`), "bad-length");
  });

  it("a body length above its kind's maximum, with the bytes present", () => {
    for (const [kind, max] of Object.entries(MAX)) {
      const k = Number(kind);
      const body = new Uint8Array(max + 1);
      body[0] = 1; // a valid frame header for audio, so only the length is wrong
      body[1] = AudioCodec.opus;
      const rec = Buffer.alloc(SHARED_RECORD_HEADER_BYTES + body.length);
      rec[0] = k;
      rec.writeUInt32BE(1, 1);
      rec.writeUInt32BE(body.length, 5);
      rec.set(body, 9);
      const bad = Buffer.concat([hex(`03 ${OPEN}`), rec, hex(EVENT)]);
      expectStops(bad, "bad-length");
      // one byte less is the largest accepted
      rec.writeUInt32BE(max, 5);
      const w = walk(Buffer.concat([hex(`03 ${OPEN}`), rec.subarray(0, 9 + max), hex(EVENT)]));
      expect(w.status).toBe("end");
      expect(w.records.map((r) => [r.kind, r.bodyEnd - r.bodyStart])).toEqual([
        [1, 19],
        [k, max],
        [2, 12],
      ]);
    }
  });

  it("a body length below its kind's minimum", () => {
    expectStops(around("01 00000001 00000001 7b"), "bad-length");
    expectStops(around("01 00000001 00000000"), "bad-length");
    expectStops(around("02 00000001 00000000"), "bad-length");
    expectStops(around("03 00000001 0000000b 0101000000000000000000"), "bad-length");
    expectStops(around("04 00000001 00000001 03"), "bad-length");
    expectStops(around("04 00000001 00000000"), "bad-length");
    // the minimums themselves are accepted
    const w = walk(
      around(
        "01 00000001 00000002 7b7d 02 00000001 00000001 30 03 00000001 0000000c 010200000000000000000000",
      ),
    );
    expect(w.status).toBe("end");
    expect(w.records.map((r) => [r.kind, r.bodyEnd - r.bodyStart])).toEqual([
      [1, 19],
      [1, 2],
      [2, 1],
      [3, 12],
      [2, 12],
    ]);
    expect(walk(around("04 00000001 00000002 0fa0")).records[1]).toMatchObject({ kind: 4, code: 4000 });
  });

  it("an audio body whose frame header is bad (version, codec)", () => {
    expectStops(around("03 00000001 0000000f 02 01 01 02 beef 01020304 0000 fcfffe"), "bad-frame"); // version 2
    expectStops(around("03 00000001 0000000f 00 01 01 02 beef 01020304 0000 fcfffe"), "bad-frame"); // version 0
    expectStops(around("03 00000001 0000000f 01 00 01 02 beef 01020304 0000 fcfffe"), "bad-frame"); // codec 0
    expectStops(around("03 00000001 0000000f 01 03 01 02 beef 01020304 0000 fcfffe"), "bad-frame"); // codec 3
    // PCMU is a codec too
    expect(walk(around("03 00000001 0000000c 01 02 00 00 0000 00000000 0000")).status).toBe("end");
  });

  it("a reader that stopped on an error starts over on the next message", () => {
    const r = new SharedMessageReader();
    expect(walk(around("05 00000001 00000001 7b"), r).status).toBe("bad-kind");
    expect(walk(hex(GOLDEN), r).records.length).toBe(4);
    expect(walk(hex("03 ffffffffffffffffff"), r).status).toBe("bad-kind");
    expect(r.next()).toBe("end");
    expect(new SharedMessageReader().next()).toBe("end"); // never started
  });
});

describe("shared message encoder bounds", () => {
  const h = AUDIO_HEADER;

  it("-1 when the record does not fit, and nothing written", () => {
    const cases: [number, (b: Buffer, off: number) => number][] = [
      [sharedAudioBytes(3), (b, o) => appendSharedAudio(b, o, 7, h, Uint8Array.of(1, 2, 3))],
      [sharedTextBytes(5), (b, o) => appendSharedText(b, o, SharedKind.event, 7, '"abc"', 5)],
      [sharedTextBytes(5), (b, o) => appendSharedText(b, o, SharedKind.open, 7, '"abc"', 5)],
      [9 + 4, (b, o) => appendSharedRecord(b, o, SharedKind.event, 7, Uint8Array.of(1, 2, 3, 4))],
      [9 + 2 + 3, (b, o) => appendSharedClose(b, o, 7, 1000, "bye")],
    ];
    for (const [need, append] of cases) {
      for (const off of [0, 1, 50]) {
        const fits = Buffer.alloc(off + need, 0xaa);
        expect(append(fits, off)).toBe(off + need);
        const short = Buffer.alloc(off + need - 1, 0xaa);
        expect(append(short, off)).toBe(-1);
        expect(short.every((x) => x === 0xaa)).toBe(true);
      }
    }
  });

  it("audio: a payload of 1500 bytes fits, 1501 does not", () => {
    const buf = Buffer.alloc(4000);
    expect(appendSharedAudio(buf, 1, 1, h, new Uint8Array(1500))).toBe(1 + 9 + 12 + 1500);
    expect(appendSharedAudio(buf, 1, 1, h, new Uint8Array(1501))).toBe(-1);
    const frame = (n: number) => Uint8Array.from([1, 1, ...new Uint8Array(10 + n)]);
    expect(appendSharedRecord(buf, 1, SharedKind.audio, 1, frame(1500))).toBe(1 + 9 + 1512);
    expect(appendSharedRecord(buf, 1, SharedKind.audio, 1, frame(1501))).toBe(-1);
  });

  it("event: 256 KiB fits, one byte more does not; an empty event does not", () => {
    const buf = Buffer.alloc(SHARED_MAX_EVENT_BYTES + 100);
    const max = "x".repeat(SHARED_MAX_EVENT_BYTES);
    expect(SHARED_MAX_EVENT_BYTES).toBe(262144);
    expect(appendSharedText(buf, 1, SharedKind.event, 1, max, max.length)).toBe(1 + 9 + max.length);
    expect(appendSharedText(buf, 1, SharedKind.event, 1, `${max}x`, max.length + 1)).toBe(-1);
    expect(appendSharedText(buf, 1, SharedKind.event, 1, "", 0)).toBe(-1);
    expect(appendSharedRecord(buf, 1, SharedKind.event, 1, new Uint8Array(max.length + 1))).toBe(-1);
    // a 256 KiB event reads back whole
    startSharedMessage(buf);
    const end = appendSharedText(buf, 1, SharedKind.event, 9, max, max.length);
    expect(walk(buf.subarray(0, end)).records).toEqual([
      { kind: 2, channel: 9, bodyStart: 10, bodyEnd: 10 + SHARED_MAX_EVENT_BYTES },
    ]);
  });

  it("open: 2 to 1024 bytes", () => {
    const buf = Buffer.alloc(2000);
    const t = (n: number): string => "o".repeat(n);
    expect(SHARED_MAX_OPEN_BYTES).toBe(1024);
    expect(appendSharedText(buf, 0, SharedKind.open, 1, t(1024), 1024)).toBe(9 + 1024);
    expect(appendSharedText(buf, 0, SharedKind.open, 1, t(1025), 1025)).toBe(-1);
    expect(appendSharedText(buf, 0, SharedKind.open, 1, t(2), 2)).toBe(9 + 2);
    expect(appendSharedText(buf, 0, SharedKind.open, 1, t(1), 1)).toBe(-1);
    expect(appendSharedText(buf, 0, SharedKind.open, 1, "", 0)).toBe(-1);
    expect(appendSharedRecord(buf, 0, SharedKind.open, 1, new Uint8Array(1025))).toBe(-1);
  });

  it("close: a long reason is cut to at most 123 bytes at a UTF-8 character boundary", () => {
    const cases: [string, string][] = [
      ["é".repeat(100), "é".repeat(61)], // 2-byte: 122 bytes, not half an é at 123
      [`a${"é".repeat(100)}`, `a${"é".repeat(61)}`], // 123 exactly
      ["€".repeat(50), "€".repeat(41)], // 3-byte: 123 exactly
      [`ab${"€".repeat(50)}`, `ab${"€".repeat(40)}`], // 122
      ["😀".repeat(40), "😀".repeat(30)], // 4-byte: 120
      ["x".repeat(124), "x".repeat(123)],
      ["x".repeat(123), "x".repeat(123)],
      ["", ""],
    ];
    for (const [reason, kept] of cases) {
      const buf = Buffer.alloc(1 + 9 + 2 + 200, 0xaa);
      const off = appendSharedClose(buf, startSharedMessage(buf), 5, 4001, reason);
      const n = Buffer.byteLength(kept);
      expect(n).toBeLessThanOrEqual(SHARED_MAX_CLOSE_REASON);
      expect(off).toBe(1 + 9 + 2 + n);
      const w = walk(buf.subarray(0, off));
      expect(w.status).toBe("end");
      expect(w.records).toEqual([{ kind: 4, channel: 5, bodyStart: 10, bodyEnd: off, code: 4001 }]);
      expect(new TextDecoder("utf-8", { fatal: true }).decode(buf.subarray(12, off))).toBe(kept);
    }
  });

  it("close codes read back (u16, big endian)", () => {
    for (const code of [1000, 1001, 1011, 4000, 4999, 0xffff]) {
      const buf = Buffer.alloc(20);
      const off = appendSharedClose(buf, startSharedMessage(buf), 1, code, "");
      expect(buf.readUInt16BE(10)).toBe(code);
      expect(walk(buf.subarray(0, off)).records[0]?.code).toBe(code);
    }
  });

  // A record the reader would refuse costs the peer the whole message, other calls' records included.
  it("a record appendSharedRecord accepts reads back ok (short bodies are refused)", () => {
    for (const [kind, min] of Object.entries(MIN)) {
      for (let n = 0; n < min; n++) {
        const buf = Buffer.alloc(100);
        const end = appendSharedRecord(
          buf,
          startSharedMessage(buf),
          Number(kind) as SharedKind,
          1,
          new Uint8Array(n),
        );
        if (end !== -1) expect(walk(buf.subarray(0, end)).status, `kind ${kind}, ${n}-byte body`).toBe("end");
      }
    }
  });

  // Channel 0 would be refused by the reader, and 2^32 + k would be written as k (another call).
  it("the encoders refuse channels outside 1..2^32-1", () => {
    for (const channel of [0, 2 ** 32, 2 ** 32 + 1, -1]) {
      const buf = Buffer.alloc(100);
      expect(appendSharedText(buf, 1, SharedKind.event, channel, "{}", 2), `channel ${channel}`).toBe(-1);
      expect(appendSharedAudio(buf, 1, channel, AUDIO_HEADER, new Uint8Array(1))).toBe(-1);
      expect(appendSharedClose(buf, 1, channel, 1000, "")).toBe(-1);
      expect(appendSharedRecord(buf, 1, SharedKind.event, channel, Uint8Array.of(1))).toBe(-1);
    }
  });

  it("refuses audio the reader would refuse: an unknown codec, a bad frame as a raw body", () => {
    const buf = Buffer.alloc(100);
    expect(appendSharedAudio(buf, 1, 1, { ...AUDIO_HEADER, codec: 0 }, new Uint8Array(1))).toBe(-1);
    expect(appendSharedAudio(buf, 1, 1, { ...AUDIO_HEADER, codec: 3 }, new Uint8Array(1))).toBe(-1);
    const badFrame = new Uint8Array(12); // version 0
    expect(appendSharedRecord(buf, 1, SharedKind.audio, 1, badFrame)).toBe(-1);
    badFrame[0] = 1;
    badFrame[1] = 1;
    expect(appendSharedRecord(buf, 1, SharedKind.audio, 1, badFrame)).toBe(1 + 9 + 12);
  });
});

// ---- properties -----------------------------------------------------------------------------
type Model =
  | { kind: 1 | 2; channel: number; text: string }
  | { kind: 3; channel: number; frame: AudioFrameHeader; payload: Uint8Array }
  | { kind: 4; channel: number; code: number; reason: string };

const channelArb = fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 0xffffffff }));
const textArb = (min: number, max: number): fc.Arbitrary<string> =>
  fc
    .string({
      unit: fc.constantFrom("a", "{", '"', "é", "€", "😀", "\u0000", "\n"),
      minLength: min,
      maxLength: max,
    })
    .filter((s) => {
      const n = Buffer.byteLength(s);
      return n >= min && n <= max;
    });
const recordArb: fc.Arbitrary<Model> = fc.oneof(
  fc.record({ kind: fc.constant(1 as const), channel: channelArb, text: textArb(2, 200) }),
  fc.record({
    kind: fc.constant(2 as const),
    channel: channelArb,
    text: fc.oneof(textArb(1, 300), fc.string({ unit: "binary", minLength: 1, maxLength: 100 })),
  }),
  fc.record({
    kind: fc.constant(3 as const),
    channel: channelArb,
    frame: fc.record({
      codec: fc.constantFrom(AudioCodec.opus, AudioCodec.pcmu),
      flags: fc.nat(255),
      sequenceNumber: fc.nat(0xffff),
      timestamp: fc.nat(0xffffffff),
      participant: fc.nat(255),
    }),
    payload: fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ minLength: 1400, maxLength: 1500 })),
  }),
  fc.record({
    kind: fc.constant(4 as const),
    channel: channelArb,
    code: fc.nat(0xffff),
    reason: fc.oneof(textArb(0, 40), fc.string({ unit: "binary", maxLength: 140 })),
  }),
);

/** The longest prefix of `reason` (as UTF-8 turns it) that fits in 123 bytes, by code points. */
function keptReason(reason: string): Buffer {
  let kept = "";
  for (const cp of Buffer.from(reason, "utf8").toString("utf8")) {
    if (Buffer.byteLength(kept + cp) > SHARED_MAX_CLOSE_REASON) break;
    kept += cp;
  }
  return Buffer.from(kept, "utf8");
}

function encode(records: Model[]): { buf: Buffer; bodies: Buffer[] } {
  const buf = Buffer.alloc(1 + records.length * (9 + 2000));
  const bodies: Buffer[] = [];
  let off = startSharedMessage(buf);
  for (const m of records) {
    if (m.kind === 3) {
      off = appendSharedAudio(buf, off, m.channel, m.frame, m.payload);
      const frame = Buffer.alloc(12 + m.payload.length);
      // independent of the encoder: the documented frame header layout
      frame.set([1, m.frame.codec, m.frame.flags, m.frame.participant ?? 0]);
      frame.writeUInt16BE(m.frame.sequenceNumber, 4);
      frame.writeUInt32BE(m.frame.timestamp, 6);
      frame.set(m.payload, 12);
      bodies.push(frame);
    } else if (m.kind === 4) {
      off = appendSharedClose(buf, off, m.channel, m.code, m.reason);
      const b = Buffer.alloc(2);
      b.writeUInt16BE(m.code);
      bodies.push(Buffer.concat([b, keptReason(m.reason)]));
    } else {
      off = appendSharedText(buf, off, m.kind, m.channel, m.text, Buffer.byteLength(m.text));
      bodies.push(Buffer.from(m.text, "utf8"));
    }
    expect(off).toBeGreaterThan(0);
  }
  return { buf: buf.subarray(0, off), bodies };
}

/** Invariants of any walk over any bytes; returns the walk. */
function checkedWalk(buf: Uint8Array): Walk {
  const w = walk(buf);
  expect(STATUSES.has(w.status) || w.status === "end").toBe(true);
  expect(w.status).not.toBe("ok");
  expect(w.after).toEqual(["end", "end"]);
  let prev = 1;
  for (const r of w.records) {
    expect([1, 2, 3, 4]).toContain(r.kind);
    expect(r.channel).toBeGreaterThanOrEqual(1);
    expect(r.channel).toBeLessThanOrEqual(0xffffffff);
    expect(r.bodyStart).toBe(prev + SHARED_RECORD_HEADER_BYTES);
    expect(r.bodyEnd).toBeLessThanOrEqual(buf.length);
    const n = r.bodyEnd - r.bodyStart;
    expect(n).toBeGreaterThanOrEqual(MIN[r.kind]!);
    expect(n).toBeLessThanOrEqual(MAX[r.kind]!);
    // the fields are the bytes
    expect(buf[prev]).toBe(r.kind);
    expect(Buffer.from(buf.buffer, buf.byteOffset, buf.length).readUInt32BE(prev + 1)).toBe(r.channel);
    if (r.kind === 3) expect(r.frame?.codec).toBe(buf[r.bodyStart + 1]);
    if (r.kind === 4) expect(r.code).toBe((buf[r.bodyStart]! << 8) | buf[r.bodyStart + 1]!);
    prev = r.bodyEnd;
  }
  if (w.status === "end") expect(prev).toBe(buf.length);
  return w;
}

describe("shared message properties", () => {
  it("any sequence of valid records round-trips in one message", () => {
    fc.assert(
      fc.property(fc.array(recordArb, { minLength: 1, maxLength: 12 }), (records) => {
        const { buf, bodies } = encode(records);
        const w = checkedWalk(buf);
        expect(w.status).toBe("end");
        expect(w.records.map((r) => [r.kind, r.channel])).toEqual(records.map((m) => [m.kind, m.channel]));
        w.records.forEach((r, i) => {
          expect(toHex(buf.subarray(r.bodyStart, r.bodyEnd))).toBe(toHex(bodies[i]!));
          const m = records[i]!;
          if (m.kind === 3) expect(r.frame).toEqual(m.frame);
          if (m.kind === 4) expect(r.code).toBe(m.code);
        });
        // and re-encoding the bodies as they came gives the same message
        const again = Buffer.alloc(buf.length);
        let off = startSharedMessage(again);
        for (const r of w.records)
          off = appendSharedRecord(
            again,
            off,
            r.kind as SharedKind,
            r.channel,
            buf.subarray(r.bodyStart, r.bodyEnd),
          );
        expect(toHex(again.subarray(0, off))).toBe(toHex(buf));
      }),
      { numRuns: 300 },
    );
  });

  it("on any bytes the reader never throws, keeps to its statuses and bounds, and sees only the bytes", () => {
    const mutated = fc
      .tuple(
        fc.array(recordArb, { minLength: 1, maxLength: 5 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 4 }),
        fc.option(fc.nat()),
      )
      .map(([records, edits, cut]) => {
        const b = Uint8Array.from(encode(records).buf);
        for (const [at, v] of edits) b[at % b.length] = v;
        return cut === null ? b : b.subarray(0, cut % (b.length + 1));
      });
    const raw = fc.uint8Array({ maxLength: 300 }).map((b) => {
      if (b.length > 0) b[0] = SHARED_VERSION; // past the version check most of the time
      return b;
    });
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 64 }), raw, mutated), fc.nat(31), (buf, pad) => {
        const w = checkedWalk(buf);
        expect(walk(buf.slice())).toEqual(w);
        // through a view inside a larger buffer with other bytes around
        const big = new Uint8Array(buf.length + 2 * pad).fill(0x03);
        big.set(buf, pad);
        expect(walk(big.subarray(pad, pad + buf.length))).toEqual(w);
      }),
      { numRuns: 2000 },
    );
  });

  it("the close reason is always the longest whole-character prefix of at most 123 bytes", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary", maxLength: 200 }),
          // around the 123-byte cut: 1- to 4-byte characters
          fc.string({ unit: fc.constantFrom("a", "é", "€", "😀"), minLength: 30, maxLength: 130 }),
        ),
        (reason) => {
          const buf = Buffer.alloc(200);
          const off = appendSharedClose(buf, 0, 1, 1000, reason);
          const got = buf.subarray(9 + 2, off);
          expect(got.length).toBeLessThanOrEqual(SHARED_MAX_CLOSE_REASON);
          expect(toHex(got)).toBe(toHex(keptReason(reason)));
        },
      ),
    );
  });
});
