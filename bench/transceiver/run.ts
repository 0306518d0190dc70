// `npm run bench:transceiver`: concurrent echo sessions on one transceiver process, against
// werift's default one-socket-per-session mode in the same run. Per mode: N real werift client
// peers (one client process) set up 10 at a time, then 50 packets/s each way per session
// (120-byte Opus-sized payloads) + 1 data-channel ping/s for BENCH_SECONDS. Measured in the
// server process only: CPU (fraction of one core), event-loop delay p99, memory per session,
// setup CPU per session; loss from the client's count of echoed packets. The client process reports
// its own CPU per session-second, which says how much of the machine the load generator took.
//
// Env: BENCH_SESSIONS (150), BENCH_SECONDS (20), BENCH_CONCURRENCY (10), BENCH_LOAD (1: busy
//      processes competing for the CPU during each mode's media window, 0 for none),
//      BENCH_MODES ("gr-ws,gr-ws-percall,gr-internal,werift"), BENCH_PHASES (1: every session sends
//      in the same tick of each 20 ms frame, as in every run so far; N: spread over N slots, and
//      the pings over the second).
//      About 5 minutes.
//      Client side (client-side.ts): BENCH_PROXY (auto: batched when the addon loads; dgram: a
//      socket pair per session), BENCH_RELAY_SOURCES (8), BENCH_CLIENT_SEND (direct | socket).
//      BENCH_PROFILE=dir / BENCH_PROFILE_ALL=dir: server CPU profiles; BENCH_PROFILE_CLIENTS=dir:
//      the client process's over the window.
//   gr-ws        the transceiver as deployed: shared socket + backbone frames (the relay's part
//                played in the client process) + a WebSocket bridge per session to the echo
//                agent (own process,
//                audio batches negotiated), AES-CM SRTP through the swapped-in cipher
//   gr-internal  the same transceiver with the in-process echo backend (no WebSocket): isolates
//                the shared-socket media path for a like-for-like comparison with werift
//   werift       werift as shipped: one UDP socket per session, in-process echo, no relay
// Suffixes on gr-ws / gr-internal: -xN  TRANSCEIVER_SOCKETS=N (one port, N SO_REUSEPORT sockets:
//   N times the kernel receive buffering to ride out CPU starvation); -single  the echo agent
//   refuses batches (one frame per WebSocket message, as before batching); -gcm  AES-GCM SRTP as
//   werift prefers it (werift's cipher per packet); -cr  TRANSCEIVER_CONNECT_RELAYS=1; -dgram
//   TRANSCEIVER_IO=dgram (Node's dgram instead of the batched addon, recvmmsg/sendmmsg);
//   -percall  BACKEND_SHARED_CONNECTIONS=0 (one WebSocket per call, as before shared connections);
//   -nogro  TRANSCEIVER_GRO=0 (the batched sockets read a relay's GSO train datagram by datagram);
//   -v8heap  TRANSCEIVER_HEAP_GROWING_PERCENT=0 (V8's own heap growing factor, as before the tuning).
import { type ChildProcess, fork, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";

const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));
const N = Number(process.env.BENCH_SESSIONS ?? 150);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const LOAD = Number(process.env.BENCH_LOAD ?? 1);
const MODES = (process.env.BENCH_MODES ?? "gr-ws,gr-ws-percall,gr-internal,werift")
  .split(",")
  .map((s) => s.trim());

type Msg = Record<string, unknown> & { cmd: string };

class Child {
  readonly p: ChildProcess;
  readonly #waiters: { cmd: string; resolve: (m: Msg) => void }[] = [];
  onMessage: (m: Msg) => void = () => {};
  constructor(p: ChildProcess) {
    this.p = p;
    p.on("message", (m: Msg) => {
      if (m.cmd === "error") console.error("child error:", m.message);
      const i = this.#waiters.findIndex((w) => w.cmd === m.cmd);
      if (i >= 0) this.#waiters.splice(i, 1)[0]!.resolve(m);
      else this.onMessage(m);
    });
  }
  wait(cmd: string, timeoutMs = 120_000): Promise<Msg> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timeout waiting for ${cmd}`)), timeoutMs);
      this.#waiters.push({
        cmd,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  }
  send(m: Msg): void {
    this.p.send(m);
  }
  async request(m: Msg, reply: string, timeoutMs?: number): Promise<Msg> {
    const w = this.wait(reply, timeoutMs);
    this.send(m);
    return w;
  }
}

function forkChild(file: string, env: Record<string, string>, execArgv: string[] = []): Child {
  return new Child(
    fork(here(file), [], {
      env: { ...process.env, ...env },
      execArgv,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    }),
  );
}

/** Competing CPU load: `n` processes spinning until stopped. */
function startLoad(n: number): () => void {
  const ps = Array.from({ length: n }, () =>
    spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }),
  );
  return () => {
    for (const p of ps) p.kill("SIGKILL");
  };
}

async function startEchoAgent(audioBatch: boolean): Promise<{ url: string; stop(): void }> {
  const p = spawn(process.execPath, [here("../../regional/echo-agent/main.ts")], {
    env: {
      ...process.env,
      ECHO_AGENT_LISTEN: "127.0.0.1:0",
      ECHO_DELAY_MS: "0",
      ECHO_AUDIO_BATCH: audioBatch ? "1" : "0",
      LOG_LEVEL: "error",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    p.stdout!.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.includes('"ready"'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    p.on("exit", (c) => reject(new Error(`echo agent exited ${c}`)));
  });
  return { url, stop: () => p.kill("SIGINT") };
}

interface Result {
  mode: string;
  sessions: number;
  connected: number;
  setupSeconds: number;
  setupCpuMsPerSession: number;
  serverCpuFraction: number;
  /** 1 s of CPU / (CPU per echoed packet × 50 packets/s per session). */
  sessionsPerCoreEstimate: number;
  usPerEcho: number;
  eldP99Ms: number;
  eldMaxMs: number;
  /** The server's garbage-collector pauses over the media window (ms). */
  gcPauses: { count: number; totalMs: number; maxMs: number; over10Ms: number; majorMs: number };
  loss: number;
  worstSessionLoss: number;
  pongRatio: number;
  rssMiBPerSession: number;
  heapMiBPerSession: number;
  rssMiB: number;
  clientCpuFraction: number;
  /** The client process's CPU per session-second of the window (µs): what the plumbing costs. */
  clientCpuUsPerSessionSecond: number;
  /** How the clients reach the server (client-side.ts): batched or a dgram pair per session. */
  clientSide: string;
  /** The plumbing's anomalies (datagrams of no known session, sends the kernel refused). */
  clientSideCounters: Record<string, number>;
  clientEldP99Ms: number;
  /** Share of the 50 packets/s per session the client process actually sent. */
  offeredRatio: number;
  drops: Record<string, number>;
  /** Datagrams the kernel dropped for full receive buffers: server socket(s), client-side relay/proxies. */
  kernelDrops: { warmup: number; server: number; client: number };
  pass: boolean;
}

async function runMode(mode: string): Promise<Result> {
  const secret = randomBytes(32).toString("base64");
  const agent = mode.startsWith("gr-ws") ? await startEchoAgent(!mode.includes("-single")) : undefined;
  const sockets = Number(/-x(\d+)/.exec(mode)?.[1] ?? 1);
  // BENCH_PROFILE_ALL=dir: a CPU profile of the server's whole life (set-up included).
  const profile = process.env.BENCH_PROFILE_ALL
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_ALL}`, `--cpu-prof-name=${mode}.cpuprofile`]
    : [];
  // BENCH_SERVER_FLAGS="--trace-gc …": extra Node flags for the server process only.
  const serverFlags = (process.env.BENCH_SERVER_FLAGS ?? "").split(/\s+/).filter(Boolean);
  const server = forkChild("./server.ts", { BENCH_MODE: mode === "werift" ? "werift" : "gr" }, [
    "--expose-gc",
    ...profile,
    ...serverFlags,
  ]);
  await server.wait("hello");
  const started = await server.request(
    {
      cmd: "start",
      secret,
      hintKey: randomBytes(32).toString("base64"),
      callIdKey: randomBytes(32).toString("base64"),
      backend: agent ? agent.url : "internal:echo",
      sockets,
      connectRelays: mode.includes("-cr"),
      sharedConnections: mode.includes("-percall") ? 0 : 4,
      gro: !mode.includes("-nogro"),
      io: mode.includes("-dgram") ? "dgram" : "batch",
      srtpProfiles: mode.includes("-gcm") ? "werift" : "aes-cm-only",
      heapGrowingPercent: mode.includes("-v8heap") ? 0 : undefined,
    },
    "started",
  );
  const stats = async (o: { gc?: boolean; resetEld?: boolean } = {}) =>
    server.request({ cmd: "stats", ...o }, "stats");
  const base = await stats({ gc: true });
  // BENCH_PROFILE_CLIENTS=dir: a CPU profile of the client process over the measurement window.
  const clientProfile = process.env.BENCH_PROFILE_CLIENTS
    ? `${process.env.BENCH_PROFILE_CLIENTS}/${mode}-clients.cpuprofile`
    : "";
  const clients = forkChild("./clients.ts", clientProfile ? { BENCH_CLIENT_PROFILE: clientProfile } : {});
  await clients.wait("hello");
  const clientSide = clients.wait("client-side");
  clients.onMessage = (m) => {
    if (m.cmd === "offer") {
      void server
        .request({ cmd: "offer", id: m.id, sdp: m.sdp }, "answer")
        .then((a) => clients.send({ cmd: "answer", id: a.id, sdp: a.sdp }));
    }
  };
  const tSetup = performance.now();
  const connected = await clients.request(
    {
      cmd: "start",
      mode: mode === "werift" ? "werift" : "gr",
      n: N,
      concurrency: CONCURRENCY,
      server: started,
      secret,
    },
    "connected",
    600_000,
  );
  const setupSeconds = (performance.now() - tSetup) / 1000;
  const sideDescription = (await clientSide).description as string;
  console.error(`  client side: ${sideDescription}`);
  const afterSetup = await stats({ gc: true });
  const windowOpen = clients.wait("window-open");
  const done = clients.wait("media-done", (SECONDS + 30) * 1000);
  clients.send({ cmd: "media", seconds: SECONDS });
  const serverPorts = started.udp ? [(started.udp as { port: number }).port] : [];
  const clientPorts = (connected.ports as number[]) ?? [];
  const drops0 = { server: udpDrops(serverPorts), client: udpDrops(clientPorts) };
  const windowClosed = clients.wait("window-closed", (SECONDS + 30) * 1000);
  const stopLoad = startLoad(LOAD);
  await windowOpen;
  // BENCH_PROFILE=dir: a CPU profile of the server over the measurement window only.
  if (process.env.BENCH_PROFILE) await server.request({ cmd: "profile-start" }, "profile-started");
  // BENCH_HEAP_PROFILE=dir: sampled allocations of the server over the window (top-allocations.ts).
  if (process.env.BENCH_HEAP_PROFILE) await server.request({ cmd: "heap-start" }, "heap-started");
  const dropsAtWindow = udpDrops(serverPorts) - drops0.server;
  const w0 = await stats({ resetEld: true });
  const t0 = performance.now();
  await windowClosed;
  const w1 = await stats();
  if (process.env.BENCH_PROFILE) {
    await server.request(
      { cmd: "profile-stop", path: `${process.env.BENCH_PROFILE}/${mode}.cpuprofile` },
      "profile-stopped",
    );
  }
  if (process.env.BENCH_HEAP_PROFILE) {
    await server.request(
      { cmd: "heap-stop", path: `${process.env.BENCH_HEAP_PROFILE}/${mode}.heapprofile` },
      "heap-stopped",
    );
  }
  const elapsedMs = performance.now() - t0;
  stopLoad();
  const media = await done;
  const kernelDrops = {
    warmup: dropsAtWindow,
    server: udpDrops(serverPorts) - drops0.server,
    client: udpDrops(clientPorts) - drops0.client,
  };
  if (process.env.BENCH_DEBUG) console.error(JSON.stringify({ afterSetup, w0, w1, media }));
  const cpuMs = (w1.cpuMs as number) - (w0.cpuMs as number);
  const cpuFraction = cpuMs / Math.max(1, elapsedMs);
  // Server CPU per echoed packet (one in, one out, plus its share of RTCP, consent, data channel):
  // independent of how much load the starved machine let through.
  const usPerEcho = (cpuMs * 1000) / Math.max(1, media.windowEchoes as number);
  await clients.request({ cmd: "stop" }, "stopped").catch(() => {});
  await server.request({ cmd: "stop" }, "stopped").catch(() => {});
  agent?.stop();
  const n = connected.n as number;
  const loss = 1 - (media.received as number) / Math.max(1, media.sent as number);
  const eldP99 = w1.eldP99Ms as number;
  const mib = 1024 * 1024;
  const result: Result = {
    mode,
    sessions: N,
    connected: n,
    setupSeconds: round(setupSeconds, 2),
    setupCpuMsPerSession: round(((afterSetup.cpuMs as number) - (base.cpuMs as number)) / n, 2),
    serverCpuFraction: round(cpuFraction, 3),
    sessionsPerCoreEstimate: Math.round(1e6 / (usPerEcho * 50)),
    usPerEcho: round(usPerEcho, 1),
    eldP99Ms: round(eldP99, 2),
    eldMaxMs: round(w1.eldMaxMs as number, 1),
    gcPauses: ((g) => ({
      ...g,
      totalMs: round(g.totalMs, 1),
      maxMs: round(g.maxMs, 1),
      majorMs: round(g.majorMs, 1),
    }))(w1.gcPauses as Result["gcPauses"]),
    loss: round(loss, 5),
    worstSessionLoss: round(media.worstSessionLoss as number, 4),
    pongRatio: round((media.pongs as number) / Math.max(1, n * Math.floor(SECONDS + 2)), 2),
    rssMiBPerSession: round(((afterSetup.rss as number) - (base.rss as number)) / n / mib, 3),
    heapMiBPerSession: round(((afterSetup.heapUsed as number) - (base.heapUsed as number)) / n / mib, 3),
    rssMiB: round((w1.rss as number) / mib, 1),
    clientCpuFraction: round(media.clientCpuFraction as number, 3),
    clientCpuUsPerSessionSecond: Math.round(media.clientCpuUsPerSessionSecond as number),
    clientSide: sideDescription,
    clientSideCounters: Object.fromEntries(
      Object.entries((media.clientSideCounters as Record<string, number>) ?? {}).filter(([, v]) => v > 0),
    ),
    clientEldP99Ms: round(media.clientEldP99Ms as number, 1),
    offeredRatio: round(media.offeredRatio as number, 3),
    kernelDrops,
    drops: Object.fromEntries(
      Object.entries((w1.drops as Record<string, number>) ?? {}).filter(([, v]) => v > 0),
    ),
    // The verdict needs the load to have been offered: a client process starved by the machine
    // (shared by other work) sends less, which says nothing about the server.
    pass: n === N && loss < 0.01 && eldP99 < 20 && (media.offeredRatio as number) >= 0.95,
  };
  return result;
}

/** Kernel receive-buffer drops of the UDP sockets bound to these local ports (/proc/net/udp). */
function udpDrops(ports: number[]): number {
  const want = new Set(ports.filter((p) => p > 0));
  let drops = 0;
  for (const file of ["/proc/net/udp", "/proc/net/udp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 13) continue;
      const port = Number.parseInt(f[1]!.split(":")[1]!, 16);
      if (want.has(port)) drops += Number(f[12]);
    }
  }
  return drops;
}

function round(x: number, d: number): number {
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

const started = performance.now();
console.error(
  `bench:transceiver  sessions=${N} seconds=${SECONDS} concurrency=${CONCURRENCY} load=${LOAD} modes=${MODES.join(",")} cpus=${cpus().length} node=${process.version} loadavg=${loadavg()
    .map((x) => x.toFixed(1))
    .join(",")}`,
);
const results: Result[] = [];
for (const mode of MODES) {
  console.error(`… ${mode}`);
  results.push(await runMode(mode));
}
const cols: [string, (r: Result) => string][] = [
  ["mode", (r) => r.mode],
  ["sessions", (r) => `${r.connected}/${r.sessions}`],
  ["server CPU", (r) => `${(r.serverCpuFraction * 100).toFixed(1)}%`],
  ["CPU/echo", (r) => `${r.usPerEcho} µs`],
  ["sessions/core (est.)", (r) => String(r.sessionsPerCoreEstimate)],
  ["ELD p99", (r) => `${r.eldP99Ms} ms`],
  ["loss", (r) => `${(r.loss * 100).toFixed(3)}%`],
  ["worst session loss", (r) => `${(r.worstSessionLoss * 100).toFixed(2)}%`],
  ["setup CPU/session", (r) => `${r.setupCpuMsPerSession} ms`],
  ["setup wall", (r) => `${r.setupSeconds} s`],
  ["RSS/session", (r) => `${(r.rssMiBPerSession * 1024).toFixed(0)} KiB`],
  ["heap/session", (r) => `${(r.heapMiBPerSession * 1024).toFixed(0)} KiB`],
  ["client CPU", (r) => `${(r.clientCpuFraction * 100).toFixed(0)}%`],
  ["client CPU/session-s", (r) => `${r.clientCpuUsPerSessionSecond} µs`],
  ["offered", (r) => `${(r.offeredRatio * 100).toFixed(0)}%`],
  [
    "kernel drops srv (warm-up)/cli",
    (r) => `${r.kernelDrops.server} (${r.kernelDrops.warmup})/${r.kernelDrops.client}`,
  ],
  ["pass", (r) => (r.pass ? "yes" : "NO")],
];
const widths = cols.map(([h], i) => Math.max(h.length, ...results.map((r) => cols[i]![1](r).length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
console.log(line(cols.map(([h]) => h)));
console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
for (const r of results) console.log(line(cols.map(([, f]) => f(r))));
for (const r of results) {
  const odd =
    Object.keys(r.clientSideCounters).length > 0 ? `; ANOMALIES ${JSON.stringify(r.clientSideCounters)}` : "";
  console.log(`${r.mode} client side: ${r.clientSide}${odd}`);
}
const wr = results.find((r) => r.mode === "werift");
for (const gr of results) {
  if (!wr || gr === wr) continue;
  console.log(
    `${gr.mode} vs werift per-socket (same run): CPU per echo ${(gr.usPerEcho / wr.usPerEcho).toFixed(2)}x, setup CPU ${(gr.setupCpuMsPerSession / wr.setupCpuMsPerSession).toFixed(2)}x, RSS/session ${(gr.rssMiBPerSession / wr.rssMiBPerSession).toFixed(2)}x, loss ${(gr.loss * 100).toFixed(3)}% vs ${(wr.loss * 100).toFixed(3)}%`,
  );
}
console.log(
  `load average at the end: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(", ")}`,
);
console.log(
  JSON.stringify({
    bench: "transceiver",
    sessions: N,
    seconds: SECONDS,
    wallSeconds: round((performance.now() - started) / 1000, 1),
    results,
  }),
);
