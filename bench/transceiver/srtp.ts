// `node bench/transceiver/srtp.ts`: CPU per SRTP encrypt+decrypt of a 120-byte audio packet, in
// one process and one run: werift's AES-GCM and AES-CM (a node:crypto cipher per packet) against
// the swap (regional/transceiver/srtp). Prints ratios to werift's AES-GCM, its default.
import {
  ProtectionProfileAeadAes128Gcm,
  ProtectionProfileAes128CmHmacSha1_80,
  RtpHeader,
  SrtpSession,
} from "werift";
import { installFastSrtp } from "../../regional/transceiver/srtp/install.ts";

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

function measure(s: SrtpSession): number {
  let seq = 0;
  const one = (): void => {
    seq = (seq + 1) & 0xffff;
    const h = new RtpHeader({ ssrc: 1234, sequenceNumber: seq, timestamp: seq * 960, payloadType: 111 });
    s.decrypt(s.encrypt(payload, h));
  };
  for (let i = 0; i < N / 10; i++) one();
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) one();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / N;
}

// Before the swap: werift as shipped. After it: every session, AES-GCM too, gets the header
// parsers; AES-CM gets the cipher. Rounds interleave within each half.
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const rows: Record<string, number[]> = {};
const round = (names: [string, SrtpSession][]): void => {
  for (const [name] of names) rows[name] = [];
  for (let i = 0; i < ROUNDS; i++) for (const [name, s] of names) rows[name]!.push(measure(s));
};
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
for (const [name, xs] of Object.entries(rows)) {
  const m = median(xs);
  console.log(
    `${name.padEnd(16)} ${m.toFixed(2)} us CPU per encrypt+decrypt (rounds ${xs.map((x) => x.toFixed(2)).join(" ")}), ${(m / base).toFixed(2)}x werift aes-gcm`,
  );
}
