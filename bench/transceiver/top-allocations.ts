// `node bench/transceiver/top-allocations.ts <file.heapprofile> [n]`: the n (25) allocation sites
// with the most bytes in a V8 sampling heap profile (BENCH_HEAP_PROFILE, collected objects
// included), each with its caller, as a share of all sampled bytes.
import { readFileSync } from "node:fs";

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Node {
  callFrame: Frame;
  selfSize: number;
  children: Node[];
}
const [file, n = "25"] = process.argv.slice(2);
if (!file) throw new Error("usage: top-allocations.ts <file.heapprofile> [n]");
const { head } = JSON.parse(readFileSync(file, "utf8")) as { head: Node };
const name = (f: Frame): string =>
  `${f.functionName || "(anonymous)"}${f.url ? ` ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}` : ""}`;
const bytes = new Map<string, number>();
let total = 0;
const walk = (node: Node, parent: string): void => {
  if (node.selfSize > 0) {
    const k = `${name(node.callFrame)}  <- ${parent}`;
    bytes.set(k, (bytes.get(k) ?? 0) + node.selfSize);
    total += node.selfSize;
  }
  for (const c of node.children) walk(c, name(node.callFrame));
};
walk(head, "");
console.log(`sampled bytes: ${(total / 1048576).toFixed(1)} MiB`);
for (const [k, v] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, Number(n)))
  console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
