// `node bench/transceiver/bridge.ts`: the transceiver's CPU per echoed audio frame on the backend
// WebSocket bridge alone, batches negotiated or not, in one run: BENCH_BRIDGES (150) bridges to an
// echo agent in its own process (ECHO_AUDIO_BATCH=1 or 0), each sending `k` 120-byte frames per
// 20 ms turn (k=1: a quiet loop; k=4: the backlog after an 80 ms stall), for BENCH_SECONDS (5)
// per case, cases interleaved over BENCH_ROUNDS (2). CPU is this process's, per frame echoed.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { AudioCodec, newAudioFrameHeader } from "../../regional/transceiver/backend-protocol.ts";
import { BackendBridge } from "../../regional/transceiver/shell/bridge.ts";

const BRIDGES = Number(process.env.BENCH_BRIDGES ?? 150);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));

async function agent(batch: boolean): Promise<{ url: string; stop(): void }> {
  const p = spawn(process.execPath, [here("../../regional/echo-agent/main.ts")], {
    env: {
      ...process.env,
      ECHO_AGENT_LISTEN: "127.0.0.1:0",
      ECHO_AUDIO_BATCH: batch ? "1" : "0",
      LOG_LEVEL: "error",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve) => {
    let out = "";
    p.stdout!.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.includes('"ready"'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  return { url, stop: () => p.kill("SIGINT") };
}

async function measure(url: string, k: number): Promise<{ us: number; batching: boolean }> {
  let echoed = 0;
  const handlers = {
    onAudio: () => {
      echoed++;
    },
    onEvent: () => {},
    onDrop: () => {},
    onError: () => {},
    onClose: () => {},
  };
  const opts = { url, headers: {}, queueBytes: 256 * 1024, connectTimeoutMs: 5000 };
  const bridges = Array.from({ length: BRIDGES }, () => new BackendBridge(opts, handlers));
  while (bridges.some((b) => b.state !== "open")) await new Promise((r) => setTimeout(r, 20));
  const h = newAudioFrameHeader();
  h.codec = AudioCodec.opus;
  const payload = Buffer.alloc(120, 7);
  let seq = 0;
  const turn = (): void => {
    for (const b of bridges) {
      for (let i = 0; i < k; i++) {
        h.sequenceNumber = seq++ & 0xffff;
        b.sendAudio(h, payload);
      }
    }
  };
  const timer = setInterval(turn, 20);
  await new Promise((r) => setTimeout(r, 1000));
  const e0 = echoed;
  const c0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const c = process.cpuUsage(c0);
  const frames = echoed - e0;
  clearInterval(timer);
  const batching = bridges[0]!.batching;
  for (const b of bridges) b.close();
  return { us: (c.user + c.system) / Math.max(1, frames), batching };
}

const agents = { batch: await agent(true), single: await agent(false) };
const rows: Record<string, number[]> = {};
for (let r = 0; r < ROUNDS; r++) {
  for (const k of [1, 4]) {
    for (const [name, a] of Object.entries(agents)) {
      const m = await measure(a.url, k);
      const key = `${name} (batching ${m.batching ? "on" : "off"}), ${k} frame(s)/turn`;
      rows[key] = [...(rows[key] ?? []), m.us];
    }
  }
}
for (const a of Object.values(agents)) a.stop();
for (const [key, xs] of Object.entries(rows)) {
  const med = [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  console.log(
    `${key.padEnd(42)} ${med.toFixed(1)} µs CPU per echoed frame (rounds ${xs.map((x) => x.toFixed(1)).join(" ")})`,
  );
}
