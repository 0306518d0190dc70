// `npm run bench:linkem`: how close the link emulator lands to its target delay on this host.
// Each round sends 10,000 datagrams at 1,000/s through a 20 ms up + 10 ms down link (10 % seeded
// loss up) and measures the added delay as the median round trip through the emulator minus the
// median straight round trip to the same echo socket in the same round (the baseline), so the
// host's own loopback and scheduling cost cancels. Goal: the median added delay within ±1 ms of
// the target in every round, loss within ±10 % of its target.
//
// Env: BENCH_ROUNDS (3), BENCH_PACKETS (10000), BENCH_PPS (1000). About 12 s per round.
import { loadavg } from "node:os";
import { type ProbeResult, probeLinkem } from "../../scripts/world/linkem/probe.ts";
import { freeUdpPort } from "../../test/support/ports.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PACKETS = Number(process.env.BENCH_PACKETS ?? 10_000);
const PPS = Number(process.env.BENCH_PPS ?? 1_000);
const LOSS_PCT = 10;

const rounds: ProbeResult[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const opts = { upMs: 20, downMs: 10, lossPct: LOSS_PCT, packets: PACKETS, pps: PPS, seed: 9 + i };
  const r = await probeLinkem(opts, await freeUdpPort());
  rounds.push(r);
  const off = r.addedMs - r.targetMs;
  console.log(
    `round ${i + 1}: added ${r.addedMs.toFixed(2)} ms (median; target ${r.targetMs}, off ${off >= 0 ? "+" : ""}${off.toFixed(2)}), ` +
      `mean ${r.addedMeanMs.toFixed(2)} ms, loss ${r.lossPct.toFixed(2)} %, ${r.rate.toFixed(0)} pps, load ${loadavg()[0]!.toFixed(2)}`,
  );
}
const worst = Math.max(...rounds.map((r) => Math.abs(r.addedMs - r.targetMs)));
const lossOk = rounds.every((r) => Math.abs(r.lossPct - LOSS_PCT) <= LOSS_PCT * 0.1);
const pass = worst <= 1 && lossOk;
console.log(
  `worst median offset ${worst.toFixed(2)} ms (goal ±1), loss ${lossOk ? "within" : "OUTSIDE"} ±10 %: ${pass ? "PASS" : "FAIL"}`,
);
console.log(JSON.stringify({ rounds, worstOffsetMs: worst, pass }));
process.exitCode = pass ? 0 : 1;
