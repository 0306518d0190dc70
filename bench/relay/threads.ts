// CPU per datagram of a relay process split by thread and by user / kernel time, at one fixed rate
// from the benchmark's generator: what the socket layer costs in the kernel (system calls, the
// loopback path of each sent datagram) against what runs in JavaScript and the addon.
// usage: node bench/relay/threads.ts batch|dgram [rate=40000] [trials=4]
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { DIR, type Io, startRelay, trial } from "./run.ts";

const io = (process.argv[2] ?? "batch") as Io;
const rate = Number(process.argv[3] ?? 40_000);
const trials = Number(process.argv[4] ?? 4);

/** utime and stime (clock ticks of 10 ms) of every thread of `pid`, by "tid:name". */
function ticks(pid: number): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const st = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    const name = st.slice(st.indexOf("(") + 1, st.lastIndexOf(")"));
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    out.set(`${tid}:${name}`, [Number(f[11]), Number(f[12])]);
  }
  return out;
}

const { proc, target } = await startRelay(1, "0", io);
try {
  trial(target, rate, "1"); // warm-up
  const before = ticks(proc.pid);
  let received = 0;
  for (let i = 0; i < trials; i++) received += trial(target, rate, "1").received;
  const after = ticks(proc.pid);
  const us = (t: number): string => ((t * 10_000) / Math.max(1, received)).toFixed(2);
  for (const [k, [u1, s1]] of after) {
    const [u0, s0] = before.get(k) ?? [0, 0];
    if (u1 - u0 + s1 - s0 === 0) continue;
    process.stdout.write(
      `${io} ${rate} pps ${k}: user ${us(u1 - u0)} µs, system ${us(s1 - s0)} µs per datagram\n`,
    );
  }
} finally {
  proc.stop();
  rmSync(DIR, { recursive: true, force: true });
}
