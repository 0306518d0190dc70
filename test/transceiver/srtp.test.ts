// SRTP/SRTCP byte for byte: RFC 3711 B.2 (AES-CM keystream) and B.3 (key derivation), libsrtp's
// AES_CM_128_HMAC_SHA1_80 packets, RFC 7714 16-17 (AES-GCM, werift's own code), and the swapped-in
// AES-CM path against werift's original methods on random packets, both ways. Forgeries as an
// attacker sends them: flipped bits anywhere, truncations, wrong rollover counter.
import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  ProtectionProfileAeadAes128Gcm,
  ProtectionProfileAes128CmHmacSha1_80,
  RtcpHeader,
  RtpHeader,
  SrtcpSession,
  SrtpAuthenticationError,
  SrtpSession,
} from "werift";
import { AesCm } from "../../regional/transceiver/srtp/aes-cm.ts";
import { HmacSha1 } from "../../regional/transceiver/srtp/hmac-sha1.ts";
import { installFastSrtp } from "../../regional/transceiver/srtp/install.ts";

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ""), "hex");
type Cipher = Record<string, (...a: unknown[]) => unknown>;

function session(key: Buffer, salt: Buffer, profile: number = ProtectionProfileAes128CmHmacSha1_80) {
  const keys = { localMasterKey: key, localMasterSalt: salt, remoteMasterKey: key, remoteMasterSalt: salt };
  return { rtp: new SrtpSession({ keys, profile }), rtcp: new SrtcpSession({ keys, profile }) };
}

// werift's own methods, taken before the swap, to compare against.
const ctrProto = Object.getPrototypeOf(
  session(Buffer.alloc(16), Buffer.alloc(14)).rtp.localContext.cipher,
) as Cipher;
const original = {
  encryptRtp: ctrProto.encryptRtp!,
  decryptRtp: ctrProto.decryptRtp!,
  encryptRTCP: ctrProto.encryptRTCP!,
  decryptRTCP: ctrProto.decryptRTCP!,
  rtpParse: RtpHeader.deSerialize.bind(RtpHeader),
  rtcpParse: RtcpHeader.deSerialize.bind(RtcpHeader),
};
const install = installFastSrtp("werift");

describe("HMAC-SHA1 with midstates", () => {
  it("matches RFC 2202 test cases 1, 2 and 6", () => {
    const mac = (key: Buffer, msg: Buffer) => {
      const h = new HmacSha1(key);
      const out = Buffer.alloc(20);
      h.update(msg, 0, msg.length);
      h.finishInto(out, 0, 20);
      return out.toString("hex");
    };
    expect(mac(Buffer.alloc(20, 0x0b), Buffer.from("Hi There"))).toBe(
      "b617318655057264e28bc0b6fb378c8ef146be00",
    );
    expect(mac(Buffer.from("Jefe"), Buffer.from("what do ya want for nothing?"))).toBe(
      "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79",
    );
    expect(
      mac(Buffer.alloc(80, 0xaa), Buffer.from("Test Using Larger Than Block-Size Key - Hash Key First")),
    ).toBe("aa4ae5e15272d00e95705637ce8a3b55ed402112");
  });

  it("matches node:crypto for every length 0..300 fed in uneven pieces, key state reused", () => {
    const key = randomBytes(20);
    const h = new HmacSha1(key);
    const out = Buffer.alloc(20);
    for (let len = 0; len <= 300; len++) {
      const msg = randomBytes(len);
      const cut = len >> 1;
      h.update(msg, 0, cut);
      h.update(msg, cut, len);
      h.updateUint32(len * 7919);
      h.finishInto(out, 0, 20);
      const roc = Buffer.alloc(4);
      roc.writeUInt32BE(len * 7919);
      expect(out.toString("hex")).toBe(createHmac("sha1", key).update(msg).update(roc).digest("hex"));
    }
  });
});

describe("AES-CM (RFC 3711 B.2)", () => {
  it("produces the keystream of the appendix", () => {
    const cm = new AesCm(hex("2B7E151628AED2A6ABF7158809CF4F3C"), hex("F0F1F2F3F4F5F6F7F8F9FAFBFCFD"));
    const zero = Buffer.alloc(48);
    const out = Buffer.alloc(48);
    expect(cm.xor(0, 0, 0, zero, 0, 48, out, 0)).toBe(true);
    expect(out.toString("hex").toUpperCase()).toBe(
      "E03EAD0935C95E80E166B16DD92B4EB4D23513162B02D0F72A43A2FE4A5F97AB41E95B3BB0A2E8DD477901E4FCA894C0",
    );
  });

  it("refuses more keystream than a datagram holds", () => {
    const cm = new AesCm(randomBytes(16), randomBytes(14));
    const big = Buffer.alloc(65537);
    expect(cm.xor(1, 0, 0, big, 0, big.length, big, 0)).toBe(false);
  });
});

describe("SRTP key derivation (RFC 3711 B.3, werift's code)", () => {
  it("derives the appendix's session keys", () => {
    const ctx = session(hex("E1F97A0D3E018BE0D64FA32C06DE4139"), hex("0EC675AD498AFEEBB6960B3AABE6")).rtp
      .localContext as unknown as Record<string, Buffer>;
    expect(ctx.srtpSessionKey!.toString("hex")).toBe("c61e7a93744f39ee10734afe3ff7a087");
    expect(ctx.srtpSessionSalt!.toString("hex")).toBe("30cbbc08863d8c85d49db34a9ae1");
    expect(ctx.srtpSessionAuthTag!.subarray(0, 20).toString("hex")).toBe(
      "cebe321f6ff7716b6fd4ab49af256a156d38baa4",
    );
  });
});

describe("AES_CM_128_HMAC_SHA1_80 (the swapped-in path)", () => {
  const key = hex("e1f97a0d3e018be0d64fa32c06de4139");
  const salt = hex("0ec675ad498afeebb6960b3aabe6");
  const rtpPlain = hex("800f1234decafbadcafebabe abababababababababababababababab");
  const rtpProtected = hex("800f1234decafbadcafebabe 4e55dc4ce79978d88ca4d215949d2402 b78d6acc99ea179b8dbb");
  const rtcpPlain = hex("81c8000bcafebabe abababababababababababababababab");
  const rtcpProtected = hex(
    "81c8000bcafebabe 7128035be487b9bdbef89041f977a5a8 80000001 993e08cd54d6c1230798",
  );

  it("is installed over werift 0.25.2", () => {
    expect(install).toEqual({ ok: true, swapped: true });
    expect(ctrProto.encryptRtp).not.toBe(original.encryptRtp);
  });

  it("protects and unprotects libsrtp's RTP packet", () => {
    const s = session(key, salt);
    const header = RtpHeader.deSerialize(rtpPlain);
    expect(s.rtp.encrypt(rtpPlain.subarray(12), header).toString("hex")).toBe(rtpProtected.toString("hex"));
    expect(s.rtp.decrypt(rtpProtected).toString("hex")).toBe(rtpPlain.toString("hex"));
  });

  it("protects and unprotects libsrtp's RTCP packet (index 1)", () => {
    const s = session(key, salt);
    expect(s.rtcp.encrypt(rtcpPlain).toString("hex")).toBe(rtcpProtected.toString("hex"));
    expect(s.rtcp.decrypt(rtcpProtected).toString("hex")).toBe(rtcpPlain.toString("hex"));
  });

  it("agrees with werift's own methods on random packets, both directions", () => {
    for (let n = 0; n < 300; n++) {
      const k = randomBytes(16);
      const sl = randomBytes(14);
      const fastS = session(k, sl);
      const cipher = fastS.rtp.localContext.cipher as unknown as Cipher;
      const csrc = n % 4;
      const header = new RtpHeader({
        ssrc: randomBytes(4).readUInt32BE(0),
        sequenceNumber: (n * 211 + 65400) & 0xffff,
        timestamp: n * 960,
        payloadType: 111,
        marker: n % 2 === 0,
        csrc: Array.from({ length: csrc }, (_, i) => i + 1),
        csrcLength: csrc,
      });
      const payload = randomBytes(n % 7 === 0 ? 0 : (n * 37) % 1200);
      const roc = n % 3 === 0 ? 0 : n * 104729;
      const fastOut = cipher.encryptRtp!.call(cipher, header, payload, roc) as Buffer;
      const slowOut = original.encryptRtp.call(cipher, header, payload, roc) as Buffer;
      expect(fastOut.equals(slowOut)).toBe(true);
      const h1 = RtpHeader.deSerialize(fastOut.subarray(0, fastOut.length - 10));
      const h2 = RtpHeader.deSerialize(fastOut.subarray(0, fastOut.length - 10));
      const [fastDec] = cipher.decryptRtp!.call(cipher, slowOut, roc, h1) as [Buffer];
      const [slowDec] = original.decryptRtp.call(cipher, fastOut, roc, h2) as [Buffer];
      expect(fastDec.equals(slowDec)).toBe(true);
      const rtcp = Buffer.concat([hex("80c80006"), randomBytes(4 + (n % 60) * 4)]);
      const index = (n * 7777) & 0x7fffffff;
      const fastR = cipher.encryptRTCP!.call(cipher, rtcp, index) as Buffer;
      expect(fastR.equals(original.encryptRTCP.call(cipher, rtcp, index) as Buffer)).toBe(true);
      const [dec] = cipher.decryptRTCP!.call(cipher, fastR) as [Buffer];
      expect(dec.equals(rtcp)).toBe(true);
    }
  });

  it("agrees with werift within one session: in order, across the wrap, out of order, two SSRCs, big and small", () => {
    const s = session(randomBytes(16), randomBytes(14));
    const cipher = s.rtp.localContext.cipher as unknown as Cipher;
    const ssrcs = [0x11111111, 0x22222222];
    const steps: [number, number, number][] = [];
    for (let i = 0; i < 40; i++) steps.push([ssrcs[0]!, (65520 + i) & 0xffff, 65520 + i >= 65536 ? 8 : 7]);
    for (let i = 0; i < 20; i++) steps.push([ssrcs[i % 2]!, (100 + ((i * 7) % 20)) & 0xffff, 3]);
    for (const [ssrc, seq, roc] of steps) {
      for (const size of [0, 1, 120, 256, 257, 900]) {
        const header = new RtpHeader({ ssrc, sequenceNumber: seq, timestamp: seq * 960, payloadType: 111 });
        const payload = randomBytes(size);
        const fastOut = cipher.encryptRtp!.call(cipher, header, payload, roc) as Buffer;
        expect(fastOut.equals(original.encryptRtp.call(cipher, header, payload, roc) as Buffer)).toBe(true);
      }
    }
  });

  it("rejects every single-bit forgery, truncation and a wrong rollover counter", () => {
    const s = session(key, salt);
    for (let bit = 0; bit < rtpProtected.length * 8; bit++) {
      const forged = Buffer.from(rtpProtected);
      forged[bit >> 3]! ^= 1 << (bit & 7);
      expect(() => session(key, salt).rtp.decrypt(forged)).toThrow(SrtpAuthenticationError);
    }
    for (let len = 0; len < rtpProtected.length; len++) {
      expect(() => s.rtp.decrypt(rtpProtected.subarray(0, len))).toThrow(SrtpAuthenticationError);
    }
    for (let bit = 0; bit < rtcpProtected.length * 8; bit++) {
      const forged = Buffer.from(rtcpProtected);
      forged[bit >> 3]! ^= 1 << (bit & 7);
      expect(() => s.rtcp.decrypt(forged)).toThrow(SrtpAuthenticationError);
    }
    for (let len = 0; len < rtcpProtected.length; len++) {
      expect(() => s.rtcp.decrypt(rtcpProtected.subarray(0, len))).toThrow(SrtpAuthenticationError);
    }
    const cipher = s.rtp.localContext.cipher as unknown as Cipher;
    const h = RtpHeader.deSerialize(rtpProtected.subarray(0, 28));
    expect(() => cipher.decryptRtp!.call(cipher, rtpProtected, 1, h)).toThrow(SrtpAuthenticationError);
  });
});

describe("AEAD_AES_128_GCM (RFC 7714 16.1.1 and 17.1, werift's code)", () => {
  const key = hex("000102030405060708090a0b0c0d0e0f");
  const salt = hex("517569642070726f2071756f");
  const rtp = hex(
    "8040f17b8041f8d35501a0b247616c6c696120657374206f6d6e69732064697669736120696e207061727465732074726573",
  );
  const srtp = hex(
    "8040f17b8041f8d35501a0b2f24de3a3fb34de6cacba861c9d7e4bcabe633bd50d294e6f42a5f47a51c7d19b36de3adf8833899d7f27beb16a9152cf765ee4390cce",
  );
  const rtcp = hex(
    "81c8000d4d6172734e5450314e545032525450200000042a0000e9304c756e61deadbeefdeadbeefdeadbeefdeadbeefdeadbeef",
  );
  const srtcp = hex(
    "81c8000d4d61727363e94885dcdab67ca727d7662f6b7e997ff5c0f76c06f32dc676a5f1730d6fda4ce09b4686303ded0bb9275bc84aa45896cf4d2fc5abf87245d9eade800005d4",
  );

  // The vectors give session keys, so they are set on the cipher below werift's key derivation.
  function gcm(): Cipher {
    const c = session(randomBytes(16), randomBytes(12), ProtectionProfileAeadAes128Gcm).rtp.localContext
      .cipher as unknown as Cipher & Record<string, Buffer>;
    Object.assign(c, {
      srtpSessionKey: key,
      srtpSessionSalt: salt,
      srtcpSessionKey: key,
      srtcpSessionSalt: salt,
    });
    return c;
  }

  it("protects and unprotects the RTP packet", () => {
    const c = gcm();
    const header = RtpHeader.deSerialize(rtp);
    expect((c.encryptRtp!.call(c, header, rtp.subarray(12), 0) as Buffer).toString("hex")).toBe(
      srtp.toString("hex"),
    );
    const [plain] = c.decryptRtp!.call(c, srtp, 0) as [Buffer];
    expect(plain.toString("hex")).toBe(rtp.toString("hex"));
    const forged = Buffer.from(srtp);
    forged[20]! ^= 1;
    expect(() => c.decryptRtp!.call(c, forged, 0)).toThrow(SrtpAuthenticationError);
  });

  it("protects and unprotects the RTCP packet (index 0x5d4)", () => {
    const c = gcm();
    expect((c.encryptRTCP!.call(c, rtcp, 0x5d4) as Buffer).toString("hex")).toBe(srtcp.toString("hex"));
    const [plain] = c.decryptRTCP!.call(c, srtcp) as [Buffer];
    expect(plain.toString("hex")).toBe(rtcp.toString("hex"));
  });
});

describe("RTP/RTCP header parsers (swapped in with the cipher)", () => {
  it("give werift's objects for random headers, padded, with CSRCs, extensions, or cut short", () => {
    const ownRtp = (RtpHeader as unknown as { deSerialize: (b: Buffer) => RtpHeader }).deSerialize;
    for (let n = 0; n < 2000; n++) {
      const raw = randomBytes(n % 97);
      if (raw.length > 0) raw[0] = (raw[0]! & 0x3f) | 0x80;
      const slow = (() => {
        try {
          return { ok: original.rtpParse(raw) };
        } catch (e) {
          return { err: (e as Error).name };
        }
      })();
      const fastR = (() => {
        try {
          return { ok: ownRtp(raw) };
        } catch (e) {
          return { err: (e as Error).name };
        }
      })();
      expect(fastR).toEqual(slow);
    }
  });

  it("give werift's RTCP header objects for any 0-8 bytes", () => {
    const ownRtcp = (RtcpHeader as unknown as { deSerialize: (b: Buffer) => RtcpHeader }).deSerialize;
    const outcome = (f: () => unknown) => {
      try {
        return { ok: f() };
      } catch (e) {
        return { err: (e as Error).name };
      }
    };
    for (let n = 0; n < 2000; n++) {
      const raw = randomBytes(n % 9);
      expect(outcome(() => ownRtcp(raw))).toEqual(outcome(() => original.rtcpParse(raw)));
    }
  });
});
