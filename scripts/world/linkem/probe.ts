// Measures the link emulator process on real sockets (loopback), for its test and its benchmark:
// it starts the emulator with one front (UP_MS up with LOSS_PCT seeded loss, DOWN_MS down) in front
// of an echo socket, sends `packets` datagrams at `pps` through it and every tenth one also
// straight to the echo, and reports the added delay as the median round trip through the emulator
// minus the median straight round trip, both measured in this run (a busy host delays a few
// packets by milliseconds; that is the host, not the link), and the loss counted at the client.
// The emulator runs at nice -10 when root, as the world runs it.
import { type ChildProcess, spawn } from "node:child_process";
import { createSocket, type Socket } from "node:dgram";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";

const ROOT = join(import.meta.dirname, "..", "..", "..");

export interface ProbeOptions {
  upMs: number;
  downMs: number;
  lossPct: number;
  packets: number;
  pps: number;
  seed: number;
}

export interface ProbeResult {
  /** Datagrams per second the client sent, over the whole run. */
  rate: number;
  /** Median round trip through the emulator minus the median straight round trip. */
  addedMs: number;
  /** The same with means: the host's load shows here. */
  addedMeanMs: number;
  targetMs: number;
  lossPct: number;
  /** Straight round trips measured (the baseline's sample size). */
  directSamples: number;
}

const bind = async (): Promise<Socket> => {
  const s = createSocket({ type: "udp4", recvBufferSize: 1 << 21 });
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  return s;
};

async function startLinkem(cfg: string): Promise<ChildProcess> {
  const cmd = [process.execPath, join(ROOT, "scripts/world/linkem/main.ts"), cfg];
  const [bin, ...args] = process.getuid?.() === 0 ? ["nice", "-n", "-10", ...cmd] : cmd;
  const child = spawn(bin!, args, { stdio: ["ignore", "pipe", "pipe"] });
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((res, rej) => {
    const t = setTimeout(() => rej(new Error("linkem did not print ready in 10 s")), 10_000);
    lines.on("line", (l) => {
      if (l.includes('"ready"')) {
        clearTimeout(t);
        res();
      }
    });
    child.once("exit", (code) => rej(new Error(`linkem exited with ${code}`)));
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const gone = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await gone;
}

export async function probeLinkem(o: ProbeOptions, frontPort: number): Promise<ProbeResult> {
  const echo = await bind();
  const echoPort = echo.address().port;
  echo.on("message", (m, from) => echo.send(m, from.port, from.address));
  const dir = mkdtempSync(join(tmpdir(), "linkem-"));
  const cfg = join(dir, "linkem.json");
  const route = {
    name: "loopback",
    from: "127.0.0.0/8",
    bindIp: "127.0.0.1",
    up: { delayMs: o.upMs, lossPct: o.lossPct, burst: 1 },
    down: { delayMs: o.downMs },
  };
  const front = { listen: `127.0.0.1:${frontPort}`, target: `127.0.0.1:${echoPort}`, routes: [route] };
  writeFileSync(cfg, JSON.stringify({ seed: o.seed, fronts: [front] }));
  let child: ChildProcess | undefined;
  const client = await bind();
  try {
    child = await startLinkem(cfg);
    return await measure(o, client, frontPort, echoPort);
  } finally {
    client.close();
    if (child) await stop(child);
    echo.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(
  o: ProbeOptions,
  client: Socket,
  frontPort: number,
  echoPort: number,
): Promise<ProbeResult> {
  const sentAt = new Float64Array(o.packets);
  const viaRtt: number[] = [];
  const directRtt: number[] = [];
  const seen = new Uint8Array(o.packets);
  client.on("message", (m) => {
    const now = performance.now();
    const seq = m.readUInt32BE(0);
    if (seq >= o.packets) return;
    if (m[4] === 1) directRtt.push(now - m.readDoubleBE(5));
    else if (!seen[seq]) {
      seen[seq] = 1;
      viaRtt.push(now - sentAt[seq]!);
    }
  });
  // Paced on the clock: each wake sends every packet due by now, so the average rate holds even
  // though timers fire late.
  const start = performance.now();
  let next = 0;
  await new Promise<void>((done) => {
    const tick = (): void => {
      const due = Math.min(o.packets, Math.floor(((performance.now() - start) * o.pps) / 1000) + 1);
      for (; next < due; next++) {
        const b = Buffer.alloc(64);
        b.writeUInt32BE(next, 0);
        const t = performance.now();
        b.writeDoubleBE(t, 5);
        sentAt[next] = t;
        client.send(b, frontPort, "127.0.0.1");
        if (next % 10 === 0) {
          const d = Buffer.from(b);
          d[4] = 1;
          client.send(d, echoPort, "127.0.0.1");
        }
      }
      if (next < o.packets) setTimeout(tick, 1);
      else setTimeout(done, o.upMs + o.downMs + 500);
    };
    tick();
  });
  const elapsed = (performance.now() - start) / 1000;
  const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1] ?? Number.NaN;
  const mean = (a: number[]): number => a.reduce((s, x) => s + x, 0) / a.length;
  return {
    rate: o.packets / elapsed,
    addedMs: median(viaRtt) - median(directRtt),
    addedMeanMs: mean(viaRtt) - mean(directRtt),
    targetMs: o.upMs + o.downMs,
    lossPct: (100 * (o.packets - viaRtt.length)) / o.packets,
    directSamples: directRtt.length,
  };
}
