// RFC 4571 framing: the golden vector, every way a stream can be cut into chunks, and the hostile
// cases (zero lengths, oversized lengths, garbage) as property tests that the reader never throws
// and never holds more than its limit.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { frame, type ReadResult, Rfc4571Reader, writeLength } from "../../shared/tcp/rfc4571.ts";
import { committedVectors, fromHex, toHex } from "../shared/helpers.ts";

/** Feeds `chunks` and collects every result but "more" (packets copied out). */
function readAll(r: Rfc4571Reader, chunks: Uint8Array[]): (string | Uint8Array)[] {
  const out: (string | Uint8Array)[] = [];
  for (const c of chunks) {
    r.push(c);
    for (let x: ReadResult = r.next(); x.kind !== "more"; x = r.next()) {
      out.push(x.kind === "packet" ? x.bytes.slice() : x.kind);
      if (x.kind === "oversized") return out;
    }
  }
  return out;
}

/** Cuts `bytes` at the given (sorted, deduplicated) offsets. */
function cut(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const points = [...new Set(at.map((a) => a % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  return out;
}

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
};

describe("RFC 4571 golden vector", () => {
  it("frames the STUN vector with its 2-byte length and reads it back", () => {
    const v = committedVectors().tcpFraming;
    expect(toHex(frame(fromHex(v.packetHex)))).toBe(v.framedHex);
    expect(v.framedHex.slice(0, 4)).toBe((v.packetHex.length / 2).toString(16).padStart(4, "0"));
    const r = new Rfc4571Reader(1500);
    expect(readAll(r, [fromHex(v.framedHex)]).map((p) => toHex(p as Uint8Array))).toEqual([v.packetHex]);
  });

  it("writeLength is big-endian", () => {
    const b = new Uint8Array(3);
    writeLength(b, 1, 0x1234);
    expect([...b]).toEqual([0, 0x12, 0x34]);
  });
});

describe("Rfc4571Reader", () => {
  const packets = fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), { maxLength: 12 });

  it("gives back every packet, whatever the chunk boundaries", () => {
    fc.assert(
      fc.property(packets, fc.array(fc.nat(5000), { maxLength: 30 }), (ps, at) => {
        const stream = concat(ps.map(frame));
        const got = readAll(new Rfc4571Reader(300), cut(stream, at));
        expect(got.map((p) => toHex(p as Uint8Array))).toEqual(ps.map(toHex));
      }),
    );
  });

  it("one byte at a time", () => {
    const ps = [Uint8Array.of(1), Uint8Array.of(2, 3, 4), new Uint8Array(200).fill(9)];
    const stream = concat(ps.map(frame));
    const chunks = [...stream].map((b) => Uint8Array.of(b));
    expect(readAll(new Rfc4571Reader(200), chunks).map((p) => toHex(p as Uint8Array))).toEqual(ps.map(toHex));
  });

  it("a packet inside one chunk is a view of it (no copy)", () => {
    const stream = frame(Uint8Array.of(5, 6, 7));
    const r = new Rfc4571Reader(10);
    r.push(stream);
    const x = r.next();
    expect(x.kind).toBe("packet");
    expect((x as { bytes: Uint8Array }).bytes.buffer).toBe(stream.buffer);
  });

  it("zero-length packets are reported and skipped; the stream goes on", () => {
    const stream = concat([Uint8Array.of(0, 0), frame(Uint8Array.of(1)), Uint8Array.of(0, 0)]);
    expect(readAll(new Rfc4571Reader(10), cut(stream, [1, 3]))).toEqual(["empty", Uint8Array.of(1), "empty"]);
  });

  it("an oversized length stops the reader for good (the stream cannot resynchronise)", () => {
    const r = new Rfc4571Reader(1000);
    r.push(Uint8Array.of(0x03, 0xe9, 1, 2, 3));
    expect(r.next()).toEqual({ kind: "oversized", length: 1001 });
    r.push(frame(Uint8Array.of(1)));
    expect(r.next().kind).toBe("more");
    expect(r.buffered).toBe(0);
  });

  it("an HTTP or TLS client's first bytes read as an oversized length", () => {
    for (const text of ["GET / HTTP/1.1\r\n", "\x16\x03\x01\x02\x00"]) {
      const r = new Rfc4571Reader(1500);
      r.push(new TextEncoder().encode(text));
      expect(r.next().kind).toBe("oversized");
    }
  });

  it("never throws and never holds more than maxPacket bytes, on any input", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2000 }),
        fc.array(fc.uint8Array({ maxLength: 3000 }), { maxLength: 20 }),
        (max, chunks) => {
          const r = new Rfc4571Reader(max);
          for (const c of chunks) {
            r.push(c);
            for (let i = 0; i < 10_000; i++) {
              const x = r.next();
              if (x.kind === "packet") expect(x.bytes.length).toBeLessThanOrEqual(max);
              if (x.kind === "more") break;
            }
            expect(r.buffered).toBeLessThanOrEqual(max);
          }
        },
      ),
    );
  });

  it("refuses a limit outside 1..65535", () => {
    expect(() => new Rfc4571Reader(0)).toThrow(RangeError);
    expect(() => new Rfc4571Reader(65536)).toThrow(RangeError);
  });
});
