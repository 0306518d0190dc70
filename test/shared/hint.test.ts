// The routing hint: golden vectors, round trips, every single-bit change rejected, key rotation,
// typed failure reasons, and agreement between node (nodeMac) and WebCrypto.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nodeMac } from "../../regional/common/hmac.ts";
import { HintVerifier, type MacSync, mintHint } from "../../shared/hint/codec.ts";
import { HINT_BYTES, HINT_CHARS, newHintFields } from "../../shared/hint/layout.ts";
import { importHmacKeys, verifyHintWebCrypto } from "../../shared/hint/webcrypto.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { ascii, committedVectors, fromHex, nodeHmacSha256, toHex } from "./helpers.ts";

const key = (fill: number): Uint8Array => new Uint8Array(32).fill(fill);
const ringText = (...ids: number[]): string =>
  ids.map((id) => `${id}:${Buffer.from(key(id + 1)).toString("base64")}`).join(",");
const macFor = (...ids: number[]): MacSync => nodeMac(parseKeyring(ringText(...ids), "GR_HINT_KEYS", 15));

const ids = fc.record({
  clusterId: fc.integer({ min: 0, max: 0xffff }),
  transceiverId: fc.integer({ min: 0, max: 0xffff }),
  random: fc.uint8Array({ minLength: 4, maxLength: 4 }),
});

describe("hint golden vectors", () => {
  const { hints } = committedVectors();
  it.each(hints)("$name", (v) => {
    const ring = parseKeyring(v.keyring, "GR_HINT_KEYS", 15);
    // mint reproduces the committed ufrag
    const ufrag = mintHint(
      { clusterId: v.clusterId, transceiverId: v.transceiverId, random: fromHex(v.randomHex) },
      nodeMac(ring),
    );
    expect(ufrag).toBe(v.ufrag);
    // an independent computation with node:crypto gives the same bytes
    const signed = fromHex(v.bytesHex).subarray(0, 9);
    expect(signed[0]).toBe(0x10 | ring.active.id);
    expect((signed[1]! << 8) | signed[2]!).toBe(v.clusterId);
    expect((signed[3]! << 8) | signed[4]!).toBe(v.transceiverId);
    expect(toHex(signed.subarray(5))).toBe(v.randomHex);
    const tag = nodeHmacSha256(ring.active.secret, signed).subarray(0, 9);
    expect(v.bytesHex).toBe(toHex(signed) + toHex(tag));
    expect(Buffer.from(fromHex(v.bytesHex)).toString("base64")).toBe(v.ufrag);
    // and it verifies
    const out = newHintFields();
    expect(new HintVerifier(nodeMac(ring)).verifyString(v.ufrag, out)).toBe("ok");
    expect(out).toEqual({
      version: 1,
      keyId: ring.active.id,
      clusterId: v.clusterId,
      transceiverId: v.transceiverId,
      random: Number.parseInt(v.randomHex, 16),
    });
  });
});

describe("mint → verify", () => {
  const mac = macFor(5, 2);
  const verifier = new HintVerifier(mac);

  it("round-trips every field; output is 24 ice-chars", () => {
    fc.assert(
      fc.property(ids, (input) => {
        const ufrag = mintHint(input, mac);
        expect(ufrag).toMatch(/^[A-Za-z0-9+/]{24}$/);
        const out = newHintFields();
        expect(verifier.verifyString(ufrag, out)).toBe("ok");
        expect(out.keyId).toBe(5);
        expect(out.clusterId).toBe(input.clusterId);
        expect(out.transceiverId).toBe(input.transceiverId);
        expect(out.random).toBe(Buffer.from(input.random).readUInt32BE(0));
      }),
    );
  });

  it("verifies a ufrag in place inside a larger datagram (offset, length)", () => {
    const ufrag = mintHint({ clusterId: 9, transceiverId: 10, random: Uint8Array.of(1, 2, 3, 4) }, mac);
    const dgram = ascii(`xxxxxxxx${ufrag}:abcd`);
    const out = newHintFields();
    expect(verifier.verify(dgram, 8, HINT_CHARS, out)).toBe("ok");
    expect(out.transceiverId).toBe(10);
    expect(verifier.verify(dgram, 7, HINT_CHARS, out)).not.toBe("ok"); // shifted window
    expect(verifier.verify(dgram, 8, HINT_CHARS + 1, out)).toBe("malformed");
    expect(verifier.verify(dgram, dgram.length - 10, HINT_CHARS, out)).toBe("malformed"); // past the end
  });

  it("rejects out-of-range inputs when minting", () => {
    const r = Uint8Array.of(1, 2, 3, 4);
    expect(() => mintHint({ clusterId: 0x10000, transceiverId: 1, random: r }, mac)).toThrow(RangeError);
    expect(() => mintHint({ clusterId: 1, transceiverId: -1, random: r }, mac)).toThrow(RangeError);
    expect(() => mintHint({ clusterId: 1.5, transceiverId: 1, random: r }, mac)).toThrow(RangeError);
    expect(() => mintHint({ clusterId: 1, transceiverId: 1, random: r.subarray(0, 3) }, mac)).toThrow(
      RangeError,
    );
    const noActive: MacSync = { activeKeyId: 3, sign: () => false };
    expect(() => mintHint({ clusterId: 1, transceiverId: 1, random: r }, noActive)).toThrow(
      /not in the keyring/,
    );
  });
});

describe("single-bit changes are rejected", () => {
  const mac = macFor(1);
  const verifier = new HintVerifier(mac);

  function checkAllBits(ufrag: string): void {
    const out = newHintFields();
    // every bit of the 18 decoded bytes, re-encoded
    const bytes = Buffer.from(ufrag, "base64");
    expect(bytes.length).toBe(HINT_BYTES);
    for (let bit = 0; bit < HINT_BYTES * 8; bit++) {
      const b = Buffer.from(bytes);
      b[bit >> 3]! ^= 0x80 >> (bit & 7);
      const status = verifier.verifyString(b.toString("base64"), out);
      expect(status, `byte bit ${bit}`).not.toBe("ok");
      // the version nibble, then the key id nibble, then the MAC decides
      if (bit < 4) expect(status).toBe("unsupported-version");
      else if (bit >= 8) expect(status).toBe("bad-mac");
    }
    // every bit of the 24 ASCII characters
    const text = ascii(ufrag);
    for (let bit = 0; bit < HINT_CHARS * 8; bit++) {
      const t = Uint8Array.from(text);
      t[bit >> 3]! ^= 0x80 >> (bit & 7);
      expect(verifier.verify(t, 0, HINT_CHARS, out), `char bit ${bit}`).not.toBe("ok");
    }
  }

  it("for the golden hint and 200 random ones (each of 144 + 192 bits)", () => {
    const { hints } = committedVectors();
    const golden = hints[0]!;
    const goldenVerifier = new HintVerifier(nodeMac(parseKeyring(golden.keyring, "k", 15)));
    const out = newHintFields();
    expect(goldenVerifier.verifyString(golden.ufrag, out)).toBe("ok");
    for (let bit = 0; bit < 192; bit++) {
      const t = ascii(golden.ufrag);
      t[bit >> 3]! ^= 0x80 >> (bit & 7);
      expect(goldenVerifier.verify(t, 0, 24, out)).not.toBe("ok");
    }
    fc.assert(
      fc.property(ids, (input) => checkAllBits(mintHint(input, mac))),
      { numRuns: 200 },
    );
  });
});

describe("typed failures", () => {
  const out = newHintFields();
  it("malformed: length and alphabet", () => {
    const v = new HintVerifier(macFor(1));
    const good = mintHint({ clusterId: 1, transceiverId: 1, random: Uint8Array.of(0, 0, 0, 0) }, macFor(1));
    expect(v.verifyString(good, out)).toBe("ok");
    expect(v.verifyString(good.slice(1), out)).toBe("malformed");
    expect(v.verifyString(`${good}A`, out)).toBe("malformed");
    expect(v.verifyString(`${good.slice(0, 23)}-`, out)).toBe("malformed");
    expect(v.verifyString(`${good.slice(0, 23)}=`, out)).toBe("malformed");
    expect(v.verifyString(`${good.slice(0, 23)}é`, out)).toBe("malformed");
    expect(v.verifyString(`${good.slice(0, 23)}\u0141`, out)).toBe("malformed"); // low byte 'A'
    expect(v.verifyString("", out)).toBe("malformed");
  });

  it("unsupported-version, unknown-key, bad-mac", () => {
    const v = new HintVerifier(macFor(1, 2));
    const b = Buffer.from(
      mintHint({ clusterId: 1, transceiverId: 1, random: Uint8Array.of(1, 1, 1, 1) }, macFor(1)),
      "base64",
    );
    const withVersion = Buffer.from(b);
    withVersion[0] = 0x21;
    expect(v.verifyString(withVersion.toString("base64"), out)).toBe("unsupported-version");
    const withKey = Buffer.from(b);
    withKey[0] = 0x13;
    expect(v.verifyString(withKey.toString("base64"), out)).toBe("unknown-key");
    withKey[0] = 0x12; // key 2 exists, but the MAC was made with key 1
    expect(v.verifyString(withKey.toString("base64"), out)).toBe("bad-mac");
  });

  it("a hint from another deployment's key is bad-mac", () => {
    const other = nodeMac(parseKeyring(`1:${Buffer.from(key(0x77)).toString("base64")}`, "k", 15));
    const ufrag = mintHint({ clusterId: 1, transceiverId: 1, random: Uint8Array.of(1, 2, 3, 4) }, other);
    expect(new HintVerifier(macFor(1)).verifyString(ufrag, out)).toBe("bad-mac");
  });
});

describe("key rotation", () => {
  it("old hints verify while both keys are listed, and fail with unknown-key after removal", () => {
    const before = macFor(3); // 3 active
    const during = macFor(3, 4); // 4 added, 3 still active
    const after = macFor(4, 3); // 4 active, 3 still accepted
    const done = macFor(4); // 3 removed
    const r = Uint8Array.of(9, 9, 9, 9);
    const old = mintHint({ clusterId: 1, transceiverId: 2, random: r }, before);
    const fresh = mintHint({ clusterId: 1, transceiverId: 2, random: r }, after);
    const out = newHintFields();
    expect(new HintVerifier(during).verifyString(old, out)).toBe("ok");
    expect(new HintVerifier(during).verifyString(fresh, out)).toBe("ok");
    expect(new HintVerifier(after).verifyString(old, out)).toBe("ok");
    expect(out.keyId).toBe(3);
    expect(new HintVerifier(done).verifyString(fresh, out)).toBe("ok");
    expect(new HintVerifier(done).verifyString(old, out)).toBe("unknown-key");
    expect(new HintVerifier(before).verifyString(fresh, out)).toBe("unknown-key");
  });
});

describe("verify never throws", () => {
  const v = new HintVerifier(macFor(0, 1, 15));
  it("on arbitrary bytes, offsets and lengths", () => {
    const out = newHintFields();
    const statuses = new Set(["ok", "malformed", "unsupported-version", "unknown-key", "bad-mac"]);
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.integer({ min: -30, max: 80 }),
        fc.integer({ min: -30, max: 80 }),
        (buf, off, len) => {
          expect(statuses.has(v.verify(buf, off, len, out))).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("on arbitrary 24-character strings over the alphabet (never ok by chance)", () => {
    const out = newHintFields();
    const ch = fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
    fc.assert(
      fc.property(fc.array(ch, { minLength: 24, maxLength: 24 }), (chars) => {
        expect(v.verifyString(chars.join(""), out)).not.toBe("ok");
      }),
      { numRuns: 2000 },
    );
  });
});

describe("WebCrypto agrees with node", () => {
  const ring = parseKeyring(ringText(6, 0), "GR_HINT_KEYS", 15);
  const mac = nodeMac(ring);
  const verifier = new HintVerifier(mac);

  it("on valid, tampered and foreign hints", async () => {
    const keys = await importHmacKeys(ring.keys);
    await fc.assert(
      fc.asyncProperty(ids, fc.nat(HINT_BYTES * 8 + 1), fc.boolean(), async (input, bit, tamper) => {
        const b = Buffer.from(mintHint(input, mac), "base64");
        if (tamper && bit < HINT_BYTES * 8) b[bit >> 3]! ^= 0x80 >> (bit & 7);
        const ufrag = b.toString("base64");
        const out = newHintFields();
        const node = verifier.verifyString(ufrag, out);
        const web = await verifyHintWebCrypto(ufrag, keys);
        expect(web.ok ? "ok" : web.reason).toBe(node);
        if (web.ok) expect(web.hint).toEqual(out);
      }),
      { numRuns: 300 },
    );
  });

  it("on the golden vectors and malformed input", async () => {
    for (const h of committedVectors().hints) {
      const keys = await importHmacKeys(parseKeyring(h.keyring, "k", 15).keys);
      const r = await verifyHintWebCrypto(h.ufrag, keys);
      expect(r.ok && [r.hint.clusterId, r.hint.transceiverId]).toEqual([h.clusterId, h.transceiverId]);
    }
    const keys = await importHmacKeys(ring.keys);
    expect(await verifyHintWebCrypto("short", keys)).toEqual({ ok: false, reason: "malformed" });
    expect(await verifyHintWebCrypto("-".repeat(24), keys)).toEqual({ ok: false, reason: "malformed" });
  });
});
