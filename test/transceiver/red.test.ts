// RFC 2198 payloads (core/red.ts): vectors, werift's parser as a second opinion, never throws;
// the offer's red taken only when it carries the offer's Opus (core/red-offer.ts).
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Red } from "werift";
import { newRedBlocks, parseRed, RED_MAX_BLOCKS, writeRed } from "../../regional/transceiver/core/red.ts";
import { redOffered } from "../../regional/transceiver/core/red-offer.ts";
import type { OfferCodec } from "../../shared/sdp/offer.ts";

const hex = (s: string) => Uint8Array.from(Buffer.from(s.replace(/\s/g, ""), "hex"));
const blocksOf = (p: Uint8Array) => {
  const b = newRedBlocks();
  const r = parseRed(p, b);
  const out = [];
  for (let i = 0; i < b.count; i++) {
    out.push({
      pt: b.pt[i],
      tsOffset: b.tsOffset[i],
      data: Buffer.from(p.subarray(b.start[i]!, b.start[i]! + b.length[i]!)).toString("hex"),
    });
  }
  return { r, out };
};

describe("RED payloads", () => {
  it("parses the RFC 2198 §3 layout: one redundant block (offset 960, 3 bytes), then the primary", () => {
    // F=1 pt 111 | offset 960 = 0b00001111000000 | length 3 ; F=0 pt 111 ; aabbcc ; ddeeff11
    const p = hex("ef 0f 00 03 6f aabbcc ddeeff11");
    expect(blocksOf(p)).toEqual({
      r: "ok",
      out: [
        { pt: 111, tsOffset: 960, data: "aabbcc" },
        { pt: 111, tsOffset: 0, data: "ddeeff11" },
      ],
    });
  });

  it("parses a primary-only payload and two redundant blocks", () => {
    expect(blocksOf(hex("6f 0102"))).toEqual({ r: "ok", out: [{ pt: 111, tsOffset: 0, data: "0102" }] });
    // offsets 1920 (2 bytes) and 960 (1 byte)
    const p = hex("ef 1e 00 02 ef 0f 00 01 6f 1111 22 3333");
    expect(blocksOf(p).out.map((b) => [b.tsOffset, b.data])).toEqual([
      [1920, "1111"],
      [960, "22"],
      [0, "3333"],
    ]);
  });

  it("refuses truncated, empty and over-long payloads", () => {
    expect(blocksOf(hex("")).r).toBe("red_empty");
    expect(blocksOf(hex("ef 0f 00")).r).toBe("red_truncated"); // header cut
    expect(blocksOf(hex("ef 0f 00 03")).r).toBe("red_truncated"); // no primary header
    expect(blocksOf(hex("ef 0f 00 03 6f aabb")).r).toBe("red_truncated"); // block longer than data
    const many = Buffer.alloc(4 * RED_MAX_BLOCKS + 1, 0);
    for (let i = 0; i < RED_MAX_BLOCKS; i++) many.set([0xef, 0, 4, 0], i * 4);
    many[4 * RED_MAX_BLOCKS] = 0x6f;
    expect(blocksOf(many).r).toBe("red_too_many_blocks");
  });

  it("builds what it parses, and what werift parses: previous frame as redundancy", () => {
    const prev = randomBytes(80);
    const cur = randomBytes(60);
    const out = new Uint8Array(200);
    const n = writeRed(out, 111, cur, prev, prev.length, 960);
    expect(n).toBe(5 + 80 + 60);
    expect(Buffer.from(out.subarray(0, 5)).toString("hex")).toBe("ef0f00506f");
    const { out: b } = blocksOf(out.subarray(0, n));
    expect(b).toEqual([
      { pt: 111, tsOffset: 960, data: prev.toString("hex") },
      { pt: 111, tsOffset: 0, data: cur.toString("hex") },
    ]);
    const w = Red.deSerialize(Buffer.from(out.subarray(0, n)));
    expect(w.blocks.map((x) => [x.blockPT, x.timestampOffset, x.block.toString("hex")])).toEqual([
      [111, 960, prev.toString("hex")],
      [111, undefined, cur.toString("hex")],
    ]);
  });

  it("leaves out a redundant block that the header cannot carry", () => {
    const cur = hex("0102");
    const out = new Uint8Array(2000);
    expect(writeRed(out, 111, cur, null, 0, 960)).toBe(3); // no previous frame
    expect(writeRed(out, 111, cur, new Uint8Array(1024), 1024, 960)).toBe(3); // > 10-bit length
    expect(writeRed(out, 111, cur, hex("aa"), 1, 0x4000)).toBe(3); // > 14-bit offset (e.g. a gap)
    expect(writeRed(out, 111, cur, hex("aa"), 1, 0)).toBe(3);
    expect(Buffer.from(out.subarray(0, 3)).toString("hex")).toBe("6f0102");
    expect(writeRed(new Uint8Array(4), 111, cur, hex("aa"), 1, 960)).toBe(0); // does not fit
  });

  it("never throws on random input, and what it accepts stays inside the payload", () => {
    const b = newRedBlocks();
    for (let i = 0; i < 20_000; i++) {
      const p = randomBytes(i % 64);
      if (i % 3 === 0 && p.length > 0) p[0]! |= 0x80;
      const r = parseRed(p, b);
      if (r !== "ok") {
        expect(b.count).toBe(0);
        continue;
      }
      const last = b.count - 1;
      expect(b.start[last]! + b.length[last]!).toBe(p.length);
      for (let k = 0; k < last; k++) expect(b.start[k]! + b.length[k]!).toBe(b.start[k + 1]);
    }
  });
});

describe("red in an offer", () => {
  const c = (
    payloadType: number,
    name: string,
    clockRate: number,
    channels: number,
    fmtp = "",
  ): OfferCodec => ({
    payloadType,
    name,
    clockRate,
    channels,
    fmtp,
  });
  const opus = c(111, "opus", 48000, 2, "minptime=10;useinbandfec=1");
  it("takes Chromium's red/48000/2 111/111", () => {
    expect(redOffered([opus, c(63, "red", 48000, 2, "111/111"), c(0, "PCMU", 8000, 1)])).toEqual({
      payloadType: 63,
      fmtp: "111/111",
      opusPayloadType: 111,
    });
  });
  it("refuses red of another codec, without Opus, or when PCMU comes first", () => {
    expect(redOffered([opus, c(63, "red", 48000, 2, "111/9")])).toBeUndefined();
    expect(redOffered([c(63, "red", 48000, 2, "0/0"), c(0, "PCMU", 8000, 1)])).toBeUndefined();
    expect(redOffered([c(0, "PCMU", 8000, 1), opus, c(63, "red", 48000, 2, "111/111")])).toBeUndefined();
    expect(redOffered([opus, c(63, "red", 48000, 2, "")])).toBeUndefined();
    expect(redOffered([opus, c(63, "red", 48000, 2, Array(9).fill("111").join("/"))])).toBeUndefined();
  });
});
