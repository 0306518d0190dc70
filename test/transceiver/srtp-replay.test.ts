// The SRTP/SRTCP replay window (RFC 3711 3.3.2): the window itself (srtp/replay-window.ts) on
// vectors and against a plain model, then werift's SrtpSession / SrtcpSession once
// installPacketIndexEstimate swapped unprotect (srtp/unprotect.ts), for both profiles: a packet
// received again is dropped and reported, a forged one moves nothing, and contexts without a
// sink keep werift's behaviour. End to end through the transceiver: srtp-replay-call.test.ts.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  ProtectionProfileAeadAes128Gcm,
  ProtectionProfileAes128CmHmacSha1_80,
  RtpHeader,
  SrtcpSession,
  SrtpAuthenticationError,
  SrtpSession,
} from "werift";
import { installFastSrtp, installPacketIndexEstimate } from "../../regional/transceiver/srtp/install.ts";
import {
  DUPLICATE,
  FRESH,
  ReplayWindow,
  SRTP_REPLAY_WINDOW,
  TOO_OLD,
} from "../../regional/transceiver/srtp/replay-window.ts";
import {
  guardReplays,
  MAX_SSRCS_PER_CONTEXT,
  SrtpReplayError,
} from "../../regional/transceiver/srtp/unprotect.ts";

expect(installPacketIndexEstimate()).toEqual({ ok: true, swapped: true });
expect(installFastSrtp("werift").ok).toBe(true);

const ROC = 0x10000;

/** check, then commit when fresh (what unprotect does for an authenticated packet). */
function receive(w: ReplayWindow, index: number): number {
  const v = w.check(index);
  if (v === FRESH) w.commit(index);
  return v;
}
const run = (indices: number[]): number[] => {
  const w = new ReplayWindow();
  return indices.map((i) => receive(w, i));
};

describe("ReplayWindow (RFC 3711 3.3.2, 128 packets)", () => {
  it("is 128 packets, at least the RFC's 64", () => {
    expect(SRTP_REPLAY_WINDOW).toBe(128);
  });

  it("in order: every packet fresh", () => {
    expect(run([0, 1, 2, 3, 4])).toEqual([FRESH, FRESH, FRESH, FRESH, FRESH]);
  });

  it("reordered within the window: fresh, once", () => {
    expect(run([10, 12, 11, 9, 12, 11, 9])).toEqual([
      FRESH,
      FRESH,
      FRESH,
      FRESH,
      DUPLICATE,
      DUPLICATE,
      DUPLICATE,
    ]);
  });

  it("duplicate: the same index again, at the top and below it", () => {
    expect(run([5, 5, 6, 5, 6])).toEqual([FRESH, DUPLICATE, FRESH, DUPLICATE, DUPLICATE]);
  });

  it("too old: 128 or more behind the highest, even when never received", () => {
    expect(run([1000, 1000 - 127, 1000 - 128, 1000 - 500, 0])).toEqual([
      FRESH,
      FRESH,
      TOO_OLD,
      TOO_OLD,
      TOO_OLD,
    ]);
  });

  it("jump ahead: past the whole ring, the old bits are gone and the gap is fresh", () => {
    // Every landing spot of the new top in the ring, so no stale word can hide in the window.
    for (let to = 10_000; to < 10_300; to++) {
      const w = new ReplayWindow();
      for (let i = 0; i < 300; i++) w.commit(i);
      receive(w, to);
      expect(w.highest).toBe(to);
      // Never received, although their ring bits held packets 0..299: fresh.
      let stale = 0;
      for (let i = to - 127; i < to; i++) if (w.check(i) !== FRESH) stale++;
      expect(stale).toBe(0);
      expect(w.check(to)).toBe(DUPLICATE);
      expect(w.check(to - 128)).toBe(TOO_OLD);
    }
  });

  it("jump ahead by less than the window keeps what is still inside it", () => {
    expect(run([100, 99, 150, 99, 100, 22, 23, 149])).toEqual([
      FRESH,
      FRESH,
      FRESH,
      DUPLICATE,
      DUPLICATE,
      TOO_OLD,
      FRESH,
      FRESH,
    ]);
  });

  it("the 16-bit seq wrapping into the next ROC: one index space", () => {
    const idx = (roc: number, seq: number) => roc * ROC + seq;
    const got = run([
      idx(0, 65534),
      idx(1, 0),
      idx(0, 65535), // late, from before the wrap
      idx(1, 1),
      idx(0, 65535), // again
      idx(1, 0), // again
      idx(0, 65500), // 37 behind: in the window, never received
      idx(0, 65400), // 137 behind: too old
    ]);
    expect(got).toEqual([FRESH, FRESH, FRESH, FRESH, DUPLICATE, DUPLICATE, FRESH, TOO_OLD]);
  });

  it("48-bit indices (ROC past 2^16): the same arithmetic", () => {
    const base = 0xfffffff0 * ROC + 65530; // ROC near 2^32
    expect(run([base, base + 7, base + 3, base + 7, base + 7 - 127, base + 7 - 128])).toEqual([
      FRESH,
      FRESH,
      FRESH,
      DUPLICATE,
      FRESH,
      TOO_OLD,
    ]);
  });

  it("check alone changes nothing (a packet that fails authentication is never committed)", () => {
    const w = new ReplayWindow();
    receive(w, 50);
    expect(w.check(5000)).toBe(FRESH);
    expect(w.check(49)).toBe(FRESH);
    expect(w.highest).toBe(50);
    expect(receive(w, 49)).toBe(FRESH);
  });

  it("agrees with a plain model over 20,000 random arrivals (reorder, loss, repeats, jumps)", () => {
    for (const start of [0, 65_000, 2 ** 40 + 12_345]) {
      const w = new ReplayWindow();
      const seen = new Set<number>();
      let top = -1;
      let next = start;
      let seed = 7;
      const rnd = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      let wrong = 0;
      for (let i = 0; i < 20_000; i++) {
        // Mostly forward, some repeats and late packets, now and then a jump past the ring.
        const r = rnd(100);
        let index: number;
        if (r < 60) index = next++;
        else if (r < 85) index = Math.max(start, next - 1 - rnd(200));
        else {
          next += r < 95 ? rnd(40) : 100 + rnd(1000);
          index = next;
        }
        const want = index > top ? FRESH : top - index >= 128 ? TOO_OLD : seen.has(index) ? DUPLICATE : FRESH;
        if (receive(w, index) !== want) wrong++;
        if (want === FRESH) {
          seen.add(index);
          top = Math.max(top, index);
        }
      }
      expect(wrong).toBe(0);
    }
  });
});

const SSRC = 0x1234abcd;
const PROFILES = [
  ["AES_CM_128_HMAC_SHA1_80", ProtectionProfileAes128CmHmacSha1_80],
  ["AEAD_AES_128_GCM", ProtectionProfileAeadAes128Gcm],
] as const;

interface Cipher {
  encryptRtp(header: RtpHeader, payload: Buffer, roc: number): Buffer;
}
type Keys = ConstructorParameters<typeof SrtpSession>[0]["keys"];

// Two sets of keys facing each other: what the `a` session protects, the `b` one unprotects.
function keyPair(): { a: Keys; b: Keys } {
  const [k1, s1, k2, s2] = [randomBytes(16), randomBytes(14), randomBytes(16), randomBytes(14)];
  return {
    a: { localMasterKey: k1, localMasterSalt: s1, remoteMasterKey: k2, remoteMasterSalt: s2 },
    b: { localMasterKey: k2, localMasterSalt: s2, remoteMasterKey: k1, remoteMasterSalt: s1 },
  };
}

function rtpPair(profile: number, guarded = true) {
  const k = keyPair();
  const a = new SrtpSession({ keys: k.a, profile });
  const b = new SrtpSession({ keys: k.b, profile });
  const replays = { n: 0, tooMany: 0 };
  if (guarded)
    guardReplays(
      b.remoteContext,
      () => replays.n++,
      () => replays.tooMany++,
    );
  const cipher = (a.localContext as unknown as { cipher: Cipher }).cipher;
  // The packet with index roc * 2^16 + seq, as a sender that knows its index makes it.
  const packet = (seq: number, roc = 0, ssrc = SSRC) =>
    cipher.encryptRtp(
      new RtpHeader({ sequenceNumber: seq, timestamp: seq * 960, ssrc, payloadType: 111 }),
      Buffer.from(`payload ${roc}:${seq}`),
      roc,
    );
  const payloadOf = (p: Buffer) => b.decrypt(p).subarray(12).toString();
  return { a, b, replays, packet, payloadOf };
}

const forge = (p: Buffer): Buffer => {
  const f = Buffer.from(p);
  f[f.length - 1]! ^= 1;
  return f;
};

describe.each(PROFILES)("%s: SRTP unprotect with the window", (_name, profile) => {
  it("an authenticated packet received again is dropped and reported", () => {
    const { replays, packet, payloadOf, b } = rtpPair(profile);
    const p = packet(100);
    expect(payloadOf(p)).toBe("payload 0:100");
    expect(() => b.decrypt(p)).toThrow(SrtpReplayError);
    expect(() => b.decrypt(p)).toThrow(SrtpAuthenticationError); // what werift's transport drops
    expect(replays.n).toBe(2);
  });

  it("reordering within the window passes; duplicates and packets 128 behind do not", () => {
    const { replays, packet, b } = rtpPair(profile);
    const ok = (seq: number) => b.decrypt(packet(seq)).subarray(12).toString() === `payload 0:${seq}`;
    const replay = (seq: number) => {
      try {
        b.decrypt(packet(seq));
        return false;
      } catch (e) {
        return e instanceof SrtpReplayError;
      }
    };
    expect([ok(1000), ok(1002), ok(1001), ok(900)]).toEqual([true, true, true, true]);
    expect([replay(1001), replay(900), replay(1002 - 128), replay(5)]).toEqual([true, true, true, true]);
    expect(ok(1002 - 127)).toBe(true);
    expect(replays.n).toBe(4);
  });

  it("across the seq wrap: the late packet from before it passes once", () => {
    const { replays, packet, payloadOf, b } = rtpPair(profile);
    expect(payloadOf(packet(65534))).toBe("payload 0:65534");
    expect(payloadOf(packet(1, 1))).toBe("payload 1:1");
    expect(payloadOf(packet(65535))).toBe("payload 0:65535");
    expect(payloadOf(packet(0, 1))).toBe("payload 1:0");
    for (const [seq, roc] of [
      [65535, 0],
      [0, 1],
      [1, 1],
    ] as const) {
      expect(() => b.decrypt(packet(seq, roc))).toThrow(SrtpReplayError);
    }
    expect(replays.n).toBe(3);
  });

  it("a forged packet moves nothing: a jump ahead that fails its tag leaves the window where it was", () => {
    const { replays, packet, payloadOf, b } = rtpPair(profile);
    expect(payloadOf(packet(10))).toBe("payload 0:10");
    const forged = forge(packet(1000));
    expect(() => b.decrypt(forged)).toThrow(SrtpAuthenticationError);
    expect(() => b.decrypt(forged)).not.toThrow(SrtpReplayError); // never recorded
    // Had the forgery moved the window, 11 would be too old now.
    expect(payloadOf(packet(11))).toBe("payload 0:11");
    // A forged copy of a packet received: the window drops it before the cipher sees it.
    expect(() => b.decrypt(forge(packet(11)))).toThrow(SrtpReplayError);
    expect(replays.n).toBe(1);
    expect(payloadOf(packet(1000))).toBe("payload 0:1000");
  });

  it("keeps a window per SSRC", () => {
    const { packet, payloadOf, b, replays } = rtpPair(profile);
    const p = packet(7);
    const other = Buffer.from(p);
    expect(payloadOf(p)).toBe("payload 0:7");
    // The same seq of another SSRC is another packet (it fails its tag here: the SSRC is signed).
    other.writeUInt32BE(SSRC + 1, 8);
    expect(() => b.decrypt(other)).toThrow(SrtpAuthenticationError);
    expect(() => b.decrypt(other)).not.toThrow(SrtpReplayError);
    expect(replays.n).toBe(0);
  });

  it(`keeps state for at most ${MAX_SSRCS_PER_CONTEXT} SSRCs: one more is dropped and reported, the known ones go on`, () => {
    const { packet, payloadOf, b, replays } = rtpPair(profile);
    for (let i = 0; i < MAX_SSRCS_PER_CONTEXT; i++)
      expect(payloadOf(packet(1, 0, SSRC + i))).toBe("payload 0:1");
    const extra = packet(1, 0, SSRC + MAX_SSRCS_PER_CONTEXT);
    expect(() => b.decrypt(extra)).toThrow(SrtpAuthenticationError);
    expect(replays.tooMany).toBe(1);
    expect(replays.n).toBe(0);
    expect(payloadOf(packet(2, 0, SSRC))).toBe("payload 0:2");
    expect(payloadOf(packet(2, 0, SSRC + MAX_SSRCS_PER_CONTEXT - 1))).toBe("payload 0:2");
    const states = (b.remoteContext as unknown as { srtpSSRCStates: object }).srtpSSRCStates;
    expect(Object.keys(states)).toHaveLength(MAX_SSRCS_PER_CONTEXT);
  });

  it("a context without a sink keeps werift's behaviour (no window)", () => {
    const { packet, payloadOf } = rtpPair(profile, false);
    const p = packet(3);
    expect([payloadOf(p), payloadOf(p)]).toEqual(["payload 0:3", "payload 0:3"]);
  });
});

// A receiver report with no report blocks, from `ssrc` (RFC 3550 6.4.2).
const rr = (ssrc: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeUInt8(0x80, 0);
  b.writeUInt8(201, 1);
  b.writeUInt16BE(1, 2);
  b.writeUInt32BE(ssrc, 4);
  return b;
};

describe.each(PROFILES)("%s: SRTCP unprotect with the window (31-bit index)", (_name, profile) => {
  function rtcpPair() {
    const k = keyPair();
    const a = new SrtcpSession({ keys: k.a, profile });
    const b = new SrtcpSession({ keys: k.b, profile });
    const replays = { n: 0, tooMany: 0 };
    guardReplays(
      b.remoteContext,
      () => replays.n++,
      () => replays.tooMany++,
    );
    // Indices 1..n in order (werift's sender counts from 1).
    const packets = (n: number, ssrc = SSRC) => Array.from({ length: n }, () => a.encrypt(rr(ssrc)));
    return { b, replays, packets };
  }

  it("a packet received again is dropped and reported; reordering within the window passes", () => {
    const { b, replays, packets } = rtcpPair();
    const p = packets(200);
    const at = (i: number) => b.decrypt(p[i - 1]!); // by SRTCP index
    expect(at(150)).toEqual(rr(SSRC));
    expect(at(149)).toEqual(rr(SSRC));
    expect(at(151)).toEqual(rr(SSRC));
    expect(at(151 - 127)).toEqual(rr(SSRC));
    for (const i of [150, 149, 151, 151 - 127, 151 - 128, 1]) expect(() => at(i)).toThrow(SrtpReplayError);
    expect(replays.n).toBe(6);
    expect(at(152)).toEqual(rr(SSRC));
  });

  it("a forged packet moves nothing", () => {
    const { b, replays, packets } = rtcpPair();
    const p = packets(300);
    expect(b.decrypt(p[9]!)).toEqual(rr(SSRC));
    expect(() => b.decrypt(forge(p[299]!))).toThrow(SrtpAuthenticationError);
    expect(() => b.decrypt(forge(p[299]!))).not.toThrow(SrtpReplayError);
    expect(b.decrypt(p[10]!)).toEqual(rr(SSRC)); // index 11: 289 behind, had the forgery counted
    expect(replays.n).toBe(0);
  });

  it(`keeps windows for at most ${MAX_SSRCS_PER_CONTEXT} sender SSRCs: one more is dropped and reported`, () => {
    const { b, replays, packets } = rtcpPair();
    for (let i = 0; i < MAX_SSRCS_PER_CONTEXT; i++)
      expect(b.decrypt(packets(1, SSRC + i)[0]!)).toEqual(rr(SSRC + i));
    expect(() => b.decrypt(packets(1, SSRC + MAX_SSRCS_PER_CONTEXT)[0]!)).toThrow(SrtpAuthenticationError);
    expect(replays.tooMany).toBe(1);
    expect(b.decrypt(packets(2, SSRC)[1]!)).toEqual(rr(SSRC));
  });

  it("keeps a window per sender SSRC", () => {
    const { b, replays, packets } = rtcpPair();
    const mine = packets(10);
    const theirs = packets(10, SSRC + 1); // indices 1..10 of their own
    expect(b.decrypt(mine[9]!)).toEqual(rr(SSRC));
    expect(b.decrypt(theirs[9]!)).toEqual(rr(SSRC + 1));
    expect(() => b.decrypt(theirs[9]!)).toThrow(SrtpReplayError);
    expect(replays.n).toBe(1);
  });
});
