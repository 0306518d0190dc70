// Benchmark client process (forked by run.ts): N real werift client peers on 127.0.0.1, each with
// its own socket. In "gr" mode they reach the transceiver's socket through the relay's part, played
// in this process, and signal over the signed HTTP API; in "werift" mode each reaches its own
// server socket through a plain proxy, with offers relayed over IPC. That plumbing (client-side.ts)
// is batched by default: a few back sockets (gr: relay workers) on recvmmsg/sendmmsg take what the
// clients send in-process and return the replies through one front socket, so the client process
// gets out of the way of the server it measures.
// Media: 50 packets/s per session of 120-byte (Opus-sized) payloads, 1 data-channel ping/s, from
// one shared ticker, the sessions spread over BENCH_PHASES slots of each 20 ms frame. Echoed
// RTP is counted (and dropped) where it enters this process, in the plumbing (both modes alike),
// so the clients spend no CPU decrypting echoes.
// The clients use the fast AES-CM too (keeping werift's GCM-first offer, so the werift baseline
// still negotiates its default AES-GCM): against the transceiver, which offers AES-CM alone,
// werift's own AES-CM would make this process the bottleneck. For the same reason they send
// through RtpOut (the transceiver's audio send path, werift's own when extensions are negotiated).
import { randomBytes } from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { RTCDataChannel } from "werift";
import { MediaStreamTrack, RTCPeerConnection, useOPUS, usePCMU } from "werift";
import { RtpOut } from "../../regional/transceiver/shell/rtp-out.ts";
import { disableStunFallback } from "../../regional/transceiver/shell/werift-glue.ts";
import { installFastSrtp } from "../../regional/transceiver/srtp/install.ts";
import { chooseClientSide, handOver } from "./client-side.ts";
import type { ClientSide, Leg } from "./proxy-dgram.ts";
import { ipcSignal, type Signal, signedHttpSignal } from "./signal.ts";

installFastSrtp("werift");

/** BENCH_PHASES: slots of the 20 ms frame the sessions' sends are spread over (1: all at once). */
const PHASES = Math.max(1, Math.min(20, Number(process.env.BENCH_PHASES ?? 1)));

type Msg = { cmd: string; id?: number; sdp?: string; [k: string]: unknown };
const send = (m: unknown): void => {
  process.send?.(m);
};
const eld = monitorEventLoopDelay({ resolution: 5 });
eld.enable();

interface Client {
  pc: RTCPeerConnection;
  track: MediaStreamTrack;
  out: RtpOut;
  dc: RTCDataChannel;
  seq: number;
  sent: number;
  pongs: number;
  /** The client's host candidate port (its one socket). */
  port: number;
  leg?: Leg;
}

const clients: Client[] = [];
const PAYLOAD = 120;

function makeClient(): Client {
  const pc = new RTCPeerConnection({
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ["127.0.0.1"],
    iceInterfaceAddresses: { udp4: "127.0.0.1" },
    bundlePolicy: "max-bundle",
    codecs: { audio: [useOPUS({ parameters: "minptime=10;useinbandfec=1" }), usePCMU()] },
  });
  const track = new MediaStreamTrack({ kind: "audio" });
  const t = pc.addTransceiver(track, { direction: "sendrecv" });
  const dc = pc.createDataChannel("oai-events");
  disableStunFallback(pc);
  const c: Client = { pc, track, out: new RtpOut(t.sender), dc, seq: 0, sent: 0, pongs: 0, port: 0 };
  dc.onMessage.subscribe((m) => {
    if (String(m).includes("pong")) c.pongs++;
  });
  return c;
}

async function connectOne(
  mode: string,
  signal: Signal,
  side: ClientSide,
  transceiver: { host: string; port: number } | undefined,
): Promise<void> {
  const c = makeClient();
  const offer = await c.pc.createOffer();
  await c.pc.setLocalDescription(offer);
  const local = c.pc.localDescription!.sdp;
  const hostPort = (sdp: string): number =>
    Number(/a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+) typ host/.exec(sdp)![1]);
  c.port = hostPort(local);
  if (mode === "gr") c.leg = await side.open(c.port, transceiver!.port);
  // werift mode: the server must reach the client only through the proxy, so it learns the
  // client's address from the proxied checks (peer-reflexive) instead of the offer.
  const offered =
    mode === "werift" ? local.replace(/a=candidate:.*\r\n|a=end-of-candidates\r\n/g, "") : local;
  let answer = await signal(offered, c.leg ? `127.0.0.1:${c.leg.front}` : "");
  if (mode === "werift") {
    // Put the counting proxy between the client and the server's own socket.
    const serverPort = hostPort(answer);
    c.leg = await side.open(c.port, serverPort);
    answer = answer.replaceAll(` 127.0.0.1 ${serverPort} typ host`, ` 127.0.0.1 ${c.leg.front} typ host`);
  }
  handOver(c.pc, c.port, c.leg!.front, side);
  await c.pc.setRemoteDescription({ type: "answer", sdp: answer });
  await c.pc.connectionStateChange.watch((s) => s === "connected", 30_000);
  if (c.dc.readyState !== "open") await c.dc.stateChanged.watch((s) => s === "open", 30_000);
  clients.push(c);
}

const ipc = ipcSignal(send);
let side: ClientSide | undefined;

async function start(m: Msg): Promise<void> {
  const mode = m.mode as string;
  const n = m.n as number;
  const concurrency = m.concurrency as number;
  const server = m.server as { udp?: { host: string; port: number }; http?: string };
  const transceiver = mode === "gr" ? server.udp : undefined;
  const signal = mode === "gr" ? await signedHttpSignal(server.http!, m.secret as string) : ipc.signal;
  side = chooseClientSide(transceiver ?? null);
  send({ cmd: "client-side", description: side.description });
  const t0 = performance.now();
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < n) {
      started++;
      // A session that fails to connect (a starved machine) is left out: `n` says how many did.
      await connectOne(mode, signal, side!, transceiver).catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  send({
    cmd: "connected",
    n: clients.length,
    setupMs: performance.now() - t0,
    ports: side.ports(),
  });
}

async function media(m: Msg): Promise<void> {
  const seconds = m.seconds as number;
  const warmupMs = 2000;
  // One payload buffer for every packet: RtpOut's direct path encrypts it before send() returns
  // (werift's own path, taken otherwise, may read it later: a fresh buffer each then).
  const shared = randomBytes(PAYLOAD);
  const payload = (c: Client, seq: number): Buffer => {
    const b = c.out.direct ? shared : Buffer.from(shared);
    b.writeUInt32BE(seq, 0);
    return b;
  };
  const echoed = (c: Client): number => c.leg?.echoes() ?? 0;
  const echoed0 = clients.map(echoed);
  let slot = 0;
  let windowSent = 0;
  let windowOpen = false;
  // Paced by the clock, not by the timer: a late timer sends what is due (at most 20 slots at
  // once), so the offered rate stays 50 packets/s per session unless the process is starved.
  // Sessions are spread over PHASES slots of the 20 ms frame (session i sends in slot i % PHASES)
  // and their pings over the second, as independent clients are; with one phase (the default,
  // as in every earlier run) each frame's packets of all sessions leave in one burst.
  const startAt = performance.now();
  const slotMs = 20 / PHASES;
  const timer = setInterval(
    () => {
      const due = Math.min(20, Math.floor((performance.now() - startAt) / slotMs) - slot);
      for (let k = 0; k < due; k++) {
        const phase = slot % PHASES;
        const frame = Math.floor(slot / PHASES);
        slot++;
        for (let i = phase; i < clients.length; i += PHASES) {
          const c = clients[i]!;
          const seq = c.seq++;
          c.sent++;
          if (windowOpen) windowSent++;
          c.out.send(111, seq & 0xffff, (seq * 960) >>> 0, false, payload(c, seq));
          if ((frame + i) % 50 === 0 && c.dc.readyState === "open") c.dc.send('{"type":"ping"}');
        }
      }
    },
    Math.min(5, slotMs),
  );
  await new Promise((r) => setTimeout(r, warmupMs));
  windowOpen = true;
  eld.reset();
  const profiler = await startProfile();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const totalEchoed = (): number => clients.reduce((sum, c) => sum + echoed(c), 0);
  const echoedAtOpen = totalEchoed();
  send({ cmd: "window-open" });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  windowOpen = false;
  const windowMs = performance.now() - t0;
  const windowEchoes = totalEchoed() - echoedAtOpen;
  send({ cmd: "window-closed" });
  clearInterval(timer);
  const cpu = process.cpuUsage(cpu0);
  await profiler?.stop();
  await new Promise((r) => setTimeout(r, 1500)); // drain: echoes still in flight
  // Loss over the whole media phase (warm-up included): every packet sent vs every echo back.
  const sent = clients.reduce((s, c) => s + c.sent, 0);
  const received = clients.reduce((s, c, i) => s + echoed(c) - echoed0[i]!, 0);
  const worst = Math.max(...clients.map((c, i) => (c.sent ? 1 - (echoed(c) - echoed0[i]!) / c.sent : 0)));
  send({
    cmd: "media-done",
    sent,
    received,
    worstSessionLoss: Math.max(0, worst),
    pongs: clients.reduce((s, c) => s + c.pongs, 0),
    clientCpuFraction: (cpu.user + cpu.system) / 1000 / windowMs,
    /** The client process's CPU (µs) per session per second of the window. */
    clientCpuUsPerSessionSecond: (cpu.user + cpu.system) / Math.max(1, clients.length * (windowMs / 1000)),
    clientSideCounters: side?.counters() ?? {},
    clientEldP99Ms: eld.percentile(99) / 1e6,
    /** Packets the clients managed to send in the window, against 50 per session per second. */
    windowEchoes,
    offeredRatio: windowSent / Math.max(1, clients.length * 50 * (windowMs / 1000)),
  });
}

/** BENCH_CLIENT_PROFILE=file: a CPU profile of this process over the media window. */
async function startProfile(): Promise<{ stop(): Promise<void> } | undefined> {
  const file = process.env.BENCH_CLIENT_PROFILE;
  if (!file) return undefined;
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return {
    async stop() {
      const { profile } = (await session.post("Profiler.stop")) as { profile: unknown };
      const { writeFileSync } = await import("node:fs");
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

process.on("message", (m: Msg) => {
  void (async () => {
    switch (m.cmd) {
      case "start":
        return start(m);
      case "answer":
        return ipc.answered(m.id!, m.sdp!);
      case "media":
        return media(m);
      case "stop":
        await Promise.all(clients.map((c) => c.pc.close().catch(() => {})));
        side?.close();
        send({ cmd: "stopped" });
        setTimeout(() => process.exit(0), 50);
        return;
    }
  })().catch((e: unknown) => send({ cmd: "error", message: (e as Error).stack ?? String(e) }));
});
send({ cmd: "hello" });
