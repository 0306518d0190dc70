// One real call for the hostile suites: echo agent, transceiver, cluster relay and POP (in this
// process, real sockets), a werift client whose only way to the VIP is the Tap (where the attacker
// copies its checks), plus what the attacker and the assertions need: an audio talker that counts
// the echo, spoofing from many 127/8 sources in a child process, metric and heap readers.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { type EchoAgent, startEchoAgent } from "../../../regional/echo-agent/agent.ts";
import { Relay } from "../../../regional/relay/shell/relay.ts";
import type { TcpLimits } from "../../../regional/relay/shell/tcp-limits.ts";
import { configWithDefaults } from "../../../regional/transceiver/config.ts";
import type { PathLimits } from "../../../regional/transceiver/core/paths.ts";
import { startTransceiver, type Transceiver } from "../../../regional/transceiver/transceiver.ts";
import { formatKeyring } from "../../../shared/keys.ts";
import { ports, relayConfig, topology } from "../../relay/harness.ts";
import { signedCaller } from "../../support/signed-call.ts";
import { createTestClient, type TestClient } from "../../transceiver/helpers/client.ts";
import { type CallStatus, quietLog, randomKeyring, sleep, until } from "../../transceiver/helpers/harness.ts";
import { Tap } from "./tap.ts";

export interface CallSystem {
  t: Transceiver;
  pop: Relay;
  cluster: Relay;
  tap: Tap;
  client: TestClient;
  talker: Talker;
  vipPort: number;
  callId: string;
  status(): Promise<CallStatus>;
  close(): Promise<void>;
}

/** Starts everything and connects the call; resolves once the Tap holds both kinds of check. */
export async function startCallSystem(
  o: { pathLimits?: Partial<PathLimits>; vipTcpPort?: number; tcp?: TcpLimits } = {},
): Promise<CallSystem> {
  const hintKeys = randomKeyring(1);
  const clusterSecret = new Uint8Array(randomBytes(32));
  const agent: EchoAgent = await startEchoAgent();
  const t = await startTransceiver(
    configWithDefaults({
      clusterId: 1,
      transceiverId: 1,
      hintKeys,
      callIdKeys: randomKeyring(2),
      clusterSecret,
      backendUrl: agent.url,
    }),
    { log: quietLog, ...(o.pathLimits ? { pathLimits: o.pathLimits } : {}) },
  );
  const p = await ports();
  const topo = topology(p);
  if (o.vipTcpPort !== undefined) topo.pops[0]!.vipTcpPort = o.vipTcpPort;
  const timers = {
    tickMs: 20,
    halfOpenMs: 3000,
    idleMs: 40_000,
    maxLifetimeMs: 3_600_000,
    mirrorRefreshMs: 1000,
  };
  // Tables big enough for every spoofed source: the limits under test are the per-flow ones.
  const limits = { maxFlows: 65_536, maxFlowsPerPrefix: 64, maxHalfOpenPerPrefix: 64 };
  const hintText = formatKeyring(hintKeys.keys);
  const cluster = await Relay.start(
    relayConfig("cluster", topo, {
      hintKeys: hintText,
      timers,
      limits,
      socketBufferBytes: 4 << 20,
      transceivers: [[1, `${t.udpAddress.host}:${t.udpAddress.port}`]],
    }),
    { threads: false, log: quietLog },
  );
  const pop = await Relay.start(
    relayConfig("pop", topo, {
      hintKeys: hintText,
      timers,
      limits,
      socketBufferBytes: 4 << 20,
      ...(o.tcp ? { tcp: o.tcp } : {}),
    }),
    { threads: false, log: quietLog },
  );
  const tap = await Tap.start(p.vip);
  const client = createTestClient();
  const { call } = signedCaller(() => t.httpUrl, clusterSecret);
  const offer = await client.createOffer();
  const r = await call("POST", "/v1/calls", {
    sdp: offer,
    client: { continent: "EU" },
    ingress: { vip: `127.0.0.1:${tap.insidePort}`, popId: 7 },
  });
  if (r.status !== 201) throw new Error(`POST /v1/calls: ${r.status} ${await r.text()}`);
  const j = (await r.json()) as { callId: string; sdp: string };
  await client.setAnswer(j.sdp);
  await client.connected();
  // The attacker's capture: a nominating check and a plain one, both with valid integrity.
  await until(() => tap.check(true) !== undefined && tap.check(false) !== undefined, "captured checks");
  return {
    t,
    pop,
    cluster,
    tap,
    client,
    talker: new Talker(client),
    vipPort: p.vip,
    callId: j.callId,
    status: async () => (await (await call("GET", `/v1/calls/${j.callId}`)).json()) as CallStatus,
    async close() {
      await client.close().catch(() => {});
      tap.close();
      await pop.stop();
      await cluster.stop();
      await t.stop();
      await agent.close();
    },
  };
}

/** The real call's audio: a tagged packet every 20 ms; counts what the echo brings back. */
export class Talker {
  readonly #client: TestClient;
  readonly #sent = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #seq = 0;
  #from = 0;
  constructor(client: TestClient) {
    this.#client = client;
  }
  start(tag: number): void {
    this.#from = this.#client.received.length;
    this.#sent.clear();
    this.#timer = setInterval(() => {
      const p = Buffer.concat([Buffer.from([tag]), randomBytes(99)]);
      this.#sent.add(p.toString("hex"));
      this.#client.sendAudio(p, this.#seq & 0xffff, this.#seq * 960);
      this.#seq++;
    }, 20);
  }
  async stop(): Promise<{ sent: number; echoed: number }> {
    clearInterval(this.#timer);
    await sleep(1000); // the last echoes
    const echoed = new Set(
      this.#client.received
        .slice(this.#from)
        .map((p) => p.payload.toString("hex"))
        .filter((h) => this.#sent.has(h)),
    );
    return { sent: this.#sent.size, echoed: echoed.size };
  }
}

/** One attacker socket on a given 127/8 address, collecting what comes back. */
export async function attackerSocket(host: string): Promise<{ sock: Socket; rx: Buffer[] }> {
  const sock = createSocket("udp4");
  const rx: Buffer[] = [];
  sock.on("message", (m) => rx.push(m));
  await new Promise<void>((r) => sock.bind(0, host, () => r()));
  return { sock, rx };
}

export interface SpoofResult {
  sources: number;
  sentBytes: number;
  receivedBytes: number;
  receivedDatagrams: number;
  answeredSources: number;
  maxRatio: number;
  errors: number;
}

/** Runs the spoofer (spoofer.ts) in its own process, so its socket churn is not this event loop's. */
export function spoof(
  vipPort: number,
  payload: Buffer,
  count: number,
  spreadMs: number,
): Promise<SpoofResult> {
  const script = fileURLToPath(new URL("./spoofer.ts", import.meta.url));
  const child = spawn(
    process.execPath,
    [script, String(vipPort), payload.toString("hex"), String(count), String(spreadMs), "1500"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`spoofer exited with ${code}`));
      else resolve(JSON.parse(out) as SpoofResult);
    });
  });
}

export const metric = async (admin: string, name: string): Promise<number> => {
  const text = await (await fetch(`http://${admin}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(name));
  return line ? Number(line.split(" ").at(-1)) : 0;
};

export const mib = (b: number): number => Math.round((b / 2 ** 20) * 10) / 10;

/** Forces a full GC (flag set at run time, the function taken from a fresh context), then reads the heap. */
export function heapAfterGc(): number {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** A transceiver drop counter by name (0 on a transceiver that has no such reason). */
export const drops = (t: Transceiver, reason: string): number =>
  (t.metrics.drops as Record<string, { value: number } | undefined>)[reason]?.value ?? 0;

/** The session's path count (0 on a transceiver whose sessions do not expose it). */
export const sessionPaths = (t: Transceiver, callId: string): number =>
  (t.calls.get(callId) as { paths?: { pathCount: number } } | undefined)?.paths?.pathCount ?? 0;
