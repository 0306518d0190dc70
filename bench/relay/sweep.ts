// One relay (POP, pinned to core 0) at a list of fixed rates from the benchmark's generator (core
// 1): loss, p50/p99 latency and CPU per packet per trial, and where the kernel dropped datagrams
// (UDP receive-buffer errors), to tell the relay's limit from a stall of the shared machine.
// usage: node bench/relay/sweep.ts batch|dgram [workers=1] [rate,rate,...] [trials=2]
import { readFileSync, rmSync } from "node:fs";
import { DIR, type Io, startRelay, trial } from "./run.ts";

const io = (process.argv[2] ?? "batch") as Io;
const workers = Number(process.argv[3] ?? 1);
const rates = (process.argv[4] ?? "40000,60000,80000,100000,120000").split(",").map(Number);
const trials = Number(process.argv[5] ?? 2);

function rcvbufErrors(): number {
  const lines = readFileSync("/proc/net/snmp", "utf8")
    .split("\n")
    .filter((l) => l.startsWith("Udp:"));
  const keys = lines[0]!.split(" ");
  return Number(lines[1]!.split(" ")[keys.indexOf("RcvbufErrors")]);
}

const { proc, target } = await startRelay(workers, "0", io);
try {
  for (const rate of rates) {
    const before = rcvbufErrors();
    const rs = Array.from({ length: trials }, () => trial(target, rate, "1"));
    const cells = rs.map(
      (r) =>
        `loss ${(r.loss * 100).toFixed(2)}% p50 ${r.p50_us} µs p99 ${r.p99_us} µs CPU ${((r.cpuSeconds * 1e6) / Math.max(1, r.received)).toFixed(2)} µs/packet`,
    );
    process.stdout.write(
      `${io} x${workers} ${rate} pps: ${cells.join(" | ")} | kernel receive-buffer drops ${rcvbufErrors() - before}\n`,
    );
  }
} finally {
  proc.stop();
  rmSync(DIR, { recursive: true, force: true });
}
