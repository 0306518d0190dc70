// CPU profile of a relay worker under the benchmark's load, on both datagram paths: the POP relay
// (one worker thread, pinned to core 0) at a fixed rate from the C generator (core 1), profiled
// with --cpu-prof; prints the self-time share of the top functions and of the garbage collector.
// usage: npm run bench:relay -- --profile  (or node bench/relay/profile.ts [rate] [trials])
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { DIR, type Io, startRelay, trial } from "./run.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

const rate = Number(process.argv[2] ?? 40_000);
const trials = Number(process.argv[3] ?? 5);
const two = cpus().length >= 2;

/** Self samples by function, over every profile in `dir` (one per thread); the worker's is the largest. */
function summarise(dir: string): { total: number; gc: number; top: [string, number][] } {
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  let best: { total: number; by: Map<string, number> } = { total: 0, by: new Map() };
  for (const f of files) {
    const p = JSON.parse(readFileSync(join(dir, f), "utf8")) as { nodes: ProfileNode[] };
    const by = new Map<string, number>();
    let total = 0;
    for (const n of p.nodes) {
      const hits = n.hitCount ?? 0;
      if (hits === 0) continue;
      const file = n.callFrame.url.split("/").slice(-2).join("/");
      const name =
        `${n.callFrame.functionName || "(anonymous)"} ${file ? `${file}:${n.callFrame.lineNumber + 1}` : ""}`.trim();
      by.set(name, (by.get(name) ?? 0) + hits);
      total += hits;
    }
    const busy = total - (by.get("(idle)") ?? 0);
    if (busy > best.total - (best.by.get("(idle)") ?? 0)) best = { total, by };
  }
  const busy = best.total - (best.by.get("(idle)") ?? 0);
  const top = [...best.by].filter(([k]) => k !== "(idle)").sort((a, b) => b[1] - a[1]);
  return {
    total: busy,
    gc: best.by.get("(garbage collector)") ?? 0,
    top: top.slice(0, 12).map(([k, v]) => [k, v / Math.max(1, busy)]),
  };
}

const out: Record<string, unknown> = {};
try {
  for (const io of ["dgram", "batch"] as Io[]) {
    const dir = join(DIR, `prof-${io}`);
    const { proc, target } = await startRelay(1, two ? "0" : null, io, [
      "--cpu-prof",
      `--cpu-prof-dir=${dir}`,
    ]);
    let received = 0;
    for (let i = 0; i < trials; i++) received += trial(target, rate, two ? "1" : null).received;
    await proc.interrupt!();
    const s = summarise(dir);
    // Samples are 1 ms apart (--cpu-prof-interval default): busy and GC milliseconds per 100k datagrams.
    const per100k = (ms: number): string => ((ms * 100_000) / Math.max(1, received)).toFixed(1);
    out[io] = { received, top: s.top.map(([k, v]) => `${(v * 100).toFixed(1)}% ${k}`) };
    process.stdout.write(
      `\n## ${io}: ${rate} pps x ${trials} trials, ${received} datagrams through; JS thread busy ${per100k(s.total)} ms, garbage collector ${per100k(s.gc)} ms per 100k datagrams\n`,
    );
    for (const [k, v] of s.top) process.stdout.write(`${(v * 100).toFixed(1).padStart(5)}%  ${k}\n`);
  }
} finally {
  rmSync(DIR, { recursive: true, force: true });
}
