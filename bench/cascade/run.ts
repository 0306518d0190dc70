// `npm run bench:cascade`: repair per hop on the cascade's backbone link. The rig of
// test/cascade/repair.test.ts (a werift owner on the hub, a werift joiner on a leaf, the link
// emulator between the two transceivers' conference sockets), once with NACK and once with
// CONFERENCE_NACK=0, the same seeded loss model in both. Prints, per mode, the link's loss, the
// far-end loss of the joiner's stream at the hub and of the backend's stream back at the leaf,
// and the repaired frames' extra delay (p50/p95/max) against one RTT + 20 ms; then one JSON line.
//
// Env: BENCH_LOSS_PCT (5), BENCH_DELAY_MS (30, one way), BENCH_FRAMES (1500, 20 ms apart),
//      BENCH_SEED (16), BENCH_MODES ("nack,no-nack"). About 70 s with the defaults.
import { quantile, type RepairFigures } from "../../test/cascade/repair-meter.ts";
import { type HubRepair, startRepairRig } from "../../test/cascade/repair-rig.ts";

const LOSS = Number(process.env.BENCH_LOSS_PCT ?? 5);
const DELAY = Number(process.env.BENCH_DELAY_MS ?? 30);
const FRAMES = Number(process.env.BENCH_FRAMES ?? 1500);
const SEED = Number(process.env.BENCH_SEED ?? 16);
const MODES = (process.env.BENCH_MODES ?? "nack,no-nack").split(",").map((s) => s.trim());
const RTT = 2 * DELAY;

interface ModeResult {
  mode: string;
  toHub: Summary;
  toLeaf: Summary;
  /** The hub's own counters for the joiner's stream. */
  hub: HubRepair | null;
  atBackend: number;
}

interface Summary {
  frames: number;
  linkLossPct: number;
  farEndLossPct: number;
  repaired: number;
  retransmissions: number;
  repairDelayMs: { p50: number; p95: number; max: number } | null;
  /** Share of the repairs that came within one RTT + 20 ms (+ 5 ms for the hops' own processing). */
  withinRttPlus20Pct: number | null;
}

const summary = (f: RepairFigures): Summary => ({
  frames: f.frames,
  linkLossPct: f.linkLossPct,
  farEndLossPct: f.farEndLossPct,
  repaired: f.repaired,
  retransmissions: f.retransmissions,
  repairDelayMs:
    f.repairDelaysMs.length === 0
      ? null
      : {
          p50: quantile(f.repairDelaysMs, 0.5),
          p95: quantile(f.repairDelaysMs, 0.95),
          max: f.repairDelaysMs[f.repairDelaysMs.length - 1]!,
        },
  withinRttPlus20Pct:
    f.repairDelaysMs.length === 0
      ? null
      : (100 * f.repairDelaysMs.filter((d) => d <= RTT + 20 + 5).length) / f.repairDelaysMs.length,
});

const fmt = (s: Summary): string =>
  `${s.frames} frames, link lost ${s.linkLossPct.toFixed(2)} %, far end lost ${s.farEndLossPct.toFixed(2)} %, ` +
  `repaired ${s.repaired} (${s.retransmissions} retransmissions)` +
  (s.repairDelayMs
    ? `, repair extra delay p50 ${s.repairDelayMs.p50.toFixed(1)} ms p95 ${s.repairDelayMs.p95.toFixed(1)} ms ` +
      `max ${s.repairDelayMs.max.toFixed(1)} ms, ${s.withinRttPlus20Pct!.toFixed(0)} % within RTT + 20 ms (+5)`
    : "");

async function runMode(mode: string): Promise<ModeResult> {
  const rig = await startRepairRig({ lossPct: LOSS, delayMs: DELAY, seed: SEED }, mode === "nack");
  try {
    await rig.sendFromJoiner(FRAMES);
    await new Promise((r) => setTimeout(r, 1_500)); // repairs in flight land or are given up (500 ms)
    return {
      mode,
      toHub: summary(rig.toHub()),
      toLeaf: summary(rig.toLeaf()),
      hub: (await rig.hubRepair()) ?? null,
      atBackend: rig.atBackend(),
    };
  } finally {
    await rig.close();
  }
}

console.log(
  `cascade repair: ${LOSS} % loss and ${DELAY} ms each way on the hub<->leaf link (RTT ${RTT} ms, ` +
    `RTT + 20 ms = ${RTT + 20} ms), ${FRAMES} joiner frames 20 ms apart, seed ${SEED}`,
);
const results: ModeResult[] = [];
for (const mode of MODES) {
  const r = await runMode(mode);
  results.push(r);
  console.log(
    `${mode.padEnd(8)} joiner -> hub:  ${fmt(r.toHub)}; hub counted ${JSON.stringify(r.hub)}, at the backend ${r.atBackend}`,
  );
  console.log(`${"".padEnd(8)} backend -> leaf: ${fmt(r.toLeaf)}`);
}
console.log(JSON.stringify({ lossPct: LOSS, delayMs: DELAY, frames: FRAMES, seed: SEED, results }));
process.exit(0);
