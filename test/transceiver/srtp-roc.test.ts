// SRTP packet index estimation (RFC 3711 3.3.1) as werift's contexts run it once
// installPacketIndexEstimate swapped it in: the two missteps of werift 0.25.2's own estimate, a
// wrap with reordering, long gaps across the wrap both ways, on protect (SrtpSession.encrypt) and
// unprotect (SrtpSession.decrypt, state committed only after authentication), and end to end
// against a sender and a receiver that follow libsrtp (the SRTP of Chromium) through a 400-packet
// gap across the wrap.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  ProtectionProfileAeadAes128Gcm,
  ProtectionProfileAes128CmHmacSha1_80,
  RtpHeader,
  SrtpAuthenticationError,
  SrtpSession,
} from "werift";
import {
  installFastSrtp,
  installPacketIndexEstimate,
  packetIndexFingerprint,
  WERIFT_ROC_FINGERPRINT,
} from "../../regional/transceiver/srtp/install.ts";
import { estimateRoc, type SrtpSsrcState } from "../../regional/transceiver/srtp/packet-index.ts";

type Update = (this: unknown, seq: number, s: SrtpSsrcState) => void;
interface Cipher {
  encryptRtp(header: RtpHeader, payload: Buffer, roc: number): Buffer;
  decryptRtp(packet: Buffer, roc: number, header: RtpHeader): [Buffer, RtpHeader];
}
interface Ctx {
  cipher: Cipher;
  srtpSSRCStates: Record<number, SrtpSsrcState>;
}

const SSRC = 0x1234abcd;
const PROFILES = [
  ["AES_CM_128_HMAC_SHA1_80", ProtectionProfileAes128CmHmacSha1_80, 10],
  ["AEAD_AES_128_GCM", ProtectionProfileAeadAes128Gcm, 16],
] as const;

// Two sessions whose keys face each other: what `a` protects, `b` unprotects.
function pair(profile: number): { a: SrtpSession; b: SrtpSession } {
  const [k1, s1, k2, s2] = [randomBytes(16), randomBytes(14), randomBytes(16), randomBytes(14)];
  const keys = (lk: Buffer, ls: Buffer, rk: Buffer, rs: Buffer) => ({
    localMasterKey: lk,
    localMasterSalt: ls,
    remoteMasterKey: rk,
    remoteMasterSalt: rs,
  });
  return {
    a: new SrtpSession({ keys: keys(k1, s1, k2, s2), profile }),
    b: new SrtpSession({ keys: keys(k2, s2, k1, s1), profile }),
  };
}
const ctx = (c: unknown) => c as Ctx;

// werift's own estimate, taken before the swap, to show what it gets wrong.
const contextProto = Object.getPrototypeOf(
  Object.getPrototypeOf(pair(ProtectionProfileAes128CmHmacSha1_80).a.localContext),
) as { updateRolloverCount: Update };
const weriftUpdate = contextProto.updateRolloverCount;
const installed = installPacketIndexEstimate();
installFastSrtp("werift");
const ours = contextProto.updateRolloverCount;

const header = (seq: number) =>
  new RtpHeader({ sequenceNumber: seq, timestamp: seq * 960, ssrc: SSRC, payloadType: 111 });
const payloadOf = (index: number) => Buffer.from(`packet ${index} `.repeat(4));
const parse = (packet: Buffer, tag: number) => {
  const h = RtpHeader.deSerialize(packet.subarray(0, packet.length - tag));
  h.paddingSize = 0;
  return h;
};

/** The ROC each packet of `seqs` gets from `update`, run on one fresh werift state. */
function rocs(update: Update, seqs: number[]): { rocs: number[]; state: SrtpSsrcState } {
  const state: SrtpSsrcState = { rolloverCounter: 0, lastSequenceNumber: 0 };
  const out = seqs.map((seq) => {
    update.call(undefined, seq, state);
    return state.rolloverCounter;
  });
  return { rocs: out, state };
}

// [name, seqs in arrival order, the ROC RFC 3711 gives each]
const VECTORS: [string, number[], number[]][] = [
  ["(a) a gap of 636 across the wrap", [65300, 200], [0, 1]],
  ["(b) seq 0 after 5000", [5000, 0], [0, 0]],
  ["the wrap reordered", [65535, 1, 65534, 2], [0, 1, 0, 1]],
  ["the wrap reordered, seq 0 late", [65533, 65535, 1, 65534, 0, 2], [0, 0, 1, 0, 1, 1]],
  ["a forward gap of 32000 across the wrap", [40000, 6464], [0, 1]],
  ["back 32000 across the wrap", [40000, 6464, 40000, 6465], [0, 1, 0, 1]],
  ["long gaps at ROC 1, both ways", [65000, 100, 32800, 65000, 30000, 63000, 30001], [0, 1, 1, 1, 2, 1, 2]],
  ["ROC 0: far behind reads as ahead (libsrtp)", [100, 65000, 10], [0, 0, 1]],
];

describe("installPacketIndexEstimate", () => {
  it("runs on werift 0.25.2's estimate and callers, the ones the swap was checked against", () => {
    expect(packetIndexFingerprint()).toBe(WERIFT_ROC_FINGERPRINT);
    expect(installed).toEqual({ ok: true, swapped: true });
    expect(installPacketIndexEstimate()).toEqual({ ok: true, swapped: true });
    expect(ours).not.toBe(weriftUpdate);
  });

  it("is idempotent, so a later mismatching fingerprint changes nothing once swapped", () => {
    expect(installPacketIndexEstimate("0".repeat(64))).toEqual({ ok: true, swapped: true });
    expect(contextProto.updateRolloverCount).toBe(ours);
  });
});

describe("RFC 3711 3.3.1 packet index estimate", () => {
  it("werift 0.25.2's own estimate misses both (a) and (b)", () => {
    expect(rocs(weriftUpdate, [65300, 200]).rocs).toEqual([0, 0]);
    expect(rocs(weriftUpdate, [5000, 0]).rocs).toEqual([0, 1]);
  });

  it.each(VECTORS)("%s", (_name, seqs, want) => {
    expect(rocs(ours, seqs).rocs).toEqual(want);
  });

  it("moves ROC and s_l only when the index advances", () => {
    const { state } = rocs(ours, [65535, 1, 65534, 2, 65533]);
    expect(state).toMatchObject({ roc: 1, lastSequenceNumber: 2, rolloverCounter: 0 });
    expect(rocs(ours, [40000, 6464, 40000]).state).toMatchObject({ roc: 1, lastSequenceNumber: 6464 });
  });

  it("estimateRoc: the four cases of 3.3.1", () => {
    expect(estimateRoc(5, 100, 65000)).toBe(4); // s_l < 2^15, far ahead: the previous cycle
    expect(estimateRoc(5, 100, 30000)).toBe(5);
    expect(estimateRoc(5, 65000, 100)).toBe(6); // s_l >= 2^15, far behind: the next cycle
    expect(estimateRoc(5, 65000, 40000)).toBe(5);
    expect(estimateRoc(0, 100, 65000)).toBe(0);
  });
});

describe.each(PROFILES)("%s through werift's SrtpSession", (_name, profile, tag) => {
  it.each(VECTORS)("protect: %s", (_n, seqs, want) => {
    const { a, b } = pair(profile);
    const check = ctx(b.remoteContext).cipher;
    seqs.forEach((seq, i) => {
      const packet = a.encrypt(payloadOf(i), header(seq));
      const [plain] = check.decryptRtp(packet, want[i]!, parse(packet, tag));
      expect(plain.subarray(12)).toEqual(payloadOf(i));
    });
  });

  it.each(VECTORS)("unprotect: %s", (_n, seqs, want) => {
    const { a, b } = pair(profile);
    const make = ctx(a.localContext).cipher;
    seqs.forEach((seq, i) => {
      const packet = make.encryptRtp(header(seq), payloadOf(i), want[i]!);
      expect(b.decrypt(packet).subarray(12)).toEqual(payloadOf(i));
    });
  });

  it("unprotect commits the estimate only once the packet authenticates", () => {
    const { a, b } = pair(profile);
    const make = ctx(a.localContext).cipher;
    const forged = (seq: number, roc: number) => {
      const p = make.encryptRtp(header(seq), payloadOf(seq), roc);
      p[p.length - 1]! ^= 1;
      return p;
    };
    expect(() => b.decrypt(forged(65300, 0))).toThrow(SrtpAuthenticationError);
    expect(ctx(b.remoteContext).srtpSSRCStates[SSRC]).toBeUndefined();
    b.decrypt(make.encryptRtp(header(65300), payloadOf(0), 0));
    // A forged seq 200 would move the state to ROC 1, s_l 200.
    expect(() => b.decrypt(forged(200, 1))).toThrow(SrtpAuthenticationError);
    expect(ctx(b.remoteContext).srtpSSRCStates[SSRC]).toMatchObject({ roc: 0, lastSequenceNumber: 65300 });
    expect(b.decrypt(make.encryptRtp(header(200), payloadOf(1), 1)).subarray(12)).toEqual(payloadOf(1));
    expect(ctx(b.remoteContext).srtpSSRCStates[SSRC]).toMatchObject({ roc: 1, lastSequenceNumber: 200 });
  });
});

// libsrtp 2.x's receiver (srtp_rdbx_estimate_index / srtp_index_guess in crypto/replay/rdbx.c,
// 64-bit index), written from its source, independent of packet-index.ts.
class LibsrtpReceiver {
  index = 0;
  guess(seq: number): { roc: number; delta: number } {
    if (this.index <= 0x8000) return { roc: 0, delta: seq - this.index };
    const roc = Math.floor(this.index / 0x10000);
    const local = this.index % 0x10000;
    if (local < 0x8000) {
      if (seq - local > 0x8000) return { roc: roc - 1, delta: seq - local - 0x10000 };
      return { roc, delta: seq - local };
    }
    if (local - 0x8000 > seq) return { roc: roc + 1, delta: seq - local + 0x10000 };
    return { roc, delta: seq - local };
  }
  receive(cipher: Cipher, packet: Buffer, tag: number): Buffer {
    const h = parse(packet, tag);
    const g = this.guess(h.sequenceNumber);
    const [plain] = cipher.decryptRtp(packet, g.roc, h);
    if (g.delta > 0) this.index = g.roc * 0x10000 + h.sequenceNumber;
    return plain;
  }
}

// True packet indices (ROC * 2^16 + seq): in order from 64800, nothing from 65300 to 65699 (400
// packets across the wrap at 65536), on to 66400, then gaps of 20000 (one packet each) to the next
// wrap (at 131072).
function sent(): number[] {
  const out: number[] = [];
  for (let i = 64800; i < 65300; i++) out.push(i);
  for (let i = 65700; i <= 66400; i++) out.push(i);
  for (let i = 86400; i < 130900; i += 20000) out.push(i);
  for (let i = 130900; i <= 131300; i++) out.push(i);
  return out;
}
// The network swaps consecutive packets now and then, at the second wrap too.
function arrival(indices: number[]): number[] {
  const out = indices.slice();
  for (let i = 5; i + 1 < out.length; i += 7) {
    if (out[i + 1]! - out[i]! === 1) [out[i], out[i + 1]] = [out[i + 1]!, out[i]!];
  }
  const w = out.indexOf(131072);
  [out[w - 1], out[w]] = [out[w]!, out[w - 1]!];
  return out;
}

describe.each(PROFILES)("%s end to end across a 400-packet gap at the wrap", (_name, profile, tag) => {
  it("werift's own estimate would lose the stream there", () => {
    const order = arrival(sent());
    const got = rocs(
      weriftUpdate,
      order.map((i) => i % 0x10000),
    ).rocs;
    expect(got).not.toEqual(order.map((i) => Math.floor(i / 0x10000)));
  });

  it("our sender to a libsrtp receiver", () => {
    const { a, b } = pair(profile);
    const packets = new Map<number, Buffer>();
    for (const i of sent()) packets.set(i, a.encrypt(payloadOf(i), header(i % 0x10000)));
    const rx = new LibsrtpReceiver();
    const cipher = ctx(b.remoteContext).cipher;
    for (const i of arrival(sent())) {
      expect(rx.receive(cipher, packets.get(i)!, tag).subarray(12)).toEqual(payloadOf(i));
    }
    expect(rx.index).toBe(131300);
  });

  it("a sender that knows its index to our receiver", () => {
    const { a, b } = pair(profile);
    const cipher = ctx(a.localContext).cipher;
    for (const i of arrival(sent())) {
      const packet = cipher.encryptRtp(header(i % 0x10000), payloadOf(i), Math.floor(i / 0x10000));
      expect(b.decrypt(packet).subarray(12)).toEqual(payloadOf(i));
    }
    expect(ctx(b.remoteContext).srtpSSRCStates[SSRC]).toMatchObject({ roc: 2, lastSequenceNumber: 228 });
  });
});
