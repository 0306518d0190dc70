// Benchmark client process (forked by run.ts): N real werift client peers on 127.0.0.1. In "gr"
// mode each reaches the transceiver's one socket through a per-session framing proxy (the relay's
// part, in this process) and signals over the signed HTTP API; in "werift" mode each reaches its
// own server socket through a plain per-session proxy, with offers relayed over IPC. Media: 50 packets/s per session of 120-byte
// (Opus-sized) payloads, 1 data-channel ping/s. Echoed RTP is counted (and dropped) where it
// enters this process, at the per-session proxy (both modes alike), so the clients
// spend no CPU decrypting echoes: the client process is then rarely what limits the run.
// The clients use the fast AES-CM too (keeping werift's GCM-first offer, so the werift baseline
// still negotiates its default AES-GCM): against the transceiver, which offers AES-CM alone,
// werift's own AES-CM would make this process the bottleneck. For the same reason they send
// through RtpOut (the transceiver's audio send path, werift's own when extensions are negotiated).
import { randomBytes } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { RTCDataChannel } from "werift";
import { MediaStreamTrack, RTCPeerConnection, useOPUS, usePCMU } from "werift";
import { RtpOut } from "../../regional/transceiver/shell/rtp-out.ts";
import { disableStunFallback } from "../../regional/transceiver/shell/werift-glue.ts";
import { installFastSrtp } from "../../regional/transceiver/srtp/install.ts";
import { parseIpv4, writeIpv4 } from "../../shared/backbone/address.ts";
import {
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  FrameType,
  newFrameHeader,
} from "../../shared/backbone/frame.ts";
import { importSigningKeys, signRequest } from "../../shared/signing/request.ts";
import { keyringOf } from "../../test/support/signed-call.ts";

installFastSrtp("werift");

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
  proxy?: CountingProxy | FramingProxy;
}

/** werift mode: stands between one client and its server socket, counting and dropping echoed RTP. */
class CountingProxy {
  front!: Socket;
  back!: Socket;
  client: { port: number; address: string } | null = null;
  rtp = 0;
  static async start(serverPort: number): Promise<CountingProxy> {
    const p = new CountingProxy();
    const bind = async () => {
      const s = createSocket({ type: "udp4", recvBufferSize: 1 << 20 });
      await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
      return s;
    };
    p.front = await bind();
    p.back = await bind();
    p.back.connect(serverPort, "127.0.0.1");
    await new Promise((r) => p.back.once("connect", r));
    p.front.on("message", (msg, from) => {
      p.client = from;
      p.back.send(msg);
    });
    p.back.on("message", (msg) => {
      const b0 = msg[0] ?? 0;
      const pt = msg[1] ?? 0;
      if (b0 >= 128 && b0 <= 191 && (pt < 192 || pt > 223)) {
        p.rtp++;
        return;
      }
      if (p.client) p.front.send(msg, p.client.port, p.client.address);
    });
    return p;
  }
  close(): void {
    this.front.close();
    this.back.close();
  }
}

/**
 * gr mode: the relay's part for one client, built like CountingProxy so both modes have the same
 * client-side plumbing: the client sends to `front` (the answer's candidate, via ingress.vip);
 * `back` wraps each datagram in a backbone frame for the transceiver's one socket and unwraps the
 * replies, counting and dropping echoed RTP.
 */
class FramingProxy {
  front!: Socket;
  back!: Socket;
  client: { port: number; address: string } | null = null;
  rtp = 0;
  readonly #h = newFrameHeader();
  readonly #header = Buffer.alloc(FRAME_HEADER_BYTES);
  static async start(transceiver: { host: string; port: number }): Promise<FramingProxy> {
    const p = new FramingProxy();
    const bind = async () => {
      const s = createSocket({ type: "udp4", recvBufferSize: 1 << 20 });
      await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
      return s;
    };
    p.front = await bind();
    p.back = await bind();
    p.back.connect(transceiver.port, transceiver.host);
    await new Promise((r) => p.back.once("connect", r));
    p.front.on("message", (msg, from) => {
      if (!p.client) {
        p.client = from;
        const h = p.#h;
        h.type = FrameType.data;
        h.popId = 1;
        h.clusterId = 1;
        h.transceiverId = 1;
        h.clientPort = from.port;
        writeIpv4(h.clientIp, parseIpv4(from.address));
        encodeFrameHeader(p.#header, 0, h);
      }
      p.back.send([p.#header, msg]);
    });
    p.back.on("message", (msg) => {
      if (msg.length <= FRAME_HEADER_BYTES || (msg[1]! & 15) !== FrameType.data) return;
      const b0 = msg[FRAME_HEADER_BYTES]!;
      const pt = msg[FRAME_HEADER_BYTES + 1] ?? 0;
      if (b0 >= 128 && b0 <= 191 && (pt < 192 || pt > 223)) {
        p.rtp++;
        return;
      }
      if (p.client) p.front.send(msg.subarray(FRAME_HEADER_BYTES), p.client.port, p.client.address);
    });
    return p;
  }
  close(): void {
    this.front.close();
    this.back.close();
  }
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
  signal: (sdp: string, vip: string) => Promise<string>,
  transceiver: { host: string; port: number } | undefined,
): Promise<void> {
  const c = makeClient();
  const offer = await c.pc.createOffer();
  await c.pc.setLocalDescription(offer);
  const local = c.pc.localDescription!.sdp;
  const hostPort = (sdp: string): number =>
    Number(/a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+) typ host/.exec(sdp)![1]);
  c.port = hostPort(local);
  if (mode === "gr") c.proxy = await FramingProxy.start(transceiver!);
  // werift mode: the server must reach the client only through the proxy, so it learns the
  // client's address from the proxied checks (peer-reflexive) instead of the offer.
  const offered =
    mode === "werift" ? local.replace(/a=candidate:.*\r\n|a=end-of-candidates\r\n/g, "") : local;
  let answer = await signal(offered, c.proxy ? `127.0.0.1:${c.proxy.front.address().port}` : "");
  if (mode === "werift") {
    // Put the counting proxy between the client and the server's own socket.
    const serverPort = hostPort(answer);
    c.proxy = await CountingProxy.start(serverPort);
    answer = answer.replaceAll(
      ` 127.0.0.1 ${serverPort} typ host`,
      ` 127.0.0.1 ${c.proxy.front.address().port} typ host`,
    );
  }
  await c.pc.setRemoteDescription({ type: "answer", sdp: answer });
  await c.pc.connectionStateChange.watch((s) => s === "connected", 30_000);
  if (c.dc.readyState !== "open") await c.dc.stateChanged.watch((s) => s === "open", 30_000);
  clients.push(c);
}

const pendingAnswers = new Map<number, (sdp: string) => void>();
let nextId = 1;

async function start(m: Msg): Promise<void> {
  const mode = m.mode as string;
  const n = m.n as number;
  const concurrency = m.concurrency as number;
  let signal: (sdp: string, vip: string) => Promise<string>;
  let transceiver: { host: string; port: number } | undefined;
  if (mode === "gr") {
    const server = m.server as { udp: { host: string; port: number }; http: string };
    transceiver = server.udp;
    const key = await importSigningKeys(keyringOf(new Uint8Array(Buffer.from(m.secret as string, "base64"))));
    signal = async (sdp, vip) => {
      const body = JSON.stringify({ sdp, client: { continent: "EU" }, ingress: { vip, popId: 1 } });
      const headers = await signRequest(
        key,
        {
          method: "POST",
          pathAndQuery: "/v1/calls",
          body: new TextEncoder().encode(body),
          target: "transceiver:1/1",
        },
        Date.now(),
        randomBytes(16).toString("base64url"),
      );
      const r = await fetch(`${server.http}/v1/calls`, {
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
      // A session that fails to connect (a starved machine) is left out: `n` says how many did.
      await connectOne(mode, signal, transceiver).catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  send({
    cmd: "connected",
    n: clients.length,
    setupMs: performance.now() - t0,
    ports: clients.flatMap((c) =>
      c.proxy ? [c.proxy.front.address().port, c.proxy.back.address().port] : [],
    ),
  });
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
  const echoed = (c: Client): number => c.proxy?.rtp ?? 0;
  const echoed0 = clients.map(echoed);
  let tick = 0;
  let windowSent = 0;
  let windowOpen = false;
  // Paced by the clock, not by the timer: a late timer sends what is due (at most 5 ticks at
  // once), so the offered rate stays 50 packets/s per session unless the process is starved.
  const startAt = performance.now();
  const timer = setInterval(() => {
    const due = Math.min(5, Math.floor((performance.now() - startAt) / 20) - tick);
    for (let k = 0; k < due; k++) {
      tick++;
      for (const c of clients) {
        const seq = c.seq++;
        c.sent++;
        if (windowOpen) windowSent++;
        c.out.send(111, seq & 0xffff, (seq * 960) >>> 0, false, payload(seq));
        if (tick % 50 === 0 && c.dc.readyState === "open") c.dc.send('{"type":"ping"}');
      }
    }
  }, 5);
  await new Promise((r) => setTimeout(r, warmupMs));
  windowOpen = true;
  eld.reset();
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
    clientEldP99Ms: eld.percentile(99) / 1e6,
    /** Packets the clients managed to send in the window, against 50 per session per second. */
    windowEchoes,
    offeredRatio: windowSent / Math.max(1, clients.length * 50 * (windowMs / 1000)),
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
        for (const c of clients) c.proxy?.close();
        send({ cmd: "stopped" });
        setTimeout(() => process.exit(0), 50);
        return;
    }
  })().catch((e: unknown) => send({ cmd: "error", message: (e as Error).stack ?? String(e) }));
});
send({ cmd: "hello" });
