// base64 (both alphabets), CRC-32, constant-time compare and keyrings.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asciiBytes, decodeBase64, decodeBase64Into, encodeBase64 } from "../../shared/bytes/base64.ts";
import { constantTimeEqual } from "../../shared/bytes/constant-time.ts";
import { crc32 } from "../../shared/bytes/crc32.ts";
import { formatKeyring, KeyringError, parseKeyring } from "../../shared/keys.ts";
import { ascii } from "./helpers.ts";

const multipleOf3 = fc.nat(40).chain((n) => fc.uint8Array({ minLength: n * 3, maxLength: n * 3 }));

describe("base64", () => {
  it("encodes like Buffer (standard and base64url, unpadded) and decodes back", () => {
    fc.assert(
      fc.property(multipleOf3, (bytes) => {
        const std = encodeBase64(bytes, "standard");
        const url = encodeBase64(bytes, "url");
        expect(std).toBe(Buffer.from(bytes).toString("base64"));
        expect(url).toBe(Buffer.from(bytes).toString("base64url"));
        expect(decodeBase64(std, "standard")).toEqual(bytes);
        expect(decodeBase64(url, "url")).toEqual(bytes);
      }),
    );
  });

  it("rejects characters of the other alphabet, padding, non-ASCII and bad lengths", () => {
    expect(decodeBase64("ab+/", "url")).toBeNull();
    expect(decodeBase64("ab-_", "standard")).toBeNull();
    expect(decodeBase64("ab==", "standard")).toBeNull();
    expect(decodeBase64("abé=", "standard")).toBeNull();
    expect(decodeBase64("abc", "standard")).toBeNull();
    expect(decodeBase64("abcde", "standard")).toBeNull();
    expect(decodeBase64("", "standard")).toEqual(new Uint8Array(0));
    expect(() => encodeBase64(new Uint8Array(4), "standard")).toThrow(RangeError);
    // found by the property below: a negative length used to "decode" 0 bytes instead of failing
    expect(decodeBase64Into(new Uint8Array(8), 4, -4, new Uint8Array(3), "standard")).toBe(-1);
  });

  it("decodeBase64Into never throws and never writes outside dst, for any input and window", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.integer({ min: -4, max: 70 }),
        fc.integer({ min: -4, max: 70 }),
        fc.nat(40),
        (src, off, len, dstLen) => {
          const dst = new Uint8Array(dstLen + 8).fill(0xaa);
          const view = dst.subarray(4, 4 + dstLen);
          const n = decodeBase64Into(src, off, len, view, "standard");
          expect(n === -1 || (n >= 0 && n <= dstLen && n === (len / 4) * 3)).toBe(true);
          for (const i of [0, 1, 2, 3, dstLen + 4, dstLen + 5, dstLen + 6, dstLen + 7])
            expect(dst[i]).toBe(0xaa);
        },
      ),
    );
  });

  it("every string over the alphabet decodes and re-encodes to itself (no non-canonical forms)", () => {
    const ch = fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
    fc.assert(
      fc.property(fc.array(ch, { minLength: 24, maxLength: 24 }), (chars) => {
        const s = chars.join("");
        const bytes = decodeBase64(s, "standard");
        expect(bytes).not.toBeNull();
        expect(encodeBase64(bytes!, "standard")).toBe(s);
      }),
    );
  });

  it("asciiBytes keeps 7 bits", () => {
    expect([...asciiBytes("Az~")]).toEqual([0x41, 0x7a, 0x7e]);
  });
});

describe("crc32", () => {
  it("matches the IEEE check value and zlib", async () => {
    expect(crc32(ascii("123456789"), 0, 9)).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0), 0, 0)).toBe(0);
    const { crc32: zlibCrc } = await import("node:zlib");
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(10), (data, pre) => {
        const buf = new Uint8Array(pre + data.length);
        buf.set(data, pre);
        expect(crc32(buf, pre, data.length)).toBe(zlibCrc(data));
      }),
    );
  });
});

describe("constantTimeEqual", () => {
  it("compares windows and rejects out-of-range windows", () => {
    const a = Uint8Array.of(1, 2, 3, 4, 5);
    const b = Uint8Array.of(9, 2, 3, 4, 9);
    expect(constantTimeEqual(a, 1, b, 1, 3)).toBe(true);
    expect(constantTimeEqual(a, 0, b, 0, 3)).toBe(false);
    expect(constantTimeEqual(a, 2, b, 2, 4)).toBe(false); // past the end
    expect(constantTimeEqual(a, -1, b, 0, 1)).toBe(false);
    expect(constantTimeEqual(a, 0, b, 0, 0)).toBe(true);
  });

  it("agrees with a plain comparison", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 20 }), fc.uint8Array({ maxLength: 20 }), (a, b) => {
        const n = Math.min(a.length, b.length);
        expect(constantTimeEqual(a, 0, b, 0, n)).toBe(
          Buffer.compare(a.subarray(0, n), b.subarray(0, n)) === 0,
        );
      }),
    );
  });
});

describe("parseKeyring", () => {
  const secret = (fill: number): string => Buffer.from(new Uint8Array(32).fill(fill)).toString("base64");

  it("reads several keys, the first active, and formats back", () => {
    const text = `4:${secret(4)},3:${secret(3)}`;
    const ring = parseKeyring(text, "GR_HINT_KEYS", 15);
    expect(ring.active.id).toBe(4);
    expect(ring.keys.map((k) => k.id)).toEqual([4, 3]);
    expect(ring.keys[1]!.secret).toEqual(new Uint8Array(32).fill(3));
    expect(formatKeyring(ring.keys)).toBe(text);
    // whitespace and base64url are tolerated
    const url = Buffer.from(new Uint8Array(33).fill(0xfb)).toString("base64url");
    expect(parseKeyring(` 1 : ${url} `, "K", 15).active.secret).toEqual(new Uint8Array(33).fill(0xfb));
  });

  it.each([
    [undefined, /GR_HINT_KEYS: no keys configured/],
    ["", /no keys configured/],
    ["abc", /GR_HINT_KEYS\[0\]: expected "<id>:<base64 secret>"/],
    [`16:${"A".repeat(44)}`, /GR_HINT_KEYS\[0\]: key id 16 is over the maximum 15/],
    [`1:${"A".repeat(44)},1:${"B".repeat(44)}`, /GR_HINT_KEYS\[1\]: key id 1 is repeated/],
    ["1:!!!!", /GR_HINT_KEYS\[0\]: secret is not base64/],
    ["1:AAAA", /GR_HINT_KEYS\[0\]: secret has 3 bytes, at least 32 are required/],
  ])("rejects %j with a message naming the variable", (text, message) => {
    expect(() => parseKeyring(text, "GR_HINT_KEYS", 15)).toThrow(KeyringError);
    expect(() => parseKeyring(text, "GR_HINT_KEYS", 15)).toThrow(message);
  });

  it("never puts the secret into an error message", () => {
    const s = Buffer.from(new Uint8Array(16).fill(0x5a)).toString("base64");
    try {
      parseKeyring(`1:${s}`, "K", 15);
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).not.toContain(s);
    }
  });
});
