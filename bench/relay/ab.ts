// Two versions of the batched relay side by side: this tree's and another checkout's (a worktree of
// an older commit, with its own `npm run build:native`), both POP relays pinned to core 0 at once,
// trials alternating (and their order alternating per round), so the machine's drift hits both.
// Prints the medians of CPU per datagram and of p50 latency, and new / old.
// usage: node bench/relay/ab.ts OLD_TREE [rate=40000] [rounds=9]
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import * as here from "./run.ts";

const oldTree = process.argv[2];
if (oldTree === undefined || !existsSync(join(oldTree, "bench/relay/run.ts"))) {
  console.error(
    "usage: node bench/relay/ab.ts OLD_TREE [rate] [rounds] (OLD_TREE: a checkout with bench/relay/run.ts)",
  );
  process.exit(2);
}
const rate = Number(process.argv[3] ?? 40_000);
const rounds = Number(process.argv[4] ?? 9);
const old = (await import(pathToFileURL(resolve(oldTree, "bench/relay/run.ts")).href)) as typeof here;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const a = await old.startRelay(1, "0", "batch");
const b = await here.startRelay(1, "0", "batch");
try {
  const cpu = { old: [] as number[], new: [] as number[] };
  const p50 = { old: [] as number[], new: [] as number[] };
  const run = (which: "old" | "new"): void => {
    const r = which === "old" ? old.trial(a.target, rate, "1") : here.trial(b.target, rate, "1");
    cpu[which].push((r.cpuSeconds * 1e6) / Math.max(1, r.received));
    p50[which].push(r.p50_us);
  };
  old.trial(a.target, rate, "1"); // warm-up: JIT, flows
  here.trial(b.target, rate, "1");
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      run("old");
      run("new");
    } else {
      run("new");
      run("old");
    }
  }
  const [co, cn] = [median(cpu.old), median(cpu.new)];
  console.log(
    `${rate} pps, ${rounds} rounds: CPU per datagram old ${co.toFixed(2)} µs, new ${cn.toFixed(2)} µs, new / old ${(cn / co).toFixed(3)}; ` +
      `p50 old ${median(p50.old)} µs, new ${median(p50.new)} µs`,
  );
  console.log(
    `  old: ${cpu.old.map((x) => x.toFixed(2)).join(" ")}\n  new: ${cpu.new.map((x) => x.toFixed(2)).join(" ")}`,
  );
} finally {
  a.proc.stop();
  b.proc.stop();
}
process.exit(0);
