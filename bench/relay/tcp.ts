// ICE-TCP at the POP against UDP, same run, same POP process (npm run bench:relay:tcp):
//   - packets per POP CPU-second and added round-trip latency (p50/p99) for the same load
//     (FLOWS clients x RATE packets/s of 200-byte RTP-like packets, echoed by a stand-in
//     transceiver) over UDP, then over TCP (RFC 4571), reported as TCP/UDP ratios;
//   - POP memory per TCP flow at rest: heap after a full GC with IDLE_FLOWS validated, idle TCP
//     connections open, minus before (the kernel's socket memory is not in it; see docs/relay.md).
// The load generator and the echo run in this process; the POP in a child pinned to core 0 where
// the machine has two cores. Results: stdout (markdown) and bench/relay/results-tcp.json.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createSocket } from "node:dgram";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { hmacSha1, nodeMac } from "../../regional/common/hmac.ts";
import { FRAME_HEADER_BYTES, FrameType } from "../../shared/backbone/frame.ts";
import { mintHint } from "../../shared/hint/codec.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { encodeBindingRequest } from "../../shared/stun/writer.ts";
import { frame, type ReadResult, Rfc4571Reader } from "../../shared/tcp/rfc4571.ts";

const FLOWS = Number(process.env.FLOWS ?? 32);
const RATE = Number(process.env.RATE ?? 200); // packets/s per flow
const SECONDS = Number(process.env.SECONDS ?? 5);
const IDLE_FLOWS = Number(process.env.IDLE_FLOWS ?? 2000);
const HINT_KEYS = `1:${randomBytes(32).toString("base64")}`;
const mac = nodeMac(parseKeyring(HINT_KEYS, "k", 15));
const log = (m: string): void => void process.stderr.write(`${m}\n`);

async function freePort(kind: "udp" | "tcp"): Promise<number> {
  if (kind === "tcp") {
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
    const p = (s.address() as net.AddressInfo).port;
    await new Promise<void>((r) => s.close(() => r()));
    return p;
  }
  const s = createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  const p = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

function check(): Buffer {
  const ufrag = mintHint({ clusterId: 1, transceiverId: 1, random: randomBytes(4) }, mac);
  return Buffer.from(
    encodeBindingRequest({
      transactionId: randomBytes(12),
      username: `${ufrag}:bench`,
      password: "0123456789abcdefghijkl",
      hmacSha1,
    }),
  );
}

/** The stand-in transceiver: answers a Binding request with pathValidated, echoes everything else. */
async function echo(): Promise<{ port: number; close(): void }> {
  const s = createSocket("udp4");
  s.on("message", (m, r) => {
    if (m.length > FRAME_HEADER_BYTES && m[FRAME_HEADER_BYTES]! < 4) {
      const v = Buffer.from(m.subarray(0, FRAME_HEADER_BYTES));
      v[1] = (v[1]! & 0xf0) | FrameType.pathValidated;
      s.send(v, r.port, r.address);
      return;
    }
    s.send(m, r.port, r.address);
  });
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  return { port: s.address().port, close: () => s.close() };
}

function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Result {
  transport: string;
  sent: number;
  received: number;
  cpuSeconds: number;
  packetsPerCpuSecond: number;
  p50_us: number;
  p99_us: number;
}

/** A client: send(buf), and every echoed packet's payload to onPacket. */
interface Flow {
  send(b: Buffer): void;
  close(): void;
}

async function udpFlow(vip: number, onPacket: (b: Buffer) => void): Promise<Flow> {
  const s = createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  s.on("message", onPacket);
  return { send: (b) => s.send(b, vip, "127.0.0.1"), close: () => s.close() };
}

async function tcpFlow(vip: number, onPacket: (b: Buffer) => void): Promise<Flow> {
  const sock = await new Promise<net.Socket>((resolve, reject) => {
    const c = net.connect({ host: "127.0.0.1", port: vip, noDelay: true });
    c.once("connect", () => resolve(c));
    c.once("error", reject);
  });
  const reader = new Rfc4571Reader(65_535);
  sock.on("data", (chunk: Buffer) => {
    reader.push(chunk);
    for (let x: ReadResult = reader.next(); x.kind !== "more"; x = reader.next())
      if (x.kind === "packet") onPacket(Buffer.from(x.bytes));
  });
  sock.on("error", () => {});
  return { send: (b) => sock.write(frame(b)), close: () => sock.destroy() };
}

async function run(transport: "udp" | "tcp", vip: number, pid: number): Promise<Result> {
  const rtts: number[] = [];
  let received = 0;
  const onPacket = (b: Buffer): void => {
    if (b[0] !== 0x80 || b.length < 16) return;
    received++;
    const t0 = b.readDoubleBE(8);
    rtts.push((performance.now() - t0) * 1000);
  };
  const flows: Flow[] = [];
  for (let i = 0; i < FLOWS; i++) {
    const f = transport === "udp" ? await udpFlow(vip, onPacket) : await tcpFlow(vip, onPacket);
    f.send(check());
    flows.push(f);
  }
  await new Promise((r) => setTimeout(r, 300)); // flows open and validated
  const pkt = Buffer.alloc(200);
  pkt[0] = 0x80;
  pkt[1] = 111;
  let sent = 0;
  const cpu0 = cpuSecondsOf(pid);
  const start = performance.now();
  const perTick = Math.max(1, Math.round((RATE * 10) / 1000)); // per flow per 10 ms
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (performance.now() - start > SECONDS * 1000) {
        clearInterval(timer);
        resolve();
        return;
      }
      for (const f of flows) {
        for (let k = 0; k < perTick; k++) {
          const b = Buffer.from(pkt);
          b.writeUInt16BE(sent & 0xffff, 2);
          b.writeDoubleBE(performance.now(), 8);
          f.send(b);
          sent++;
        }
      }
    }, 10);
  });
  await new Promise((r) => setTimeout(r, 500));
  const cpu = cpuSecondsOf(pid) - cpu0;
  for (const f of flows) f.close();
  rtts.sort((a, b) => a - b);
  const q = (p: number): number =>
    Math.round(rtts[Math.min(rtts.length - 1, Math.floor(p * rtts.length))] ?? 0);
  return {
    transport,
    sent,
    received,
    cpuSeconds: cpu,
    packetsPerCpuSecond: Math.round((sent + received) / Math.max(cpu, 0.01)),
    p50_us: q(0.5),
    p99_us: q(0.99),
  };
}

async function idleMemory(vip: number, child: ReturnType<typeof spawn>, lines: string[]): Promise<number> {
  const mem = async (): Promise<number> => {
    const before = lines.length;
    child.stdin!.write("mem\n");
    for (let i = 0; i < 200 && !lines.slice(before).some((l) => l.startsWith("mem ")); i++)
      await new Promise((r) => setTimeout(r, 25));
    return Number(
      lines
        .slice(before)
        .find((l) => l.startsWith("mem "))!
        .split(" ")[1],
    );
  };
  const base = await mem();
  const flows: Flow[] = [];
  for (let i = 0; i < IDLE_FLOWS; i++) {
    const f = await tcpFlow(vip, () => {});
    f.send(check());
    flows.push(f);
  }
  await new Promise((r) => setTimeout(r, 1_000));
  const loaded = await mem();
  for (const f of flows) f.close();
  return Math.round((loaded - base) / IDLE_FLOWS);
}

const dir = mkdtempSync(join(tmpdir(), "tcp-bench-"));
const e = await echo();
const vip = await freePort("udp");
const vipTcp = await freePort("tcp");
const backbone = await freePort("udp");
const topo = {
  version: 1,
  globalVip: `127.0.0.1:${vip}`,
  globalVipTcpPort: vipTcp,
  defaultClusterId: 1,
  clusters: [
    {
      id: 1,
      name: "c1",
      region: "r1",
      continent: "EU",
      latitude: 0,
      longitude: 0,
      signallingUrl: "http://127.0.0.1:1",
      backbone: `127.0.0.1:${await freePort("udp")}`,
      backboneCidrs: ["127.0.0.0/8"],
      capacity: 10,
    },
  ],
  pops: [
    {
      id: 7,
      name: "p7",
      region: "r1",
      latitude: 0,
      longitude: 0,
      vip: `127.0.0.1:${vip}`,
      vipTcpPort: vipTcp,
      backbone: `127.0.0.1:${backbone}`,
      backboneCidrs: ["127.0.0.0/8"],
      clusterId: 1,
    },
  ],
};
const topoFile = join(dir, "topology.json");
writeFileSync(topoFile, JSON.stringify(topo));
const pin = cpus().length >= 2 ? ["taskset", "-c", "0"] : [];
const cmd = [...pin, process.execPath, join(import.meta.dirname, "tcp-pop.ts")];
const child = spawn(cmd[0]!, cmd.slice(1), {
  env: {
    ...process.env,
    RELAY_ROLE: "pop",
    POP_ID: "7",
    TOPOLOGY_FILE: topoFile,
    GR_HINT_KEYS: HINT_KEYS,
    RELAY_TRANSCEIVERS: `1=127.0.0.1:${e.port}`,
    RELAY_WORKERS: "1",
    RELAY_TCP_MAX_CONNECTIONS: String(IDLE_FLOWS + 100),
    RELAY_TCP_MAX_PER_SOURCE: String(IDLE_FLOWS + 100),
    RELAY_MAX_HALF_OPEN_PER_PREFIX: String(IDLE_FLOWS + 100),
  },
  stdio: ["pipe", "pipe", "inherit"],
});
const lines: string[] = [];
child.stdout!.setEncoding("utf8");
child.stdout!.on("data", (d: string) => lines.push(...d.split("\n").filter(Boolean)));
for (let i = 0; i < 400 && !lines.includes("ready"); i++) await new Promise((r) => setTimeout(r, 25));
if (!lines.includes("ready")) throw new Error("the POP did not start");
const popPid =
  pin.length > 0
    ? Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim() || child.pid)
    : child.pid!;

log(`load: ${FLOWS} flows x ${RATE} packets/s x ${SECONDS} s, each way`);
const udp = await run("udp", vip, popPid);
log(`udp: ${JSON.stringify(udp)}`);
const tcp = await run("tcp", vipTcp, popPid);
log(`tcp: ${JSON.stringify(tcp)}`);
const perFlow = await idleMemory(vipTcp, child, lines);
log(`idle TCP flow: ${perFlow} bytes of POP heap each (${IDLE_FLOWS} flows)`);
child.stdin!.write("quit\n");
e.close();

const ratio = (a: number, b: number): string => (b > 0 ? (a / b).toFixed(2) : "n/a");
const out = {
  load: { flows: FLOWS, ratePerFlow: RATE, seconds: SECONDS },
  udp,
  tcp,
  ratios: {
    packetsPerCpuSecond: Number(ratio(tcp.packetsPerCpuSecond, udp.packetsPerCpuSecond)),
    p50: Number(ratio(tcp.p50_us, udp.p50_us)),
    p99: Number(ratio(tcp.p99_us, udp.p99_us)),
  },
  idleTcpFlowHeapBytes: perFlow,
};
writeFileSync(join(import.meta.dirname, "results-tcp.json"), `${JSON.stringify(out, null, 2)}\n`);
process.stdout.write(
  [
    `| transport | packets/POP CPU-s | round trip p50 | p99 | delivered |`,
    `|---|---|---|---|---|`,
    ...[udp, tcp].map(
      (r) =>
        `| ${r.transport} | ${r.packetsPerCpuSecond} | ${r.p50_us} µs | ${r.p99_us} µs | ${((100 * r.received) / Math.max(1, r.sent)).toFixed(2)} % |`,
    ),
    `| TCP / UDP | ${out.ratios.packetsPerCpuSecond} | ${out.ratios.p50} | ${out.ratios.p99} | |`,
    "",
    `POP heap per idle, validated TCP flow: ${perFlow} bytes (${IDLE_FLOWS} connections).`,
    "",
  ].join("\n"),
);
process.exit(0);
