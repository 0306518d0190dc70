// The pure SHA-256 / HMAC-SHA256 used on the relay hot path, against FIPS 180-4 and RFC 4231
// vectors and against node:crypto on random inputs.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hmacSha1, nodeMac } from "../../regional/common/hmac.ts";
import { HmacSha256, sha256 } from "../../shared/bytes/sha256.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { ascii, fromHex, nodeHmacSha1, nodeHmacSha256, toHex } from "./helpers.ts";

describe("sha256", () => {
  it("matches the FIPS 180-4 examples", () => {
    expect(toHex(sha256(ascii("abc")))).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(toHex(sha256(new Uint8Array(0)))).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    expect(toHex(sha256(ascii("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")))).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
    expect(toHex(sha256(new Uint8Array(1_000_000).fill(0x61)))).toBe(
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
    );
  });

  it("agrees with node:crypto at every length around the block and padding edges", () => {
    for (let n = 0; n <= 200; n++) {
      const data = Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) & 255);
      expect(toHex(sha256(data))).toBe(createHash("sha256").update(data).digest("hex"));
    }
  });
});

describe("HmacSha256", () => {
  // RFC 4231 §4.2-4.8 (test case 5 truncates; it is checked on the first 16 bytes).
  const cases: [key: string, data: string, mac: string][] = [
    [
      "0b".repeat(20),
      toHex(ascii("Hi There")),
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
    ],
    [
      toHex(ascii("Jefe")),
      toHex(ascii("what do ya want for nothing?")),
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    ],
    ["aa".repeat(20), "dd".repeat(50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"],
    [
      "0102030405060708090a0b0c0d0e0f10111213141516171819",
      "cd".repeat(50),
      "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
    ],
    [
      "aa".repeat(131),
      toHex(ascii("Test Using Larger Than Block-Size Key - Hash Key First")),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
    ],
    [
      "aa".repeat(131),
      toHex(
        ascii(
          "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.",
        ),
      ),
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
    ],
  ];
  it.each(cases)("matches RFC 4231 (key %s…)", (key, data, mac) => {
    const out = new Uint8Array(32);
    new HmacSha256(fromHex(key)).sign(fromHex(data), out);
    expect(toHex(out)).toBe(mac);
  });

  it("RFC 4231 test case 5 (truncated to 128 bits)", () => {
    const out = new Uint8Array(32);
    new HmacSha256(fromHex("0c".repeat(20))).sign(ascii("Test With Truncation"), out);
    expect(toHex(out.subarray(0, 16))).toBe("a3b6167473100ee06e0c796c2955552b");
  });

  it("agrees with node:crypto for random keys (0-200 bytes) and messages (0-300 bytes)", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.nat(7),
        (key, data, pad) => {
          // signInto at an offset and into an offset of a larger buffer
          const src = new Uint8Array(pad + data.length + 3);
          src.set(data, pad);
          const out = new Uint8Array(32 + pad);
          const h = new HmacSha256(key);
          h.signInto(src, pad, data.length, out, pad);
          expect(toHex(out.subarray(pad))).toBe(toHex(nodeHmacSha256(key, data)));
          // state is reset between calls: a second call gives the same tag
          const again = new Uint8Array(32);
          h.sign(data, again);
          expect(toHex(again)).toBe(toHex(out.subarray(pad)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("interleaved keys do not disturb each other (shared scratch buffers)", () => {
    const a = new HmacSha256(ascii("key-a-key-a-key-a-key-a-key-a-key-a"));
    const b = new HmacSha256(ascii("key-b"));
    const outA = new Uint8Array(32);
    const outB = new Uint8Array(32);
    for (let i = 0; i < 10; i++) {
      const d = Uint8Array.of(i, i + 1, i + 2);
      a.sign(d, outA);
      b.sign(d, outB);
      expect(toHex(outA)).toBe(toHex(nodeHmacSha256(ascii("key-a-key-a-key-a-key-a-key-a-key-a"), d)));
      expect(toHex(outB)).toBe(toHex(nodeHmacSha256(ascii("key-b"), d)));
    }
  });
});

describe("nodeMac", () => {
  const k1 = Uint8Array.from({ length: 32 }, (_, i) => i);
  const k7 = Uint8Array.from({ length: 48 }, (_, i) => 255 - i);
  const ring = parseKeyring(
    `7:${Buffer.from(k7).toString("base64")},1:${Buffer.from(k1).toString("base64")}`,
    "TEST_KEYS",
    15,
  );
  const mac = nodeMac(ring);

  it("signs with every key in the ring and reports the first as active", () => {
    expect(mac.activeKeyId).toBe(7);
    const out = new Uint8Array(32);
    const data = ascii("123456789");
    expect(mac.sign(7, data, out)).toBe(true);
    expect(toHex(out)).toBe(toHex(nodeHmacSha256(k7, data)));
    expect(mac.sign(1, data, out)).toBe(true);
    expect(toHex(out)).toBe(toHex(nodeHmacSha256(k1, data)));
  });

  it("returns false, writing nothing, for a key id not in the ring", () => {
    const out = new Uint8Array(32).fill(9);
    for (const id of [0, 2, 6, 8, 15, 16, -1, 1.5, Number.NaN]) {
      expect(mac.sign(id, ascii("x"), out)).toBe(false);
    }
    expect(out.every((b) => b === 9)).toBe(true);
  });

  it("hmacSha1 matches node:crypto (STUN MESSAGE-INTEGRITY)", () => {
    const key = ascii("VOkJxbRl1RmTxUk/WvJxBt");
    expect(toHex(hmacSha1(key, ascii("abc")))).toBe(toHex(nodeHmacSha1(key, ascii("abc"))));
  });
});
