// `node bench/transceiver/srtp.ts`: CPU per SRTP encrypt+decrypt of a 120-byte audio packet, in
// one process and one run: werift's AES-GCM and AES-CM (a node:crypto cipher per packet) against
// the swap (regional/transceiver/srtp). Prints ratios to werift's AES-GCM, its default. Then the
// receive side as the transceiver runs it: werift's unprotect with our index estimate (before the
// replay window) against ours with the window (srtp/unprotect.ts, on a context with a sink), and
// ours without a sink, rounds interleaved by swapping SrtpContext.decryptRtp between them.
import {
  ProtectionProfileAeadAes128Gcm,
  ProtectionProfileAes128CmHmacSha1_80,
  RtpHeader,
  SrtpSession,
} from "werift";
import { installFastSrtp, installPacketIndexEstimate } from "../../regional/transceiver/srtp/install.ts";
import { FRESH, ReplayWindow } from "../../regional/transceiver/srtp/replay-window.ts";
import { guardReplays } from "../../regional/transceiver/srtp/unprotect.ts";

const N = Number(process.env.BENCH_PACKETS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const payload = Buffer.alloc(120, 5);

function session(profile: number): SrtpSession {
  const k = Buffer.alloc(16, 1);
  const s = Buffer.alloc(14, 2);
  return new SrtpSession({
    keys: { localMasterKey: k, localMasterSalt: s, remoteMasterKey: k, remoteMasterSalt: s },
    profile,
  });
}

// Each session's seq goes on across rounds, so no round replays another's packets.
const seqs = new Map<SrtpSession, number>();

function measure(s: SrtpSession): number {
  let seq = seqs.get(s) ?? 0;
  const one = (): void => {
    seq = (seq + 1) & 0xffff;
    const h = new RtpHeader({ ssrc: 1234, sequenceNumber: seq, timestamp: seq * 960, payloadType: 111 });
    s.decrypt(s.encrypt(payload, h));
  };
  for (let i = 0; i < N / 10; i++) one();
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) one();
  const t = process.cpuUsage(t0);
  seqs.set(s, seq);
  return (t.user + t.system) / N;
}

// Before the swap: werift as shipped. After it: every session, AES-GCM too, gets the header
// parsers; AES-CM gets the cipher. Rounds interleave within each half.
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const rows: Record<string, number[]> = {};
type Case = [string, SrtpSession, (() => void)?];
const round = (cases: Case[]): void => {
  for (const [name] of cases) rows[name] = [];
  for (let i = 0; i < ROUNDS; i++) {
    for (const [name, s, before] of cases) {
      before?.();
      rows[name]!.push(measure(s));
    }
  }
};
const proto = Object.getPrototypeOf(session(ProtectionProfileAes128CmHmacSha1_80).remoteContext) as {
  decryptRtp: unknown;
};
const weriftUnprotect = proto.decryptRtp;
round([
  ["werift aes-gcm", session(ProtectionProfileAeadAes128Gcm)],
  ["werift aes-cm", session(ProtectionProfileAes128CmHmacSha1_80)],
]);
const r = installFastSrtp("werift");
if (!r.ok) throw new Error(r.reason);
round([
  ["swapped aes-gcm", session(ProtectionProfileAeadAes128Gcm)],
  ["swapped aes-cm", session(ProtectionProfileAes128CmHmacSha1_80)],
]);
const base = median(rows["werift aes-gcm"]!);
const print = (names: string[]): void => {
  for (const name of names) {
    const xs = rows[name]!;
    const m = median(xs);
    console.log(
      `${name.padEnd(30)} ${m.toFixed(2)} us CPU per encrypt+decrypt (rounds ${xs.map((x) => x.toFixed(2)).join(" ")}), ${(m / base).toFixed(2)}x werift aes-gcm`,
    );
  }
};
print(Object.keys(rows));

// The receive side: ROC estimate and unprotect as the transceiver installs them.
const ri = installPacketIndexEstimate();
if (!ri.ok) throw new Error(ri.reason);
const ours = proto.decryptRtp;
const useWerift = () => {
  proto.decryptRtp = weriftUnprotect;
};
const useOurs = () => {
  proto.decryptRtp = ours;
};
const guarded = (profile: number): SrtpSession => {
  const s = session(profile);
  guardReplays(s.remoteContext, () => {
    throw new Error("a replay in the bench");
  });
  return s;
};
const receive: Case[] = [];
for (const [p, name] of [
  [ProtectionProfileAes128CmHmacSha1_80, "aes-cm"],
  [ProtectionProfileAeadAes128Gcm, "aes-gcm"],
] as const) {
  receive.push([`${name} werift unprotect`, session(p), useWerift]);
  receive.push([`${name} unprotect + window`, guarded(p), useOurs]);
  receive.push([`${name} unprotect, no sink`, session(p), useOurs]);
}
round(receive);
print(receive.map(([name]) => name));
for (const name of ["aes-cm", "aes-gcm"]) {
  const before = median(rows[`${name} werift unprotect`]!);
  const after = median(rows[`${name} unprotect + window`]!);
  const bare = median(rows[`${name} unprotect, no sink`]!);
  console.log(
    `${name}: the window adds ${((after - before) * 1000).toFixed(0)} ns per packet to werift's unprotect (${((after - bare) * 1000).toFixed(0)} ns over ours without a sink)`,
  );
}

// The window alone, in order with a swap of neighbours every 8th packet (below the bench's noise
// above): check + commit per packet.
const w = new ReplayWindow();
const M = N * 20;
let dropped = 0;
const t0 = process.cpuUsage();
for (let i = 0; i < M; i++) {
  const index = (i & 7) === 6 ? i + 1 : (i & 7) === 7 ? i - 1 : i;
  if (w.check(index) === FRESH) w.commit(index);
  else dropped++;
}
const t = process.cpuUsage(t0);
if (dropped !== 0) throw new Error(`${dropped} packets dropped`);
console.log(
  `replay window check+commit alone: ${(((t.user + t.system) / M) * 1000).toFixed(1)} ns per packet`,
);
