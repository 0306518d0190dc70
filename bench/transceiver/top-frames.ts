// `node bench/transceiver/top-frames.ts <file.cpuprofile> [n]`: the n (20) functions with the most
// self time in a V8 CPU profile (from BENCH_PROFILE / --cpu-prof), as a share of all samples.
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const [file, n = "20"] = process.argv.slice(2);
if (!file) throw new Error("usage: top-frames.ts <file.cpuprofile> [n]");
const p = JSON.parse(readFileSync(file, "utf8")) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const byNode = new Map<number, number>();
for (let i = 0; i < p.samples.length; i++) {
  const id = p.samples[i]!;
  byNode.set(id, (byNode.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
}
const self = new Map<string, number>();
let total = 0;
for (const node of p.nodes) {
  const t = byNode.get(node.id) ?? 0;
  total += t;
  const f = node.callFrame;
  const where = f.url ? `${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}` : "";
  const k = `${f.functionName || "(anonymous)"} ${where}`.trim();
  self.set(k, (self.get(k) ?? 0) + t);
}
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(n))) {
  console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
}
