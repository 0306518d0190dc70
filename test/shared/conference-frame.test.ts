// Conference frame (docs/wire-formats.md §8): golden vectors (also in the docs), every single bit
// flip rejected, round trips, payload codecs, and decoders that never throw.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nodeMac } from "../../regional/common/hmac.ts";
import {
  decodeEventText,
  EVENT_CONTINUATION,
  EVENT_MORE,
  encodeEvent,
  encodeEventFragment,
  eventFlags,
  eventSeq,
} from "../../shared/conference/event.ts";
import {
  CONFERENCE_HEADER_BYTES,
  CONFERENCE_MAX_FRAME,
  CONFERENCE_MAX_PAYLOAD,
  type ConferenceHeader,
  ConferenceKind,
  type ConferenceStatus,
  conferenceIdHex,
  decodeConferenceFrame,
  encodeConferenceFrame,
  newConferenceHeader,
  parseConferenceIdHex,
} from "../../shared/conference/frame.ts";
import { writeTiming } from "../../shared/conference/keepalive.ts";
import {
  decodeBye,
  decodeHello,
  decodeNack,
  decodeRoster,
  EVENT_STREAM_FLAG,
  encodeBye,
  encodeHello,
  encodeNack,
  encodeRoster,
  newHello,
  newNackEntries,
  newRosterEntries,
} from "../../shared/conference/payloads.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { fromHex, nodeHmacSha256, toHex } from "./helpers.ts";

const KEYRING = "5:QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8="; // bytes 0x40..0x5f, test only
const SECRET = Uint8Array.from({ length: 32 }, (_, i) => 0x40 + i);
const mac = nodeMac(parseKeyring(KEYRING, "GR_BACKBONE_KEYS", 15));
// The call id vector of §4, as a leg id.
const LEG_ID = "rtc_EQACAAcBAgMEBQYHCAkKCwwNDg9c5WWlpdqsXLhQtWlKS_XQ";
const otherMac = nodeMac(parseKeyring("5:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "X", 15));

// Conference id 0102030405060708, key id 5 (docs/wire-formats.md, "Conference frame (§8)").
const VECTORS: Record<string, string> = {
  media:
    "4716010501020304050607080002000000000007010100000007000009600000f8fffe77c2f50ad95e1f98afdf4ce0ae027ee5",
  nack: "47160205010203040506070800000002fffffffe00010000ffff00058fe7c2c4125ec09babef7cb0b9e894f6",
  hello:
    "471603050102030405060708000200000000000141414543417751464267634943516f4c00030004049c40c633641411000200070102030405060708090a0b0c0d0e0f5ce565a5a5daac5cb850b5694a4bf5d0662413354a3020b738805cb4d341d314",
  keepalive:
    "471605050102030405060708000000020000000800989680004c4b40000003e8000402000100000000000000000000000000000000000241414543417751464267634943516f4c14db59d740ded0009cc4287e3a385183",
  event:
    "471606050102030405060708000000020000000a0003007b2274797065223a22726573706f6e73652e646f6e65227df1558a418f6fd64afd4a15268ac198d8",
  eventFragment:
    "471606050102030405060708000000020000000c00040372697074223a224772268cf0da3bd5cbd5ebcbca00dcf072a3",
  eventNack: "471602050102030405060708000200000000000b0001800000010001adf5e0278a25810658b32290c2923b0b",
  bye: "47160405010203040506070800000002000000090296fa77d45bb192c84ca72ad5b804632e",
};

function header(kind: number, source: number, dest: number, counter: number): ConferenceHeader {
  const h = newConferenceHeader();
  h.kind = kind;
  h.keyId = 5;
  parseConferenceIdHex("0102030405060708", h);
  h.sourceSlot = source;
  h.destinationSlot = dest;
  h.counter = counter;
  return h;
}

function build(name: string): Uint8Array {
  const buf = new Uint8Array(200);
  const p = CONFERENCE_HEADER_BYTES;
  let h: ConferenceHeader;
  let end: number;
  if (name === "media") {
    h = header(ConferenceKind.media, 2, 0, 7);
    end = encodeConferenceFrame(buf, 0, h, fromHex("010100000007000009600000f8fffe"), mac);
  } else {
    if (name === "nack") {
      h = header(ConferenceKind.nack, 0, 2, 0xfffffffe);
      const e = newNackEntries();
      Object.assign(e[0]!, { sourceSlot: 0, firstSeq: 65535, bitmask: 5 });
      h.payloadLength = encodeNack(buf, p, e, 1);
    } else if (name === "hello") {
      h = header(ConferenceKind.hello, 2, 0, 1);
      const he = newHello();
      Object.assign(he, {
        participantId: "prt_AAECAwQFBgcICQoL",
        clusterId: 3,
        transceiverId: 4,
        port: 40000,
        legId: LEG_ID,
      });
      he.ip.set([198, 51, 100, 20], 12);
      h.payloadLength = encodeHello(buf, p, he);
    } else if (name === "keepalive") {
      h = header(ConferenceKind.keepalive, 0, 2, 8);
      const r = newRosterEntries();
      r[0]!.slot = 1;
      r[0]!.participantId = "owner";
      r[1]!.slot = 2;
      r[1]!.participantId = "prt_AAECAwQFBgcICQoL";
      // sent 10 s, echo 5 s, held 1 ms (µs), next event seq 4
      const t = writeTiming(buf, p, 10_000_000, 5_000_000, 1000, 4);
      h.payloadLength = t + encodeRoster(buf, p + t, r, 2);
    } else if (name === "event") {
      h = header(ConferenceKind.event, 0, 2, 10);
      h.payloadLength = encodeEvent(buf, p, 3, '{"type":"response.done"}');
    } else if (name === "eventFragment") {
      // The middle fragment of a longer event (flags 3: a continuation, more follow).
      h = header(ConferenceKind.event, 0, 2, 12);
      const bytes = new TextEncoder().encode('ript":"Gr');
      h.payloadLength = encodeEventFragment(
        buf,
        p,
        4,
        EVENT_CONTINUATION | EVENT_MORE,
        bytes,
        0,
        bytes.length,
      );
    } else if (name === "eventNack") {
      h = header(ConferenceKind.nack, 2, 0, 11);
      const e = newNackEntries();
      Object.assign(e[0]!, { sourceSlot: EVENT_STREAM_FLAG | 0, firstSeq: 1, bitmask: 1 });
      h.payloadLength = encodeNack(buf, p, e, 1);
    } else {
      h = header(ConferenceKind.bye, 0, 2, 9);
      h.payloadLength = encodeBye(buf, p, 2);
    }
    end = encodeConferenceFrame(buf, 0, h, null, mac);
  }
  return buf.slice(0, end);
}

describe("conference frame golden vectors", () => {
  for (const [name, want] of Object.entries(VECTORS)) {
    it(`${name} encodes to the documented bytes, MAC = node:crypto HMAC-SHA256`, () => {
      const got = build(name);
      expect(toHex(got)).toBe(want);
      const signed = got.subarray(0, got.length - 16);
      expect(toHex(got.subarray(got.length - 16))).toBe(
        toHex(nodeHmacSha256(SECRET, signed).subarray(0, 16)),
      );
      const h = newConferenceHeader();
      expect(decodeConferenceFrame(got, got.length, h, mac)).toBe("ok");
      expect(conferenceIdHex(h)).toBe("0102030405060708");
      expect(h.payloadLength).toBe(got.length - 36);
    });

    it(`${name}: every single bit flip is rejected`, () => {
      const v = fromHex(want);
      const h = newConferenceHeader();
      for (let bit = 0; bit < v.length * 8; bit++) {
        const m = v.slice();
        m[bit >> 3]! ^= 0x80 >> (bit & 7);
        expect(decodeConferenceFrame(m, m.length, h, mac), `bit ${bit}`).not.toBe("ok");
      }
      // and every truncation or extension
      for (let len = 0; len < v.length; len++) expect(decodeConferenceFrame(v, len, h, mac)).not.toBe("ok");
      const longer = new Uint8Array(v.length + 1);
      longer.set(v);
      expect(decodeConferenceFrame(longer, longer.length, h, mac)).not.toBe("ok");
    });
  }

  it("the vectors are the ones in docs/wire-formats.md", () => {
    const doc = readFileSync(new URL("../../docs/wire-formats.md", import.meta.url), "utf8").replace(
      /\s+/g,
      "",
    );
    expect(doc).toContain(KEYRING);
    for (const v of Object.values(VECTORS)) expect(doc).toContain(v);
  });
});

describe("conference frame statuses", () => {
  const media = fromHex(VECTORS.media!);
  const status = (mutate: (b: Uint8Array) => void, m = mac): ConferenceStatus => {
    const b = media.slice();
    mutate(b);
    return decodeConferenceFrame(b, b.length, newConferenceHeader(), m);
  };
  it("names each rejection", () => {
    expect(decodeConferenceFrame(media, 35, newConferenceHeader(), mac)).toBe("truncated");
    expect(decodeConferenceFrame(media, media.length + 1, newConferenceHeader(), mac)).toBe("truncated");
    expect(status((b) => (b[0] = 0x80))).toBe("bad-magic");
    expect(status((b) => (b[1] = 0x26))).toBe("unsupported-version");
    expect(status((b) => (b[1] = 0x11))).toBe("bad-type");
    expect(status((b) => (b[2] = 0))).toBe("bad-kind");
    expect(status((b) => (b[2] = 7))).toBe("bad-kind");
    expect(status((b) => (b[3] = 4))).toBe("unknown-key");
    expect(status((b) => (b[3] = 16))).toBe("unknown-key");
    expect(status((b) => (b[20] = 2))).toBe("bad-payload"); // not an audio frame version 1
    expect(status(() => {}, otherMac)).toBe("bad-mac");
    expect(status((b) => (b[16]! ^= 1))).toBe("bad-mac");
  });

  it("encode refuses what it cannot write, without throwing", () => {
    const h = header(ConferenceKind.media, 1, 0, 0);
    const payload = new Uint8Array(CONFERENCE_MAX_PAYLOAD + 1);
    expect(encodeConferenceFrame(new Uint8Array(CONFERENCE_MAX_FRAME + 10), 0, h, payload, mac)).toBe(-1);
    expect(encodeConferenceFrame(new Uint8Array(40), 0, h, new Uint8Array(12), mac)).toBe(-1); // 48 bytes needed
    expect(encodeConferenceFrame(new Uint8Array(100), 0, { ...h, kind: 9 }, new Uint8Array(12), mac)).toBe(
      -1,
    );
    expect(encodeConferenceFrame(new Uint8Array(100), 0, { ...h, keyId: 3 }, new Uint8Array(12), mac)).toBe(
      -1,
    );
    expect(encodeConferenceFrame(new Uint8Array(100), 0, { ...h, keyId: 16 }, new Uint8Array(12), mac)).toBe(
      -1,
    );
  });

  it("conference id hex parses strictly", () => {
    const h = newConferenceHeader();
    expect(parseConferenceIdHex("ffffffff00000001", h)).toBe(true);
    expect([h.conferenceHi, h.conferenceLo]).toEqual([0xffffffff, 1]);
    expect(conferenceIdHex(h)).toBe("ffffffff00000001");
    for (const bad of ["", "0102", "010203040506070g", "01020304050607080"])
      expect(parseConferenceIdHex(bad, h)).toBe(false);
  });
});

const u16 = fc.nat(0xffff);
const u32 = fc.nat({ max: 0xffffffff });
const idChars = fc.stringMatching(/^[A-Za-z0-9_-]{16}$/);

describe("conference frame properties", () => {
  it("media round trips at any offset", () => {
    fc.assert(
      fc.property(
        u32,
        u32,
        u16,
        u16,
        u32,
        fc.uint8Array({ minLength: 11, maxLength: 300 }),
        fc.nat(20),
        (hi, lo, s, d, c, tail, off) => {
          const h = newConferenceHeader();
          Object.assign(h, {
            kind: 1,
            keyId: 5,
            conferenceHi: hi,
            conferenceLo: lo,
            sourceSlot: s,
            destinationSlot: d,
            counter: c,
          });
          const payload = Uint8Array.of(1, ...tail);
          const buf = new Uint8Array(off + 36 + payload.length);
          const end = encodeConferenceFrame(buf, off, h, payload, mac);
          expect(end).toBe(buf.length);
          const frame = buf.subarray(off);
          const got = newConferenceHeader();
          expect(decodeConferenceFrame(frame, frame.length, got, mac)).toBe("ok");
          expect(got).toEqual({ ...h, payloadLength: payload.length });
          expect(toHex(frame.subarray(20, 20 + got.payloadLength))).toBe(toHex(payload));
        },
      ),
    );
  });

  it("never throws on random bytes (and rarely anything but a rejection)", () => {
    const h = newConferenceHeader();
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 400 }),
        fc.boolean(),
        fc.integer({ min: -5, max: 500 }),
        (b, prefixed, len) => {
          if (prefixed && b.length >= 4) {
            b[0] = 0x47;
            b[1] = 0x16;
            b[2] = 1 + (b[2]! % 6);
            b[3] = 5;
          }
          const s = decodeConferenceFrame(b, len, h, mac);
          expect(s).not.toBe("ok");
          const off = Math.max(0, len % 40);
          decodeNack(b, off, len, newNackEntries());
          decodeHello(b, off, len, newHello());
          decodeRoster(b, off, len, newRosterEntries());
          decodeBye(b, off, len);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe("conference payloads", () => {
  it("nack round trips 1..16 entries and rejects other counts", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(u16, u16, u16), { minLength: 1, maxLength: 16 }), (list) => {
        const e = newNackEntries();
        for (const [i, [s, f, m]] of list.entries())
          Object.assign(e[i]!, { sourceSlot: s, firstSeq: f, bitmask: m });
        const buf = new Uint8Array(200);
        const len = encodeNack(buf, 3, e, list.length);
        expect(len).toBe(2 + 6 * list.length);
        const out = newNackEntries();
        expect(decodeNack(buf, 3, len, out)).toBe(list.length);
        expect(out.slice(0, list.length)).toEqual(e.slice(0, list.length));
      }),
    );
    expect(encodeNack(new Uint8Array(200), 0, newNackEntries(), 0)).toBe(-1);
    expect(encodeNack(new Uint8Array(200), 0, newNackEntries(), 17)).toBe(-1);
    expect(decodeNack(Uint8Array.of(0, 0), 0, 2, newNackEntries())).toBe(-1);
  });

  it("hello round trips IPv4 and IPv6 and rejects bad ids and port 0", () => {
    fc.assert(
      fc.property(
        idChars,
        u16,
        u16,
        fc.boolean(),
        fc.integer({ min: 1, max: 0xffff }),
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        (id, c, t, v6, port, ip) => {
          if (!v6) ip.fill(0, 0, 12);
          const he = {
            participantId: `prt_${id}`,
            clusterId: c,
            transceiverId: t,
            ipv6: v6,
            port,
            ip,
            legId: LEG_ID,
          };
          const buf = new Uint8Array(100);
          const len = encodeHello(buf, 1, he);
          expect(len).toBe(v6 ? 75 : 63);
          const out = newHello();
          expect(decodeHello(buf, 1, len, out)).toBe(true);
          expect(out).toEqual(he);
        },
      ),
    );
    const he = { ...newHello(), participantId: "prt_AAECAwQFBgcICQoL", port: 1, legId: LEG_ID };
    const buf = new Uint8Array(100);
    expect(encodeHello(buf, 0, { ...he, participantId: "owner" })).toBe(-1);
    expect(encodeHello(buf, 0, { ...he, participantId: "prt_AAECAwQFBgcICQo!" })).toBe(-1);
    expect(encodeHello(buf, 0, { ...he, port: 0 })).toBe(-1);
    expect(encodeHello(buf, 0, { ...he, legId: "rtc_short" })).toBe(-1);
    expect(encodeHello(buf, 0, { ...he, legId: `${LEG_ID.slice(0, -1)}!` })).toBe(-1);
    expect(encodeHello(buf, 0, he)).toBe(63);
    const out = newHello();
    expect(decodeHello(buf, 0, 63, out)).toBe(true);
    expect(out.legId).toBe(LEG_ID);
    expect(decodeHello(buf, 0, 27, newHello())).toBe(false); // the hello without a leg id
    buf[20] = 6; // family 6 with an IPv4 length
    expect(decodeHello(buf, 0, 63, newHello())).toBe(false);
  });

  it("roster round trips, the owner's zero id included, and reuses unchanged id strings", () => {
    const r = newRosterEntries();
    r[0]!.slot = 1;
    r[0]!.participantId = "owner";
    for (let i = 1; i < 8; i++) {
      r[i]!.slot = i + 1;
      r[i]!.participantId = `prt_AAAAAAAAAAAAAAA${"ABCDEFGH"[i]}`;
    }
    const buf = new Uint8Array(300);
    writeTiming(buf, 0, 1, 0, 0, 0);
    const len = 14 + encodeRoster(buf, 14, r, 8);
    expect(len).toBe(14 + 1 + 18 * 8);
    const out = newRosterEntries();
    expect(decodeRoster(buf, 0, len, out)).toBe(8);
    expect(out.slice(0, 8).map((e) => [e.slot, e.participantId])).toEqual(
      r.slice(0, 8).map((e) => [e.slot, e.participantId]),
    );
    const first = out[3]!.participantId;
    expect(decodeRoster(buf, 0, len, out)).toBe(8);
    expect(out[3]!.participantId).toBe(first);
    expect(decodeRoster(buf, 0, 14, out)).toBe(-1); // a leaf's keepalive: timing only, no roster
    expect(decodeRoster(buf, 0, 0, out)).toBe(-1); // no timing block: malformed
    expect(encodeRoster(buf, 0, r, 65)).toBe(-1);
    buf[14 + 1 + 18 + 2 + 5] = 0; // a prt_ id with one zero byte
    expect(decodeRoster(buf, 0, len, out)).toBe(-1);
  });

  it("event carries seq, flags, then 1..1100 bytes of UTF-8; a whole one decodes, larger or broken text is refused", () => {
    const buf = new Uint8Array(1200);
    const text = '{"type":"x","t":"é€"}';
    const len = encodeEvent(buf, 3, 0xfffe, text);
    expect(len).toBe(3 + new TextEncoder().encode(text).length);
    expect(eventSeq(buf, 3)).toBe(0xfffe);
    expect(eventFlags(buf, 3)).toBe(0);
    expect(decodeEventText(buf, 3, len)).toBe(text);
    expect(encodeEvent(buf, 0, 1, "x".repeat(1100))).toBe(1103);
    expect(encodeEvent(buf, 0, 1, "x".repeat(1101))).toBe(-1); // more than one fragment
    expect(encodeEvent(buf, 0, 1, "€".repeat(367))).toBe(-1); // 1,101 bytes
    expect(encodeEvent(buf, 0, 1, "")).toBe(-1);
    expect(decodeEventText(buf, 0, 3)).toBeUndefined();
    buf.set([0, 1, 0, 0xc3, 0x28]); // not UTF-8
    expect(decodeEventText(buf, 0, 5)).toBeUndefined();
    buf.set([0, 1, EVENT_MORE, 0x7b, 0x7d]); // a fragment, not a whole event
    expect(decodeEventText(buf, 0, 5)).toBeUndefined();
  });

  it("bye carries reasons 1-4 only", () => {
    const b = new Uint8Array(1);
    for (const r of [1, 2, 3, 4]) {
      expect(encodeBye(b, 0, r)).toBe(1);
      expect(decodeBye(b, 0, 1)).toBe(r);
    }
    expect(encodeBye(b, 0, 5)).toBe(-1);
    expect(decodeBye(Uint8Array.of(0), 0, 1)).toBe(-1);
    expect(decodeBye(Uint8Array.of(1, 1), 0, 2)).toBe(-1);
  });
});
