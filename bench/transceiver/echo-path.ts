// `npx node bench/transceiver/echo-path.ts`: the transceiver's per-packet echo path in one
// process, without the machine's noise of two busy processes and the kernel's UDP: K real werift
// clients connect through the loopback relay, then SRTP packets encrypted beforehand with each
// client's own keys are handed to the mux as the backbone socket would (frame header decoded),
// and the echoes leave into a counting sink instead of the socket. What is timed is exactly
// mux → paths → werift (ICE, SRTP, RTP) → audio framing → backend → RTP → werift → mux.
//
// Env: ECHO_SESSIONS (10), ECHO_PACKETS (per session per round, 3000), ECHO_ROUNDS (5),
//      ECHO_BACKEND ("internal", or "ws": the echo agent in its own process, audio batches),
//      ECHO_PROFILE=file.cpuprofile (a CPU profile of the timed rounds),
//      ECHO_UDP=1 (the sink sends each datagram to a port nobody listens on: adds dgram's cost),
//      ECHO_PER_TURN (4: packets per session per event-loop turn).
// Prints CPU µs per echoed packet per round and the median, and GCs during the rounds.
import { spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { RtpHeader } from "werift";
import { decodeFrameHeader, FRAME_HEADER_BYTES, newFrameHeader } from "../../shared/backbone/frame.ts";
import { startHarness } from "../../test/transceiver/helpers/harness.ts";

const K = Number(process.env.ECHO_SESSIONS ?? 10);
const P = Number(process.env.ECHO_PACKETS ?? 3000);
const ROUNDS = Number(process.env.ECHO_ROUNDS ?? 5);
const BACKEND = process.env.ECHO_BACKEND ?? "internal";
// Packets per session handed in per event-loop turn (1: each session's frame leaves in its own
// WebSocket message, as in a loop that keeps up with 20 ms packets).
const PER_TURN = Number(process.env.ECHO_PER_TURN ?? 4);
const YIELD_EVERY = PER_TURN * K;

async function echoAgentProcess(): Promise<{ url: string; stop(): void }> {
  const main = fileURLToPath(new URL("../../regional/echo-agent/main.ts", import.meta.url));
  const p = spawn(process.execPath, [main], {
    env: { ...process.env, ECHO_AGENT_LISTEN: "127.0.0.1:0", ECHO_DELAY_MS: "0", LOG_LEVEL: "error" },
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

const agent = BACKEND === "ws" ? await echoAgentProcess() : undefined;
const h = await startHarness(
  { backendUrl: agent ? agent.url : "internal:echo", socketBufferBytes: 8 * 1024 * 1024 },
  agent
    ? {
        agent: {
          url: agent.url,
          port: 0,
          connections: 0,
          framesEchoed: 0,
          events: [],
          close: async () => {},
        } as never,
      }
    : {},
);
// A port nobody listens on (an unconnected socket ignores the ICMP errors): the kernel's send
// path without a receiver in this process.
const probe = createSocket("udp4");
await new Promise<void>((r) => probe.bind(0, "127.0.0.1", () => r()));
const holePort = probe.address().port;
await new Promise<void>((r) => probe.close(() => r()));
const out = createSocket("udp4");
let sunk = 0;
const udp = process.env.ECHO_UDP === "1";
const sink = {
  send(header: Buffer, payload: Uint8Array): void {
    sunk++;
    if (udp) out.send([header, payload], holePort, "127.0.0.1");
  },
};

interface Feed {
  /** Encrypted packets per round (made before anything is timed or profiled). */
  rounds: Buffer[][];
  frame: ReturnType<typeof newFrameHeader>;
  relayHost: string;
  relayPort: number;
  srtp: { encrypt(payload: Buffer, header: RtpHeader): Buffer };
  ssrc: number;
  pt: number;
  seq: number;
}
const feeds: Feed[] = [];
for (let i = 0; i < K; i++) {
  const { client, callId } = await h.connectClient({ dataChannel: false });
  const call = h.t.calls.get(callId)!;
  const path = call.paths.mediaPath()!;
  const frame = newFrameHeader();
  if (decodeFrameHeader(path.header, FRAME_HEADER_BYTES, frame) !== "ok") throw new Error("frame header");
  path.peer = sink;
  const dtls = (client.pc as unknown as { dtlsTransports: { srtp: Feed["srtp"] }[] }).dtlsTransports[0]!;
  feeds.push({
    rounds: [],
    frame,
    relayHost: path.relayHost,
    relayPort: path.relayPort,
    srtp: dtls.srtp,
    ssrc: client.transceiver.sender.ssrc,
    pt: client.transceiver.sender.codec?.payloadType ?? 111,
    seq: 0,
  });
}

function encryptRound(): void {
  const payload = Buffer.alloc(120, 7);
  for (const f of feeds) {
    const packets: Buffer[] = [];
    f.rounds.push(packets);
    for (let j = 0; j < P; j++) {
      const seq = f.seq++;
      const header = new RtpHeader({
        payloadType: f.pt,
        sequenceNumber: seq & 0xffff,
        timestamp: (seq * 960) >>> 0,
        ssrc: f.ssrc,
      });
      packets.push(f.srtp.encrypt(payload, header));
    }
  }
}

let gcs = 0;
new PerformanceObserver((l) => {
  gcs += l.getEntries().length;
}).observe({ entryTypes: ["gc"] });
const turn = () => new Promise<void>((r) => setImmediate(r));

async function round(r: number): Promise<{ us: number; echoes: number }> {
  const mux = h.t.mux;
  const start = sunk;
  const c0 = process.cpuUsage();
  for (let j = 0, n = 0; j < P; j++) {
    for (let k = 0; k < K; k++) {
      const f = feeds[k]!;
      mux.handle(f.rounds[r]![j]!, f.frame, f.relayHost, f.relayPort);
      if (++n % YIELD_EVERY === 0) await turn();
    }
  }
  const want = start + K * P;
  for (let i = 0; i < 2000 && sunk < want; i++) await turn();
  const c = process.cpuUsage(c0);
  const echoes = Math.min(sunk - start, K * P);
  return { us: (c.user + c.system) / Math.max(1, echoes), echoes };
}

for (let r = 0; r <= ROUNDS; r++) encryptRound();
await turn();
await round(0); // warm-up
let inspector: import("node:inspector/promises").Session | undefined;
if (process.env.ECHO_PROFILE) {
  const { Session } = await import("node:inspector/promises");
  inspector = new Session();
  inspector.connect();
  await inspector.post("Profiler.enable");
  await inspector.post("Profiler.start");
}
gcs = 0;
const results: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const { us, echoes } = await round(r + 1);
  results.push(us);
  console.error(`round ${r + 1}: ${us.toFixed(2)} µs/echo (${echoes} echoes of ${K * P})`);
}
if (inspector) {
  const { profile } = (await inspector.post("Profiler.stop")) as { profile: unknown };
  const { writeFileSync } = await import("node:fs");
  writeFileSync(process.env.ECHO_PROFILE!, JSON.stringify(profile));
}
const sorted = [...results].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)]!;
console.log(
  JSON.stringify({
    bench: "echo-path",
    backend: BACKEND,
    udp,
    perTurn: PER_TURN,
    sessions: K,
    packetsPerRound: K * P,
    usPerEcho: Math.round(median * 100) / 100,
    rounds: results.map((x) => Math.round(x * 100) / 100),
    gcs,
  }),
);
await h.close();
agent?.stop();
out.close();
process.exit(0);
