// RFC 5769 "Test Vectors for STUN", typed from the RFC byte for byte. The reader must read each
// one, locate USERNAME / MESSAGE-INTEGRITY / FINGERPRINT exactly, and MESSAGE-INTEGRITY must verify
// with the RFC's credentials. The CRC and HMAC also prove the hex was typed correctly.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hmacSha1 } from "../../regional/common/hmac.ts";
import { classifyDatagram, DatagramKind } from "../../shared/stun/classify.ts";
import { verifyMessageIntegrity } from "../../shared/stun/integrity.ts";
import { isBindingRequest, isStun, newStunView, readStun, StunClass } from "../../shared/stun/reader.ts";
import { encodeStunMessage } from "../../shared/stun/writer.ts";
import { ascii, fromHex, toHex } from "./helpers.ts";

const PASSWORD = ascii("VOkJxbRl1RmTxUk/WvJxBt");

// §2.1 Sample Request
const REQUEST = fromHex(`
  00 01 00 58  21 12 a4 42  b7 e7 a7 01  bc 34 d6 86  fa 87 df ae
  80 22 00 10  53 54 55 4e  20 74 65 73  74 20 63 6c  69 65 6e 74
  00 24 00 04  6e 00 01 ff
  80 29 00 08  93 2f f9 b1  51 26 3b 36
  00 06 00 09  65 76 74 6a  3a 68 36 76  59 20 20 20
  00 08 00 14  9a ea a7 0c  bf d8 cb 56  78 1e f2 b5  b2 d3 f2 49  c1 b5 71 a2
  80 28 00 04  e5 7a 3b cf`);

// §2.2 Sample IPv4 Response
const RESPONSE_V4 = fromHex(`
  01 01 00 3c  21 12 a4 42  b7 e7 a7 01  bc 34 d6 86  fa 87 df ae
  80 22 00 0b  74 65 73 74  20 76 65 63  74 6f 72 20
  00 20 00 08  00 01 a1 47  e1 12 a6 43
  00 08 00 14  2b 91 f5 99  fd 9e 90 c3  8c 74 89 f9  2a f9 ba 53  f0 6b e7 d7
  80 28 00 04  c0 7d 4c 96`);

// §2.3 Sample IPv6 Response
const RESPONSE_V6 = fromHex(`
  01 01 00 48  21 12 a4 42  b7 e7 a7 01  bc 34 d6 86  fa 87 df ae
  80 22 00 0b  74 65 73 74  20 76 65 63  74 6f 72 20
  00 20 00 14  00 02 a1 47  01 13 a9 fa  a5 d3 f1 79  bc 25 f4 b5  be d2 b9 d9
  00 08 00 14  a3 82 95 4e  4b e6 7b f1  17 84 c9 7c  82 92 c2 75  bf e3 ed 41
  80 28 00 04  c8 fb 0b 4c`);

// §2.4 Sample Request with Long-Term Authentication
const REQUEST_LONG_TERM = fromHex(`
  00 01 00 60  21 12 a4 42  78 ad 34 33  c6 ad 72 c0  29 da 41 2e
  00 06 00 12  e3 83 9e e3  83 88 e3 83  aa e3 83 83  e3 82 af e3  82 b9 00 00
  00 15 00 1c  66 2f 2f 34  39 39 6b 39  35 34 64 36  4f 4c 33 34  6f 4c 39 46  53 54 76 79  36 34 73 41
  00 14 00 0b  65 78 61 6d  70 6c 65 2e  6f 72 67 00
  00 08 00 14  f6 70 24 65  6d d6 4a 3e  02 b8 e0 71  2e 85 c9 a2  8c a8 96 66`);
const LT_USERNAME = "\u30DE\u30C8\u30EA\u30C3\u30AF\u30B9"; // "マトリックス"
const LT_REALM = "example.org";
const LT_NONCE = "f//499k954d6OL34oL9FSTvy64sA";
// The RFC's password "The<U+00AD>M<U+00AA>TRIX" after SASLprep.
const LT_KEY = createHash("md5").update(`${LT_USERNAME}:${LT_REALM}:TheMatrIX`).digest();

const TXID = "b7e7a701bc34d686fa87dfae";

describe("RFC 5769 §2.1 sample request", () => {
  const view = newStunView();
  it("reads ok with USERNAME split at ':'", () => {
    expect(REQUEST.length).toBe(108);
    expect(isStun(REQUEST, REQUEST.length)).toBe(true);
    expect(classifyDatagram(REQUEST, REQUEST.length)).toBe(DatagramKind.stun);
    expect(readStun(REQUEST, REQUEST.length, view)).toBe("ok");
    expect(isBindingRequest(view)).toBe(true);
    expect(toHex(REQUEST.subarray(view.transactionIdOffset, view.transactionIdOffset + 12))).toBe(TXID);
    const username = REQUEST.subarray(view.usernameOffset, view.usernameOffset + view.usernameLength);
    expect(new TextDecoder().decode(username)).toBe("evtj:h6vY");
    expect(new TextDecoder().decode(REQUEST.subarray(view.usernameOffset, view.colonOffset))).toBe("evtj");
    expect(view.colonOffset).toBe(view.usernameOffset + 4);
    expect(view.messageIntegrityOffset).toBe(76);
    expect(view.fingerprintOffset).toBe(100);
    expect(view.hasFingerprint).toBe(true);
    expect(view.useCandidate).toBe(false);
  });
  it("MESSAGE-INTEGRITY verifies with the RFC's password, and not with another", () => {
    expect(verifyMessageIntegrity(REQUEST, view, PASSWORD, hmacSha1)).toBe(true);
    expect(verifyMessageIntegrity(REQUEST, view, ascii("VOkJxbRl1RmTxUk/WvJxBu"), hmacSha1)).toBe(false);
  });
});

describe.each([
  ["§2.2 IPv4", RESPONSE_V4, 80, 48, 72],
  ["§2.3 IPv6", RESPONSE_V6, 92, 60, 84],
])("RFC 5769 %s sample response", (_name, msg, size, mi, fp) => {
  const view = newStunView();
  it("reads ok as a Binding success response", () => {
    expect(msg.length).toBe(size);
    expect(readStun(msg, msg.length, view)).toBe("ok");
    expect(view.messageClass).toBe(StunClass.success);
    expect(view.method).toBe(1);
    expect(isBindingRequest(view)).toBe(false);
    expect(view.usernameOffset).toBe(-1);
    expect(view.messageIntegrityOffset).toBe(mi);
    expect(view.fingerprintOffset).toBe(fp);
    expect(toHex(msg.subarray(8, 20))).toBe(TXID);
  });
  it("MESSAGE-INTEGRITY verifies with the RFC's password", () => {
    expect(verifyMessageIntegrity(msg, view, PASSWORD, hmacSha1)).toBe(true);
  });
  it("XOR-MAPPED-ADDRESS decodes to the RFC's address (192.0.2.1 / 2001:db8:1234:5678:11:2233:4455:6677, port 32853)", () => {
    const at = 20 + 4 + 12; // after SOFTWARE (11 bytes + 1 pad)
    expect((msg[at]! << 8) | msg[at + 1]!).toBe(0x0020);
    const family = msg[at + 5];
    const port = ((msg[at + 6]! << 8) | msg[at + 7]!) ^ 0x2112;
    expect(port).toBe(32853);
    const xorKey = msg.subarray(4, 20); // cookie + transaction id
    const addr = msg.subarray(at + 8, at + 8 + (family === 1 ? 4 : 16)).map((b, i) => b ^ xorKey[i]!);
    if (family === 1) expect([...addr].join(".")).toBe("192.0.2.1");
    else expect(toHex(addr)).toBe("20010db8123456780011223344556677");
  });
});

describe("RFC 5769 §2.4 sample request with long-term authentication", () => {
  const view = newStunView();
  it("reads ok; USERNAME is the UTF-8 name, no ':' and no FINGERPRINT", () => {
    expect(readStun(REQUEST_LONG_TERM, REQUEST_LONG_TERM.length, view)).toBe("ok");
    const u = REQUEST_LONG_TERM.subarray(view.usernameOffset, view.usernameOffset + view.usernameLength);
    expect(new TextDecoder().decode(u)).toBe(LT_USERNAME);
    expect(view.colonOffset).toBe(-1);
    expect(view.hasFingerprint).toBe(false);
    expect(view.messageIntegrityOffset).toBe(92);
  });
  it("MESSAGE-INTEGRITY verifies with MD5(username:realm:SASLprep(password))", () => {
    expect(verifyMessageIntegrity(REQUEST_LONG_TERM, view, LT_KEY, hmacSha1)).toBe(true);
    expect(verifyMessageIntegrity(REQUEST_LONG_TERM, view, PASSWORD, hmacSha1)).toBe(false);
  });
  it("encodeStunMessage reproduces it byte for byte", () => {
    const padded = (s: string): Uint8Array => new TextEncoder().encode(s);
    const built = encodeStunMessage({
      type: 0x0001,
      transactionId: fromHex("78ad3433c6ad72c029da412e"),
      attributes: [
        { type: 0x0006, value: padded(LT_USERNAME) },
        { type: 0x0015, value: padded(LT_NONCE) },
        { type: 0x0014, value: padded(LT_REALM) },
      ],
      integrityKey: LT_KEY,
      hmacSha1,
    });
    expect(toHex(built)).toBe(toHex(REQUEST_LONG_TERM));
  });
});

describe("corrupting an RFC 5769 sample", () => {
  it("any single byte change fails the read, the FINGERPRINT or the MAC", () => {
    const view = newStunView();
    for (const msg of [REQUEST, RESPONSE_V4, RESPONSE_V6]) {
      for (let i = 0; i < msg.length; i++) {
        const m = Uint8Array.from(msg);
        m[i]! ^= 0x01;
        const status = readStun(m, m.length, view);
        // A renamed FINGERPRINT type is an unknown attribute after MESSAGE-INTEGRITY, ignored
        // (RFC 8489 §14.5): the message then has no FINGERPRINT, which ICE requires.
        const accepted =
          status === "ok" && view.hasFingerprint && verifyMessageIntegrity(m, view, PASSWORD, hmacSha1);
        expect(accepted, `byte ${i}`).toBe(false);
      }
    }
  });
  it("a changed FINGERPRINT value is bad-fingerprint", () => {
    const m = Uint8Array.from(REQUEST);
    m[m.length - 1]! ^= 0x80;
    expect(readStun(m, m.length, newStunView())).toBe("bad-fingerprint");
  });
  it("without MESSAGE-INTEGRITY, integrity does not verify", () => {
    const view = newStunView();
    const m = encodeStunMessage({ type: 1, transactionId: fromHex(TXID), attributes: [], fingerprint: true });
    expect(readStun(m, m.length, view)).toBe("ok");
    expect(verifyMessageIntegrity(m, view, PASSWORD, hmacSha1)).toBe(false);
  });
});
