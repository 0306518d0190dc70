// Memory per flow: a POP engine sized for 1,000,000 flows, filled through its real first-packet
// path (Binding request, hint verified) from 1,000,000 client addresses spread 64 per /24, then
// answered. Run with --expose-gc. Prints one JSON line.
import { Action } from "../../regional/relay/core/types.ts";
import { benchPopEngine, hintedRequest as req } from "./bench-engine.ts";

const FLOWS = Number(process.argv[2] ?? 1_000_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");
// Address strings as the socket layer would hand them over (one string per flow, kept by the table).
const addresses: string[] = new Array(FLOWS);
for (let i = 0; i < FLOWS; i++) addresses[i] = `10.${(i >> 14) & 255}.${(i >> 6) & 255}.${i & 63}`;

const used = (): number => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
};
gc();
const before = used();
const rssBefore = process.memoryUsage().rss;
const e = benchPopEngine(FLOWS);
const t0 = performance.now();
for (let i = 0; i < FLOWS; i++) {
  if (e.fromClient(1, addresses[i]!, 40_000 + (i & 1023), req, req.length) !== Action.forwardWrapped) {
    throw new Error(`flow ${i} not created`);
  }
}
const fillMs = performance.now() - t0;
// The address array is the socket layer's; only what the table retains counts.
addresses.length = 0;
gc();
const after = used();
const rssAfter = process.memoryUsage().rss;
process.stdout.write(
  `${JSON.stringify({
    flows: e.table.size,
    prefixes: e.table.prefixes,
    bytesPerFlow: Math.round((after - before) / FLOWS),
    rssBytesPerFlow: Math.round((rssAfter - rssBefore) / FLOWS),
    firstPacketUs: Number(((fillMs * 1000) / FLOWS).toFixed(2)),
  })}\n`,
);
