// Where the CPU of the batched relay and of coturn goes at one rate, by `perf record` of the
// whole process (kernel and user stacks), from the benchmark's generator and sink (run.ts):
// CPU per datagram from the sample count, the kernel's share, and two kernel costs that batching
// in user space cannot remove: waking the receiver of each send (sock_def_readable: on loopback
// the sink's thread, an inter-processor wake-up in a VM) and the forwarder's own sleep and wake in
// epoll_wait. Needs perf (apt-get install -y linux-perf) and coturn for its row.
// usage: node bench/relay/kernel-profile.ts [rate=40000] [trials=6]
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DIR, type Proc, startCoturnTarget, startRelay, type Target, trial } from "./run.ts";

const rate = Number(process.argv[2] ?? 40_000);
const trials = Number(process.argv[3] ?? 6);
const HZ = 2999;

if (spawnSync("perf", ["--version"]).status !== 0) {
  console.error("perf not found: apt-get install -y linux-perf");
  process.exit(2);
}

/** Inclusive (children) share of each symbol in `names`, and the kernel's self share. */
function shares(
  data: string,
  names: string[],
): { cpuNs: number; kernel: number; of: Record<string, number> } {
  const count = spawnSync(
    "perf",
    ["report", "-i", data, "--stdio", "--no-children", "-g", "none", "--sort", "dso"],
    {
      encoding: "utf8",
    },
  ).stdout;
  // cpu-clock counts nanoseconds of CPU: the event count is the process's CPU time sampled.
  const cpuNs = Number(/# Event count \(approx\.\): (\d+)/.exec(count)?.[1] ?? 0);
  const kernel = Number(/([\d.]+)%\s+\[kernel\.kallsyms\]/.exec(count)?.[1] ?? 0);
  const inc = spawnSync(
    "perf",
    ["report", "-i", data, "--stdio", "--children", "-g", "none", "--sort", "sym"],
    {
      encoding: "utf8",
      maxBuffer: 64 << 20,
    },
  ).stdout;
  const of: Record<string, number> = {};
  for (const n of names) {
    const m = new RegExp(`^\\s+([\\d.]+)%\\s+[\\d.]+%\\s+\\[k\\] ${n}\\s*$`, "m").exec(inc);
    of[n] = m ? Number(m[1]) : 0;
  }
  return { cpuNs, kernel, of };
}

async function profile(target: Target): Promise<void> {
  const { name } = target;
  const pid = target.pid();
  trial(target, rate, "1"); // warm-up
  const data = join(DIR, `${name.replace(/\W+/g, "-")}.perf`);
  const perf = spawn("perf", ["record", "-q", "-F", String(HZ), "-g", "-p", String(pid), "-o", data], {
    stdio: "ignore",
  });
  await new Promise((r) => setTimeout(r, 300));
  let received = 0;
  for (let i = 0; i < trials; i++) received += trial(target, rate, "1").received;
  perf.kill("SIGINT");
  await new Promise((r) => perf.once("exit", r));
  const s = shares(data, ["sock_def_readable", "do_epoll_wait"]);
  const us = s.cpuNs / 1000 / Math.max(1, received);
  console.log(
    `${name}, ${rate} pps: ${us.toFixed(2)} µs CPU/datagram (${(s.cpuNs / 1e6).toFixed(0)} ms of CPU for ${received} datagrams), ` +
      `kernel ${s.kernel.toFixed(1)} %, waking the receiver (sock_def_readable) ${s.of.sock_def_readable!.toFixed(1)} %, ` +
      `epoll_wait (own sleep and wake) ${s.of.do_epoll_wait!.toFixed(1)} %`,
  );
}

const procs: Proc[] = [];
try {
  const relay = await startRelay(1, "0", "batch");
  procs.push(relay.proc);
  await profile(relay.target);
  if (existsSync("/usr/bin/turnserver")) {
    const turn = await startCoturnTarget("0");
    procs.push(turn.proc);
    await profile(turn.target);
  } else console.log("coturn not installed (apt-get install -y coturn)");
} finally {
  for (const p of procs) p.stop();
}
