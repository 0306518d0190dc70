// Backbone frame: golden vectors, encode → decode round trips (IPv4 and IPv6), every rejection
// reason, and a decoder that never throws.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatClientIp, parseIpv4, parseIpv6, writeIpv4 } from "../../shared/backbone/address.ts";
import {
  decodeFrameHeader,
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  FRAME_MAX_PAYLOAD,
  type FrameHeader,
  type FrameStatus,
  FrameType,
  newFrameHeader,
} from "../../shared/backbone/frame.ts";
import { committedVectors, fromHex, toHex } from "./helpers.ts";

const header = fc
  .record({
    type: fc.constantFrom(FrameType.data, FrameType.flowClose, FrameType.ping, FrameType.pong),
    popId: fc.nat(0xffff),
    clusterId: fc.nat(0xffff),
    transceiverId: fc.nat(0xffff),
    clientIpv6: fc.boolean(),
    clientTcp: fc.boolean(),
    clientPort: fc.integer({ min: 1, max: 0xffff }),
    ip: fc.uint8Array({ minLength: 16, maxLength: 16 }),
  })
  .map(({ ip, ...h }): FrameHeader => {
    if (!h.clientIpv6) ip.fill(0, 0, 12);
    return { ...h, clientIp: ip };
  });

describe("frame golden vectors", () => {
  it.each(committedVectors().frames)("$name", (v) => {
    const bytes = fromHex(v.frameHex);
    const h = newFrameHeader();
    expect(decodeFrameHeader(bytes, bytes.length, h)).toBe("ok");
    expect([h.type, h.popId, h.clusterId, h.transceiverId, h.clientPort]).toEqual([
      v.type,
      v.popId,
      v.clusterId,
      v.transceiverId,
      v.clientPort,
    ]);
    expect(formatClientIp(h.clientIp, h.clientIpv6)).toBe(v.client);
    expect(toHex(bytes.subarray(FRAME_HEADER_BYTES))).toBe(v.payloadHex);
    // re-encoding gives the same bytes
    const out = new Uint8Array(bytes.length);
    encodeFrameHeader(out, 0, h);
    out.set(bytes.subarray(FRAME_HEADER_BYTES), FRAME_HEADER_BYTES);
    expect(toHex(out)).toBe(v.frameHex);
  });

  it("the IPv4 data vector field by field", () => {
    const b = fromHex(committedVectors().frames[0]!.frameHex);
    expect(b[0]).toBe(0x47); // magic
    expect(b[1]).toBe(0x11); // version 1, type data
    expect(b[2]).toBe(0); // flags: IPv4
    expect(b[3]).toBe(0);
    expect(toHex(b.subarray(4, 12))).toBe("000100020003d431"); // POP 1, cluster 2, transceiver 3, port 54321
    expect(toHex(b.subarray(12, 28))).toBe("000000000000000000000000cb007107"); // 203.0.113.7
  });
});

describe("encode → decode", () => {
  it("round-trips every field, at any offset, leaving bytes around the header alone", () => {
    fc.assert(
      fc.property(header, fc.nat(16), (h, off) => {
        const buf = new Uint8Array(off + FRAME_HEADER_BYTES + 4).fill(0xee);
        encodeFrameHeader(buf, off, h);
        expect(buf.subarray(0, off).every((x) => x === 0xee)).toBe(true);
        expect(buf.subarray(off + FRAME_HEADER_BYTES).every((x) => x === 0xee)).toBe(true);
        const frame = buf.subarray(off);
        const d = newFrameHeader();
        expect(decodeFrameHeader(frame, frame.length, d)).toBe("ok");
        expect(d).toEqual(h);
      }),
      { numRuns: 2000 },
    );
  });

  it("IPv4 text → frame → text", () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.integer({ min: 1, max: 65535 }), (ip, port) => {
        const h = newFrameHeader();
        writeIpv4(h.clientIp, parseIpv4(ip));
        h.clientPort = port;
        const buf = new Uint8Array(FRAME_HEADER_BYTES);
        encodeFrameHeader(buf, 0, h);
        const d = newFrameHeader();
        expect(decodeFrameHeader(buf, buf.length, d)).toBe("ok");
        expect(formatClientIp(d.clientIp, d.clientIpv6)).toBe(ip);
      }),
    );
  });

  it("IPv6 text → frame → the same address", () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const h = newFrameHeader();
        h.clientIpv6 = true;
        h.clientPort = 443;
        expect(parseIpv6(ip, h.clientIp)).toBe(true);
        const buf = new Uint8Array(FRAME_HEADER_BYTES);
        encodeFrameHeader(buf, 0, h);
        const d = newFrameHeader();
        expect(decodeFrameHeader(buf, buf.length, d)).toBe("ok");
        const back = new Uint8Array(16);
        expect(parseIpv6(formatClientIp(d.clientIp, true), back)).toBe(true);
        expect(back).toEqual(h.clientIp);
      }),
    );
  });

  it("IPv4 encoding ignores stale bytes 0-11 of the header's clientIp", () => {
    const h = newFrameHeader();
    h.clientIp.fill(0xff);
    h.clientPort = 1;
    const buf = new Uint8Array(FRAME_HEADER_BYTES);
    encodeFrameHeader(buf, 0, h);
    expect(decodeFrameHeader(buf, buf.length, newFrameHeader())).toBe("ok");
    expect(formatClientIp(buf.subarray(12), false)).toBe("255.255.255.255");
  });

  it("FRAME_MAX_PAYLOAD fills an IPv4 UDP datagram", () => {
    expect(FRAME_MAX_PAYLOAD + FRAME_HEADER_BYTES).toBe(65507);
  });
});

describe("decode rejections", () => {
  const good = (): Uint8Array => {
    const h = newFrameHeader();
    h.popId = 1;
    h.clusterId = 2;
    h.transceiverId = 3;
    h.clientPort = 4;
    writeIpv4(h.clientIp, parseIpv4("192.0.2.1"));
    const b = new Uint8Array(FRAME_HEADER_BYTES + 1);
    encodeFrameHeader(b, 0, h);
    return b;
  };
  // [name, byte edits [index, value], len delta, expected]
  it.each<[string, [number, number][], number, FrameStatus]>([
    ["shorter than the header", [], -2, "truncated"],
    ["len beyond the buffer", [], 1, "truncated"],
    ["magic", [[0, 0x48]], 0, "bad-magic"],
    ["version 2", [[1, 0x21]], 0, "unsupported-version"],
    ["version 0", [[1, 0x01]], 0, "unsupported-version"],
    ["type 0", [[1, 0x10]], 0, "bad-type"],
    ["type 6", [[1, 0x16]], 0, "bad-type"],
    [
      "pathValidated, port 0",
      [
        [1, 0x15],
        [10, 0],
        [11, 0],
      ],
      0,
      "bad-address",
    ],
    ["unknown flag", [[2, 0x04]], 0, "bad-type"],
    ["unknown high flag", [[2, 0x80]], 0, "bad-type"],
    ["reserved byte", [[3, 0x01]], 0, "bad-type"],
    ["IPv4 with non-zero padding", [[12, 1]], 0, "bad-address"],
    [
      "data frame with port 0",
      [
        [10, 0],
        [11, 0],
      ],
      0,
      "bad-address",
    ],
  ])("%s → %s", (_name, edits, lenDelta, expected) => {
    const b = good();
    expect(decodeFrameHeader(b, b.length, newFrameHeader())).toBe("ok");
    for (const [i, v] of edits) b[i] = v;
    expect(decodeFrameHeader(b, b.length + lenDelta, newFrameHeader())).toBe(expected);
  });

  it("the TCP-borne flag (bit 1) reads back, with and without IPv6", () => {
    for (const flags of [2, 3]) {
      const b = good();
      b[2] = flags;
      if (flags & 1) b[12] = 0x20;
      const h = newFrameHeader();
      expect(decodeFrameHeader(b, b.length, h)).toBe("ok");
      expect([h.clientTcp, h.clientIpv6]).toEqual([true, flags === 3]);
      const out = new Uint8Array(FRAME_HEADER_BYTES);
      encodeFrameHeader(out, 0, h);
      expect(out[2]).toBe(flags);
    }
  });

  it("ping/pong/flowClose frames may carry port 0 (not client traffic)", () => {
    const b = good();
    b[10] = 0;
    b[11] = 0;
    for (const t of [FrameType.flowClose, FrameType.ping, FrameType.pong]) {
      b[1] = 0x10 | t;
      expect(decodeFrameHeader(b, b.length, newFrameHeader())).toBe("ok");
    }
  });

  it("never throws on arbitrary bytes and lengths, and ok implies a re-encodable header", () => {
    const h = newFrameHeader();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.integer({ min: -4, max: 70 }), (buf, len) => {
        const status = decodeFrameHeader(buf, len, h);
        if (status === "ok") {
          const again = new Uint8Array(FRAME_HEADER_BYTES);
          encodeFrameHeader(again, 0, h);
          expect(toHex(again)).toBe(toHex(buf.subarray(0, FRAME_HEADER_BYTES)));
        }
      }),
      { numRuns: 5000 },
    );
    // and on headers that pass the magic/version check, to reach the deeper branches
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 28, maxLength: 40 }), fc.nat(5), (buf, t) => {
        buf[0] = 0x47;
        buf[1] = 0x10 | t;
        const status = decodeFrameHeader(buf, buf.length, h);
        expect(["ok", "bad-type", "bad-address"]).toContain(status);
      }),
      { numRuns: 5000 },
    );
  });
});
