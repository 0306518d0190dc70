// Call id: golden vector, round trips, tamper rejection, rotation, and WebCrypto agreement.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nodeMac } from "../../regional/common/hmac.ts";
import {
  CALL_ID_LENGTH,
  type CallIdResult,
  mintCallId,
  verifyCallId,
  verifyCallIdWebCrypto,
} from "../../shared/callid/callid.ts";
import { importHmacKeys } from "../../shared/hint/webcrypto.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { committedVectors, fromHex, nodeHmacSha256, toHex } from "./helpers.ts";

const ringText = (...ids: number[]): string =>
  ids.map((id) => `${id}:${Buffer.from(new Uint8Array(32).fill(0x30 + id)).toString("base64")}`).join(",");
const ring = parseKeyring(ringText(2, 9), "GR_CALL_ID_KEYS", 15);
const mac = nodeMac(ring);
const input = fc.record({
  clusterId: fc.nat(0xffff),
  transceiverId: fc.nat(0xffff),
  random: fc.uint8Array({ minLength: 15, maxLength: 15 }),
});
const reasonOf = (r: CallIdResult): string => (r.ok ? "ok" : r.reason);

describe("call id golden vector", () => {
  const v = committedVectors().callId;
  const r = parseKeyring(v.keyring, "GR_CALL_ID_KEYS", 15);
  it("mints the committed id, equal to an independent node:crypto computation", () => {
    expect(mintCallId(v.clusterId, v.transceiverId, fromHex(v.randomHex), nodeMac(r))).toBe(v.callId);
    const signed = fromHex(v.bytesHex).subarray(0, 20);
    expect(toHex(signed)).toBe(
      `${(0x10 | r.active.id).toString(16)}${v.clusterId.toString(16).padStart(4, "0")}${v.transceiverId.toString(16).padStart(4, "0")}${v.randomHex}`,
    );
    expect(v.bytesHex).toBe(toHex(signed) + toHex(nodeHmacSha256(r.active.secret, signed).subarray(0, 16)));
    expect(v.callId).toBe(`rtc_${Buffer.from(fromHex(v.bytesHex)).toString("base64url")}`);
  });
  it("verifies with node and WebCrypto", async () => {
    const expected = {
      ok: true,
      callId: { keyId: r.active.id, clusterId: v.clusterId, transceiverId: v.transceiverId },
    };
    expect(verifyCallId(v.callId, nodeMac(r))).toEqual(expected);
    expect(await verifyCallIdWebCrypto(v.callId, await importHmacKeys(r.keys))).toEqual(expected);
  });
});

describe("mint → verify", () => {
  it("round-trips and is URL-safe, 52 characters", () => {
    fc.assert(
      fc.property(input, ({ clusterId, transceiverId, random }) => {
        const id = mintCallId(clusterId, transceiverId, random, mac);
        expect(id).toMatch(/^rtc_[A-Za-z0-9_-]{48}$/);
        expect(id.length).toBe(CALL_ID_LENGTH);
        expect(encodeURIComponent(id)).toBe(id);
        expect(verifyCallId(id, mac)).toEqual({ ok: true, callId: { keyId: 2, clusterId, transceiverId } });
      }),
    );
  });

  it("rejects bad inputs when minting", () => {
    const r = new Uint8Array(15);
    expect(() => mintCallId(0x10000, 1, r, mac)).toThrow(/cluster id out of range/);
    expect(() => mintCallId(1, -1, r, mac)).toThrow(/transceiver id out of range/);
    expect(() => mintCallId(1, 1, new Uint8Array(14), mac)).toThrow(/random needs 15 bytes/);
  });
});

describe("tampering", () => {
  it("any change of one character is rejected", () => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    fc.assert(
      fc.property(
        input,
        fc.nat(CALL_ID_LENGTH - 1),
        fc.nat(63),
        ({ clusterId, transceiverId, random }, pos, c) => {
          const id = mintCallId(clusterId, transceiverId, random, mac);
          const ch = alphabet[c]!;
          fc.pre(id[pos] !== ch);
          const tampered = id.slice(0, pos) + ch + id.slice(pos + 1);
          expect(verifyCallId(tampered, mac).ok).toBe(false);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("every single-bit change of the 36 bytes is rejected with a typed reason", () => {
    const id = mintCallId(1, 2, new Uint8Array(15).fill(3), mac);
    const bytes = Buffer.from(id.slice(4), "base64url");
    for (let bit = 0; bit < 36 * 8; bit++) {
      const b = Buffer.from(bytes);
      b[bit >> 3]! ^= 0x80 >> (bit & 7);
      const reason = reasonOf(verifyCallId(`rtc_${b.toString("base64url")}`, mac));
      if (bit < 4) expect(reason).toBe("unsupported-version");
      else if (bit < 8) expect(["unknown-key", "bad-mac"]).toContain(reason);
      else expect(reason).toBe("bad-mac");
    }
  });

  it.each([
    ["empty", ""],
    ["prefix", "rtx_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
    ["length", "rtc_AAAA"],
    ["standard alphabet", `rtc_${"+".repeat(48)}`],
    ["non-ASCII", `rtc_${"é".repeat(48)}`],
  ])("malformed: %s", (_n, text) => expect(reasonOf(verifyCallId(text, mac))).toBe("malformed"));

  it("unknown key id and foreign key", () => {
    const other = nodeMac(parseKeyring(ringText(4), "k", 15));
    expect(reasonOf(verifyCallId(mintCallId(1, 1, new Uint8Array(15), other), mac))).toBe("unknown-key");
    const sameIdOtherSecret = nodeMac(
      parseKeyring(`2:${Buffer.from(new Uint8Array(32).fill(0xee)).toString("base64")}`, "k", 15),
    );
    expect(reasonOf(verifyCallId(mintCallId(1, 1, new Uint8Array(15), sameIdOtherSecret), mac))).toBe(
      "bad-mac",
    );
  });

  it("hint keys do not verify call ids (separate keyrings)", () => {
    const hintMac = nodeMac(
      parseKeyring(`2:${Buffer.from(new Uint8Array(32).fill(1)).toString("base64")}`, "k", 15),
    );
    expect(reasonOf(verifyCallId(mintCallId(1, 1, new Uint8Array(15), hintMac), mac))).toBe("bad-mac");
  });

  it("verify never throws on arbitrary strings", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: "binary" }),
          fc.string().map((s) => `rtc_${s}`),
        ),
        (s) => {
          expect(["malformed", "unsupported-version", "unknown-key", "bad-mac"]).toContain(
            reasonOf(verifyCallId(s, mac)),
          );
        },
      ),
    );
  });
});

describe("WebCrypto agrees with node", () => {
  it("on valid and tampered ids", async () => {
    const keys = await importHmacKeys(ring.keys);
    await fc.assert(
      fc.asyncProperty(
        input,
        fc.nat(36 * 8),
        fc.boolean(),
        async ({ clusterId, transceiverId, random }, bit, tamper) => {
          const b = Buffer.from(mintCallId(clusterId, transceiverId, random, mac).slice(4), "base64url");
          if (tamper && bit < 36 * 8) b[bit >> 3]! ^= 0x80 >> (bit & 7);
          const id = `rtc_${b.toString("base64url")}`;
          expect(await verifyCallIdWebCrypto(id, keys)).toEqual(verifyCallId(id, mac));
        },
      ),
      { numRuns: 300 },
    );
  });
});
