// STUN reader and RFC 7983 classifier: table-driven edge cases and properties (never throws,
// offsets in bounds, encode → read round trips).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hmacSha1 } from "../../regional/common/hmac.ts";
import { crc32 } from "../../shared/bytes/crc32.ts";
import {
  classifyDatagram,
  DATAGRAM_KIND_NAMES,
  DatagramKind,
  stunClassAt,
} from "../../shared/stun/classify.ts";
import { verifyMessageIntegrity } from "../../shared/stun/integrity.ts";
import {
  isBindingRequest,
  isStun,
  newStunView,
  readStun,
  STUN_MAX_USERNAME_BYTES,
  StunAttr,
  type StunStatus,
  type StunView,
} from "../../shared/stun/reader.ts";
import { encodeBindingRequest, encodeStunMessage, type StunAttribute } from "../../shared/stun/writer.ts";
import { ascii } from "./helpers.ts";

const TXID = Uint8Array.from({ length: 12 }, (_, i) => i + 1);
const attr = (type: number, value: Uint8Array | number[]): StunAttribute => ({
  type,
  value: value instanceof Uint8Array ? value : Uint8Array.from(value),
});
const msg = (attributes: StunAttribute[], opts: { fingerprint?: boolean; type?: number } = {}): Uint8Array =>
  encodeStunMessage({
    type: opts.type ?? 0x0001,
    transactionId: TXID,
    attributes,
    fingerprint: opts.fingerprint,
  });

/** Sets the header length to the body size (after hand edits). */
function fixLength(m: Uint8Array): Uint8Array {
  const n = m.length - 20;
  m[2] = n >> 8;
  m[3] = n & 255;
  return m;
}
/** Appends a correct FINGERPRINT to a hand-built message. */
function withFingerprint(m: Uint8Array): Uint8Array {
  const out = new Uint8Array(m.length + 8);
  out.set(m);
  fixLength(out);
  out.set([0x80, 0x28, 0, 4], m.length);
  new DataView(out.buffer).setUint32(m.length + 4, (crc32(out, 0, m.length) ^ 0x5354554e) >>> 0);
  return out;
}

function read(m: Uint8Array, len = m.length): { status: StunStatus; view: StunView } {
  const view = newStunView();
  return { status: readStun(m, len, view), view };
}

describe("readStun edge cases", () => {
  const base = msg([attr(StunAttr.username, ascii("abcd:efgh"))], { fingerprint: true });

  it.each<[string, () => Uint8Array, number | undefined, StunStatus]>([
    ["empty", () => new Uint8Array(0), undefined, "not-stun"],
    ["short STUN-looking", () => base.subarray(0, 12), undefined, "truncated"],
    ["short non-STUN", () => Uint8Array.of(0x80, 1, 2), undefined, "not-stun"],
    ["top bits set", () => Uint8Array.from(base).fill(0x41, 0, 1), undefined, "not-stun"],
    ["wrong cookie", () => Uint8Array.from(base).fill(0, 4, 5), undefined, "not-stun"],
    ["length not a multiple of 4", () => Uint8Array.from(base).fill(0x21, 3, 4), undefined, "bad-length"],
    ["datagram shorter than the header says", () => base, base.length - 4, "truncated"],
    ["trailing bytes after the message", () => Uint8Array.of(...base, 0, 0, 0, 0), undefined, "bad-length"],
    [
      "attribute overruns the message",
      () => {
        const m = Uint8Array.from(base);
        m[22] = 0x01; // USERNAME length 0x0109
        return m;
      },
      undefined,
      "bad-attribute",
    ],
    [
      "header-only attribute cut",
      () => fixLength(Uint8Array.of(...msg([]), 0x00, 0x06)),
      undefined,
      "bad-length",
    ],
    ["empty USERNAME", () => msg([attr(StunAttr.username, [])]), undefined, "bad-username"],
    [
      "USERNAME over 513 bytes",
      () => msg([attr(StunAttr.username, new Uint8Array(STUN_MAX_USERNAME_BYTES + 1).fill(0x61))]),
      undefined,
      "bad-username",
    ],
    [
      "MESSAGE-INTEGRITY of 16 bytes",
      () => msg([attr(StunAttr.messageIntegrity, new Uint8Array(16))]),
      undefined,
      "bad-attribute",
    ],
    [
      "FINGERPRINT of 8 bytes",
      () => msg([attr(StunAttr.fingerprint, new Uint8Array(8))]),
      undefined,
      "bad-attribute",
    ],
    [
      "attribute after FINGERPRINT",
      () => fixLength(Uint8Array.of(...base, 0x80, 0x22, 0, 0)),
      undefined,
      "attribute-after-fingerprint",
    ],
    [
      "wrong FINGERPRINT",
      () => {
        const m = Uint8Array.from(base);
        m[m.length - 1]! ^= 1;
        return m;
      },
      undefined,
      "bad-fingerprint",
    ],
  ])("%s → %s", (_name, make, len, expected) => {
    const m = make();
    expect(read(m, len ?? m.length).status).toBe(expected);
    if (expected !== "ok" && len === undefined) {
      // isStun is the cheap check: it must never accept more than readStun for header problems
      if (expected === "not-stun" || expected === "bad-length") expect(isStun(m, m.length)).toBe(false);
    }
  });

  it("a len beyond the buffer is clamped, never read past", () => {
    expect(read(base, base.length + 100).status).toBe("ok");
    expect(isStun(base, base.length + 1)).toBe(false);
  });

  it("USERNAME of exactly 513 bytes and an empty body are fine", () => {
    expect(read(msg([attr(StunAttr.username, new Uint8Array(513).fill(0x61))])).status).toBe("ok");
    const { status, view } = read(msg([]));
    expect(status).toBe("ok");
    expect(view.usernameOffset).toBe(-1);
  });

  it("only the first USERNAME counts; USERNAME without ':' has colonOffset -1", () => {
    const { status, view } = read(
      msg([attr(StunAttr.username, ascii("first")), attr(StunAttr.username, ascii("sec:ond"))]),
    );
    expect(status).toBe("ok");
    expect(view.usernameLength).toBe(5);
    expect(view.colonOffset).toBe(-1);
  });

  it("attributes after MESSAGE-INTEGRITY (other than FINGERPRINT) are ignored (RFC 8489 §14.5)", () => {
    const m = msg(
      [
        attr(StunAttr.messageIntegrity, new Uint8Array(20)),
        attr(StunAttr.username, ascii("forged:route")),
        attr(StunAttr.useCandidate, []),
        attr(StunAttr.messageIntegrity, new Uint8Array(20)),
      ],
      { fingerprint: true },
    );
    const { status, view } = read(m);
    expect(status).toBe("ok");
    expect(view.usernameOffset).toBe(-1);
    expect(view.useCandidate).toBe(false);
    expect(view.messageIntegrityOffset).toBe(20);
    expect(view.hasFingerprint).toBe(true);
    // but they must still be well-formed
    const bad = Uint8Array.from(m);
    bad[20 + 24 + 3] = 0xff; // USERNAME length overruns
    expect(read(bad).status).toBe("bad-attribute");
  });

  it("the view is reset on each read (no stale offsets after a failure)", () => {
    const view = newStunView();
    const ok = encodeBindingRequest({ transactionId: TXID, username: "aaaa:bbbb", useCandidate: true });
    expect(readStun(ok, ok.length, view)).toBe("ok");
    expect(view.usernameOffset).toBeGreaterThan(0);
    expect(readStun(new Uint8Array(4), 4, view)).toBe("truncated");
    expect([
      view.usernameOffset,
      view.colonOffset,
      view.messageIntegrityOffset,
      view.fingerprintOffset,
    ]).toEqual([-1, -1, -1, -1]);
    expect(view.useCandidate || view.hasFingerprint).toBe(false);
  });
});

describe("message type", () => {
  it("decodes class and method from the interleaved bits, for every class and 12-bit method", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 0xfff }), (cls, method) => {
        const type =
          (method & 0xf) |
          ((method & 0x70) << 1) |
          ((method & 0xf80) << 2) |
          ((cls & 1) << 4) |
          ((cls & 2) << 7);
        const { status, view } = read(msg([], { type }));
        expect(status).toBe("ok");
        expect([view.messageClass, view.method]).toEqual([cls, method]);
        expect(isBindingRequest(view)).toBe(cls === 0 && method === 1);
      }),
    );
  });
  it("known types: 0x0001 request, 0x0011 indication, 0x0101 success, 0x0111 error", () => {
    for (const [type, cls] of [
      [0x0001, 0],
      [0x0011, 1],
      [0x0101, 2],
      [0x0111, 3],
    ] as const) {
      expect(read(msg([], { type })).view.messageClass).toBe(cls);
    }
  });
});

describe("encodeBindingRequest → readStun", () => {
  const ufragChar = fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
  const ufrag = (min: number, max: number) =>
    fc.array(ufragChar, { minLength: min, maxLength: max }).map((a) => a.join(""));

  it("round-trips USERNAME, split, USE-CANDIDATE, MESSAGE-INTEGRITY and FINGERPRINT", () => {
    fc.assert(
      fc.property(
        ufrag(4, 32),
        ufrag(4, 256),
        ufrag(22, 64),
        fc.uint8Array({ minLength: 12, maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        (server, client, pwd, txid, useCandidate, controlling) => {
          const m = encodeBindingRequest({
            transactionId: txid,
            username: `${server}:${client}`,
            password: pwd,
            hmacSha1,
            useCandidate,
            controlling,
          });
          const { status, view } = read(m);
          expect(status).toBe("ok");
          expect(isStun(m, m.length)).toBe(true);
          expect(isBindingRequest(view)).toBe(true);
          const dec = new TextDecoder();
          expect(dec.decode(m.subarray(view.usernameOffset, view.colonOffset))).toBe(server);
          expect(
            dec.decode(m.subarray(view.colonOffset + 1, view.usernameOffset + view.usernameLength)),
          ).toBe(client);
          expect(view.useCandidate).toBe(useCandidate);
          expect(view.hasFingerprint).toBe(true);
          expect(view.fingerprintOffset).toBe(m.length - 8);
          expect(view.messageIntegrityOffset).toBe(m.length - 32);
          expect(verifyMessageIntegrity(m, view, ascii(pwd), hmacSha1)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("readStun never throws and keeps offsets in bounds", () => {
  function checkInvariants(buf: Uint8Array, len: number): void {
    const view = newStunView();
    const status = readStun(buf, len, view);
    const end = Math.min(len, buf.length);
    if (status !== "ok") return;
    expect(isStun(buf, end)).toBe(true);
    if (view.usernameOffset >= 0) {
      expect(view.usernameOffset).toBeGreaterThanOrEqual(24);
      expect(view.usernameOffset + view.usernameLength).toBeLessThanOrEqual(end);
      if (view.colonOffset >= 0) {
        expect(view.colonOffset).toBeGreaterThanOrEqual(view.usernameOffset);
        expect(view.colonOffset).toBeLessThan(view.usernameOffset + view.usernameLength);
        expect(buf[view.colonOffset]).toBe(0x3a);
      }
    }
    if (view.messageIntegrityOffset >= 0) expect(view.messageIntegrityOffset + 24).toBeLessThanOrEqual(end);
    if (view.hasFingerprint) expect(view.fingerprintOffset + 8).toBe(end);
    // reading again gives the same view
    const again = newStunView();
    expect(readStun(buf, len, again)).toBe("ok");
    expect(again).toEqual(view);
  }

  it("on arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.integer({ min: -5, max: 220 }), (buf, len) =>
        checkInvariants(buf, len),
      ),
      { numRuns: 5000 },
    );
  });

  it("on valid messages with random mutations (byte flips, truncation, length edits)", () => {
    const valid = encodeBindingRequest({
      transactionId: TXID,
      username: "EwABAALerb7vWUGNMDT+uE5L:h6vY",
      password: "VOkJxbRl1RmTxUk/WvJxBt",
      hmacSha1,
      useCandidate: true,
    });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
        fc.integer({ min: 0, max: valid.length }),
        (edits, len) => {
          const m = Uint8Array.from(valid);
          for (const [i, v] of edits) m[i] = v;
          checkInvariants(m, len);
          checkInvariants(m, m.length);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it("on structured attribute soups (with a correct FINGERPRINT half the time)", () => {
    const anyAttr = fc.record({
      type: fc.oneof(fc.constantFrom(0x0006, 0x0008, 0x0025, 0x8028, 0x8022, 0x0024, 0x802a), fc.nat(0xffff)),
      value: fc.uint8Array({ maxLength: 40 }),
    });
    fc.assert(
      fc.property(fc.array(anyAttr, { maxLength: 6 }), fc.boolean(), (attrs, fp) => {
        const m = msg(attrs);
        checkInvariants(fp ? withFingerprint(m) : m, fp ? m.length + 8 : m.length);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("classifyDatagram (RFC 7983)", () => {
  it("maps every first byte", () => {
    const buf = new Uint8Array(2);
    for (let b = 0; b < 256; b++) {
      buf[0] = b;
      buf[1] = 96; // an RTP payload type
      const kind = classifyDatagram(buf, 2);
      const expected = b <= 3 ? "stun" : b >= 20 && b <= 63 ? "dtls" : b >= 128 && b <= 191 ? "rtp" : "other";
      expect(DATAGRAM_KIND_NAMES[kind], `first byte ${b}`).toBe(expected);
    }
  });
  it("splits RTP and RTCP on the second byte (RFC 5761: 192-223 is RTCP)", () => {
    for (let pt = 0; pt < 256; pt++) {
      const k = classifyDatagram(Uint8Array.of(0x80, pt), 2);
      expect(k).toBe(pt >= 192 && pt <= 223 ? DatagramKind.rtcp : DatagramKind.rtp);
    }
    expect(classifyDatagram(Uint8Array.of(0x80), 1)).toBe(DatagramKind.other);
    expect(classifyDatagram(Uint8Array.of(0x80, 200), 1)).toBe(DatagramKind.other);
  });
  it("never throws; len past the buffer or under 1 is clamped", () => {
    expect(classifyDatagram(new Uint8Array(0), 0)).toBe(DatagramKind.other);
    expect(classifyDatagram(new Uint8Array(0), 10)).toBe(DatagramKind.other);
    expect(classifyDatagram(Uint8Array.of(0x80), 2)).toBe(DatagramKind.other);
    expect(classifyDatagram(Uint8Array.of(0), -1)).toBe(DatagramKind.other);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4 }), fc.integer({ min: -2, max: 8 }), (buf, len) => {
        expect(classifyDatagram(buf, len)).toBeGreaterThanOrEqual(0);
      }),
    );
  });
  it("every STUN message classifies as stun", () => {
    const m = encodeBindingRequest({ transactionId: TXID, username: "abcd:efgh" });
    expect(classifyDatagram(m, m.length)).toBe(DatagramKind.stun);
  });
  it("classifies a datagram at an offset (a backbone frame's payload) the same as at 0", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 6 }), fc.integer({ min: 0, max: 30 }), (d, off) => {
        const framed = new Uint8Array(off + d.length);
        framed.fill(0xff, 0, off); // a header whose bytes would classify as "other"
        framed.set(d, off);
        expect(classifyDatagram(framed, framed.length, off)).toBe(classifyDatagram(d, d.length));
      }),
    );
    expect(classifyDatagram(Uint8Array.of(0, 0, 0x80, 200), 3, 2)).toBe(DatagramKind.other);
    expect(stunClassAt(Uint8Array.of(9, 0x01, 0x01), 1)).toBe(2); // 0x0101: Binding success
    expect(stunClassAt(Uint8Array.of(0x00, 0x01), 0)).toBe(0); // 0x0001: Binding request
  });
});
