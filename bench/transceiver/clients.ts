// Benchmark client process (forked by run.ts): N real werift client peers on 127.0.0.1. In "gr"
// mode they reach the transceiver through the frame-wrapping loopback relay (in this process)
// and signal over the signed HTTP API; in "werift" mode they connect straight to per-session
// sockets, with offers relayed over IPC. Media: 50 packets/s per session of 120-byte
// (Opus-sized) payloads, 1 data-channel ping/s; echoes counted per session.
import { randomBytes } from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { RTCDataChannel } from "werift";
import { MediaStreamTrack, RTCPeerConnection, RtpHeader, RtpPacket, useOPUS, usePCMU } from "werift";
import { disableStunFallback } from "../../regional/transceiver/werift-glue.ts";
import { importSigningKey, signRequest } from "../../shared/signing/request.ts";
import { type LoopbackRelay, startLoopbackRelay } from "../../test/transceiver/helpers/loopback-relay.ts";

type Msg = { cmd: string; id?: number; sdp?: string; [k: string]: unknown };
const send = (m: unknown): void => {
  process.send?.(m);
};
const eld = monitorEventLoopDelay({ resolution: 5 });
eld.enable();

interface Client {
  pc: RTCPeerConnection;
  track: MediaStreamTrack;
  dc: RTCDataChannel;
  seq: number;
  sentInWindow: number;
  recvInWindow: number;
  pongs: number;
}

const clients: Client[] = [];
let relay: LoopbackRelay | undefined;
let windowOpen = false;
let windowStartSeq = 0;
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
  const tr = pc.addTransceiver(track, { direction: "sendrecv" });
  const dc = pc.createDataChannel("oai-events");
  disableStunFallback(pc);
  const c: Client = { pc, track, dc, seq: 0, sentInWindow: 0, recvInWindow: 0, pongs: 0 };
  tr.onTrack.subscribe((t) => {
    t.onReceiveRtp.subscribe((rtp) => {
      if (windowOpen && rtp.payload.length >= 4 && rtp.payload.readUInt32BE(0) >= windowStartSeq)
        c.recvInWindow++;
    });
  });
  dc.onMessage.subscribe((m) => {
    if (String(m).includes("pong")) c.pongs++;
  });
  return c;
}

async function connectOne(
  mode: string,
  o: Msg,
  offerId: () => number,
  signal: (sdp: string) => Promise<string>,
): Promise<void> {
  void offerId;
  const c = makeClient();
  const offer = await c.pc.createOffer();
  await c.pc.setLocalDescription(offer);
  const answer = await signal(c.pc.localDescription!.sdp);
  await c.pc.setRemoteDescription({ type: "answer", sdp: answer });
  await c.pc.connectionStateChange.watch((s) => s === "connected", 30_000);
  if (c.dc.readyState !== "open") await c.dc.stateChanged.watch((s) => s === "open", 30_000);
  clients.push(c);
  void mode;
  void o;
}

const pendingAnswers = new Map<number, (sdp: string) => void>();
let nextId = 1;

async function start(m: Msg): Promise<void> {
  const mode = m.mode as string;
  const n = m.n as number;
  const concurrency = m.concurrency as number;
  let signal: (sdp: string) => Promise<string>;
  if (mode === "gr") {
    const server = m.server as { udp: { host: string; port: number }; http: string };
    relay = await startLoopbackRelay({ transceiver: server.udp, clusterId: 1, transceiverId: 1 });
    const key = await importSigningKey(new Uint8Array(Buffer.from(m.secret as string, "base64")));
    const vip = `${relay.vip.host}:${relay.vip.port}`;
    signal = async (sdp) => {
      const body = JSON.stringify({ sdp, client: { continent: "EU" }, ingress: { vip, popId: 1 } });
      const headers = await signRequest(
        key,
        "POST",
        "/v1/sessions",
        new TextEncoder().encode(body),
        Date.now(),
        randomBytes(16).toString("base64url"),
      );
      const r = await fetch(`${server.http}/v1/sessions`, {
        method: "POST",
        body,
        headers: { ...headers, "content-type": "application/json" },
      });
      if (r.status !== 201) throw new Error(`create ${r.status}: ${await r.text()}`);
      return ((await r.json()) as { sdp: string }).sdp;
    };
  } else {
    signal = (sdp) =>
      new Promise((resolve) => {
        const id = nextId++;
        pendingAnswers.set(id, resolve);
        send({ cmd: "offer", id, sdp });
      });
  }
  const t0 = performance.now();
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < n) {
      started++;
      await connectOne(mode, m, () => nextId, signal);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  send({ cmd: "connected", n: clients.length, setupMs: performance.now() - t0 });
}

async function media(m: Msg): Promise<void> {
  const seconds = m.seconds as number;
  const warmupMs = 2000;
  const filler = randomBytes(PAYLOAD - 4);
  const payload = (seq: number): Buffer => {
    const b = Buffer.allocUnsafe(PAYLOAD);
    b.writeUInt32BE(seq, 0);
    filler.copy(b, 4);
    return b;
  };
  let tick = 0;
  const timer = setInterval(() => {
    tick++;
    for (const c of clients) {
      const seq = c.seq++;
      if (windowOpen && seq >= windowStartSeq) c.sentInWindow++;
      c.track.writeRtp(
        new RtpPacket(
          new RtpHeader({ sequenceNumber: seq & 0xffff, timestamp: (seq * 960) >>> 0, payloadType: 111 }),
          payload(seq),
        ),
      );
      if (tick % 50 === 0 && c.dc.readyState === "open") c.dc.send('{"type":"ping"}');
    }
  }, 20);
  await new Promise((r) => setTimeout(r, warmupMs));
  // Window: packets from this sequence number on (every client sends in lockstep).
  windowStartSeq = Math.max(...clients.map((c) => c.seq));
  windowOpen = true;
  eld.reset();
  const cpu0 = process.cpuUsage();
  send({ cmd: "window-open" });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  clearInterval(timer);
  const cpu = process.cpuUsage(cpu0);
  await new Promise((r) => setTimeout(r, 1500)); // drain
  windowOpen = false;
  const sent = clients.reduce((s, c) => s + c.sentInWindow, 0);
  const received = clients.reduce((s, c) => s + c.recvInWindow, 0);
  const worst = Math.max(...clients.map((c) => (c.sentInWindow ? 1 - c.recvInWindow / c.sentInWindow : 0)));
  send({
    cmd: "media-done",
    sent,
    received,
    worstSessionLoss: worst,
    pongs: clients.reduce((s, c) => s + c.pongs, 0),
    clientCpuFraction: (cpu.user + cpu.system) / 1000 / (seconds * 1000),
    clientEldP99Ms: eld.percentile(99) / 1e6,
    /** Packets the clients managed to send per second, against 50 per session. */
    offeredRatio: sent / Math.max(1, clients.length * 50 * seconds),
  });
}

process.on("message", (m: Msg) => {
  void (async () => {
    switch (m.cmd) {
      case "start":
        return start(m);
      case "answer":
        pendingAnswers.get(m.id!)?.(m.sdp!);
        pendingAnswers.delete(m.id!);
        return;
      case "media":
        return media(m);
      case "stop":
        await Promise.all(clients.map((c) => c.pc.close().catch(() => {})));
        await relay?.close();
        send({ cmd: "stopped" });
        setTimeout(() => process.exit(0), 50);
        return;
    }
  })().catch((e: unknown) => send({ cmd: "error", message: (e as Error).stack ?? String(e) }));
});
send({ cmd: "hello" });
