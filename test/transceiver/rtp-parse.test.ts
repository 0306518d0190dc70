// The RTP header parser (srtp/rtp-header.ts) on headers as WebRTC stacks send them where header
// extensions are negotiated: RFC 8285 one-byte
// and two-byte extensions (with padding between elements), CSRCs and padding give werift's own
// objects, and the irregular ones werift reads its own way (ID 15, an element past its block, a
// block past the packet) too. Then the decrypted packet's parse: werift's transport gets the
// header unprotect parsed, once, for the buffer unprotect returned, for both profiles.
import { randomBytes, randomInt } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  ProtectionProfileAeadAes128Gcm,
  ProtectionProfileAes128CmHmacSha1_80,
  RtpHeader,
  RtpPacket,
  SrtpSession,
} from "werift";
import { installFastSrtp, installPacketIndexEstimate } from "../../regional/transceiver/srtp/install.ts";
import { parseRtpHeader } from "../../regional/transceiver/srtp/rtp-header.ts";

// werift's own parsers, taken before the swap, to compare against.
const weriftHeader = RtpHeader.deSerialize.bind(RtpHeader);
const weriftPacket = RtpPacket.deSerialize.bind(RtpPacket);
expect(installFastSrtp("werift").ok).toBe(true);
expect(installPacketIndexEstimate().ok).toBe(true);

const outcome = (f: () => unknown) => {
  try {
    return { ok: f() };
  } catch (e) {
    return { err: (e as Error).name };
  }
};

/** A header with `cc` CSRCs and the extension block `ext` (profile and elements), then a payload. */
function packet(cc: number, profile: number | undefined, ext: Buffer, padding: number): Buffer {
  const fixed = Buffer.alloc(12 + cc * 4);
  fixed[0] = 0x80 | (padding > 0 ? 0x20 : 0) | (profile === undefined ? 0 : 0x10) | cc;
  fixed[1] = randomInt(256);
  randomBytes(10).copy(fixed, 2);
  const block = profile === undefined ? Buffer.alloc(0) : Buffer.alloc(4 + ext.length);
  if (profile !== undefined) {
    block.writeUInt16BE(profile, 0);
    block.writeUInt16BE(ext.length / 4, 2);
    ext.copy(block, 4);
  }
  const pad = Buffer.alloc(padding);
  if (padding > 0) pad[padding - 1] = padding;
  return Buffer.concat([fixed, block, randomBytes(randomInt(0, 60)), pad]);
}

/** Well-formed RFC 8285 elements (ID 1-14 one-byte, 1-255 two-byte), zero padding between, to a word. */
function elements(twoByte: boolean, gaps = true): Buffer {
  const parts: Buffer[] = [];
  for (let n = randomInt(0, 6); n > 0; n--) {
    if (gaps && randomInt(3) === 0) parts.push(Buffer.alloc(randomInt(1, 3)));
    if (twoByte) {
      const len = randomInt(0, 20);
      parts.push(Buffer.from([randomInt(1, 256), len]), randomBytes(len));
    } else {
      const len = randomInt(1, 17);
      parts.push(Buffer.from([(randomInt(1, 15) << 4) | (len - 1)]), randomBytes(len));
    }
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, Buffer.alloc((4 - (body.length % 4)) % 4)]);
}

describe("RTP header parser: extensions as WebRTC stacks send them", () => {
  it("gives werift's objects for one-byte, two-byte and other profiles, with CSRCs and padding", () => {
    const profiles = [0xbede, 0x1000, 0x1001, 0x0000, 0xabcd];
    let extended = 0;
    for (let n = 0; n < 3000; n++) {
      const profile = n % 6 === 5 ? undefined : profiles[n % 5]!;
      const ext =
        profile === 0x1000
          ? elements(true)
          : profile === 0xbede
            ? elements(false)
            : randomBytes(4 * randomInt(0, 4));
      const raw = packet(randomInt(0, 4), profile, ext, randomInt(2) === 0 ? 0 : randomInt(1, 8));
      const ours = parseRtpHeader(raw, raw.length);
      expect(ours).toBeDefined(); // well-formed: never left to werift
      expect(ours).toEqual(weriftHeader(raw));
      if ((ours?.extensions.length ?? 0) > 0) extended++;
    }
    expect(extended).toBeGreaterThan(1500);
  });

  it("reads a Chromium audio header's elements (audio level, abs-send-time, transport-cc, mid)", () => {
    const ext = Buffer.from("10ff" + "22aabbcc" + "310102" + "7000" + "6061" + "000000", "hex");
    const raw = packet(0, 0xbede, ext, 0);
    const h = parseRtpHeader(raw, raw.length)!;
    expect(h.extensions.map((e) => [e.id, e.payload.toString("hex")])).toEqual([
      [1, "ff"],
      [2, "aabbcc"],
      [3, "0102"],
      [7, "00"],
      [6, "61"],
    ]);
    expect(h.payloadOffset).toBe(12 + 4 + 16);
  });

  it("leaves irregular blocks to werift, whose result or error the swapped parser then gives", () => {
    const cases = [
      packet(0, 0xbede, Buffer.from("f0000000", "hex"), 0), // ID 15: werift stops reading there
      packet(0, 0xbede, Buffer.from("130000000000", "hex").subarray(0, 4), 0), // element past the block
      packet(0, 0x1000, Buffer.from("0105000000000000", "hex").subarray(0, 4), 0),
      packet(0, 0x1000, Buffer.from("00000001", "hex"), 0), // the length byte past the block
    ];
    for (const raw of cases) {
      expect(parseRtpHeader(raw, raw.length)).toBeUndefined();
      expect(outcome(() => RtpHeader.deSerialize(raw))).toEqual(outcome(() => weriftHeader(raw)));
    }
    // A block past the end of the packet, and cut anywhere: the same outcome as werift's.
    const whole = packet(2, 0xbede, elements(false), 3);
    for (let cut = 0; cut <= whole.length; cut++) {
      const raw = whole.subarray(0, cut);
      expect(outcome(() => RtpHeader.deSerialize(raw))).toEqual(outcome(() => weriftHeader(raw)));
    }
  });

  it("reads only the first `length` bytes", () => {
    const raw = packet(1, 0xbede, elements(false), 4);
    const tail = Buffer.concat([raw, Buffer.from([9, 9, 9, 9, 9, 9, 9, 9, 9, 9])]);
    expect(parseRtpHeader(tail, raw.length)).toEqual(weriftHeader(raw));
  });
});

describe("the decrypted packet's header is parsed once", () => {
  for (const [name, profile] of [
    ["AES_CM_128_HMAC_SHA1_80", ProtectionProfileAes128CmHmacSha1_80],
    ["AEAD_AES_128_GCM", ProtectionProfileAeadAes128Gcm],
  ] as const) {
    it(`${name}: werift's transport gets unprotect's header for that buffer, werift's objects`, () => {
      const key = randomBytes(16);
      const salt = randomBytes(profile === ProtectionProfileAeadAes128Gcm ? 12 : 14);
      const keys = {
        localMasterKey: key,
        localMasterSalt: salt,
        remoteMasterKey: key,
        remoteMasterSalt: salt,
      };
      const a = new SrtpSession({ keys, profile });
      const b = new SrtpSession({ keys, profile });
      const b0 = b.remoteContext as unknown as { decryptRtp(p: Buffer): [Buffer, RtpHeader] };
      for (let seq = 100; seq < 140; seq++) {
        // No padding between elements: werift's sender writes them back to back.
        const ext = seq % 2 === 0 ? elements(false, false) : Buffer.alloc(0);
        const plain = packet(seq % 3, seq % 2 === 0 ? 0xbede : undefined, ext, seq % 4 === 0 ? 5 : 0);
        plain.writeUInt16BE(seq, 2);
        const h = weriftHeader(plain);
        const enc = a.encrypt(plain.subarray(h.payloadOffset), h);
        const [dec, header] = b0.decryptRtp(enc);
        expect(dec.toString("hex")).toBe(plain.toString("hex"));
        const p = RtpPacket.deSerialize(dec);
        expect(p.header).toBe(header); // the same object: not parsed a second time
        expect(p).toEqual(weriftPacket(dec));
        // Once only, and only that buffer: parsed again, it is a new header.
        expect(RtpPacket.deSerialize(dec).header).not.toBe(header);
        expect(RtpPacket.deSerialize(Buffer.from(dec))).toEqual(weriftPacket(dec));
      }
    });
  }
});
