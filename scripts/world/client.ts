// One call from a site, run inside the site's namespace by the world runner: a werift peer bound
// to the site's address POSTs its offer to the edge (with the site's location as request.cf),
// keeps only the answer's Global Relay VIP candidate ("relay") or only the cluster's own VIP
// ("direct", the public path a user without the relay has), then sends 50 audio packets/s that
// the echo agent returns. Each packet carries its sequence number and send time, so the client
// measures RTT, jitter, loss and the longest media gap itself. Prints JSON lines on stdout:
// {event:"answered"}, {event:"connected"}, {event:"result"}. Config: WORLD_CLIENT (JSON).
import { performance } from "node:perf_hooks";
import { MediaStreamTrack, RTCPeerConnection, RtpHeader, RtpPacket, useOPUS } from "werift";
import { guardDtlsServerRole } from "../../regional/transceiver/shell/dtls-server-guard.ts";
import { disableStunFallback } from "../../regional/transceiver/shell/werift-glue.ts";
import { clientStats, MediaMeter } from "./core/meter.ts";

interface ClientConfig {
  edge: string;
  apiKey: string;
  ip: string;
  mode: "relay" | "direct";
  cf: Record<string, unknown>;
  /** Media duration after the first echo, ms. */
  mediaMs: number;
  vip: string;
}

const cfg = JSON.parse(process.env.WORLD_CLIENT ?? "{}") as ClientConfig;
const emit = (o: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};
const fail = (stage: string, e: unknown): never => {
  emit({ event: "error", stage, error: String((e as Error)?.message ?? e), dtls: dtlsState() });
  process.exit(1);
};
const deadline = setTimeout(() => fail("deadline", "the call did not finish in time"), cfg.mediaMs + 40_000);

const pc = new RTCPeerConnection({
  iceServers: [],
  iceUseIpv4: false,
  iceUseIpv6: false,
  iceAdditionalHostAddresses: [cfg.ip],
  iceInterfaceAddresses: { udp4: cfg.ip },
  bundlePolicy: "max-bundle",
  codecs: { audio: [useOPUS({ parameters: "minptime=10;useinbandfec=1" })] },
});
const track = new MediaStreamTrack({ kind: "audio" });
const tr = pc.addTransceiver(track, { direction: "sendrecv" });
pc.createDataChannel("oai-events");
disableStunFallback(pc);
let dtlsGuard: ReturnType<typeof guardDtlsServerRole> | null = null;
/** Where the site's DTLS handshake stands, for a failed call's report. */
function dtlsState(): Record<string, unknown> {
  const t = pc.dtlsTransports[0] as unknown as
    | { role?: string; state?: string; dtls?: { connected?: boolean; dtls?: { flight?: number } } }
    | undefined;
  return {
    role: t?.role,
    state: t?.state,
    flight: t?.dtls?.dtls?.flight,
    connected: t?.dtls?.connected,
    guarded: dtlsGuard?.guarded() ?? false,
    ...dtlsGuard?.counters,
  };
}
const meter = new MediaMeter();
tr.onTrack.subscribe((t) =>
  t.onReceiveRtp.subscribe((rtp) => meter.received(rtp.payload, performance.now())),
);

const offer = await pc.createOffer();
await pc.setLocalDescription(offer);
dtlsGuard = guardDtlsServerRole(pc); // the transports exist now; DTLS starts only after the answer
const localPort = Number(/ udp \d+ \S+ (\d+) typ host/.exec(pc.localDescription!.sdp)?.[1] ?? 0);
const headers = {
  "content-type": "application/sdp",
  authorization: `Bearer ${cfg.apiKey}`,
  "mf-cf-blob": JSON.stringify({ ...cfg.cf, clientAcceptEncoding: "" }),
};
const t0 = performance.now();
const res = await fetch(`${cfg.edge}/v1/realtime/calls`, {
  method: "POST",
  body: pc.localDescription!.sdp,
  headers,
}).catch((e) => fail("offer", e));
const answer = await res.text();
if (res.status !== 201) fail("offer", `edge answered ${res.status}: ${answer.slice(0, 300)}`);
const callId = (res.headers.get("location") ?? "").split("/").pop() ?? "";
const cluster = res.headers.get("x-relay-cluster");
const answeredMs = performance.now() - t0;
emit({ event: "answered", callId, cluster, localPort, answeredMs });

// Keep one candidate: the Global Relay VIP, or the cluster's own address.
const keep = (line: string): boolean => {
  if (!line.startsWith("a=candidate:")) return true;
  const isVip = line.includes(` ${cfg.vip.replace(":", " ")} typ`);
  return cfg.mode === "relay" ? isVip : !isVip;
};
const sdp = answer.split("\r\n").filter(keep).join("\r\n");
const tAnswer = performance.now();
await pc.setRemoteDescription({ type: "answer", sdp }).catch((e) => fail("answer", e));
await pc.connectionStateChange
  .watch((s) => s === "connected", 20_000)
  .catch(() =>
    fail("connect", `ICE/DTLS did not connect (state ${pc.connectionState}, ICE ${pc.iceConnectionState})`),
  );
const connectMs = performance.now() - tAnswer;
emit({ event: "connected", connectMs });

let seq = 0;
const sender = setInterval(() => {
  const header = new RtpHeader({ sequenceNumber: seq & 0xffff, timestamp: seq * 960, payloadType: 111 });
  track.writeRtp(new RtpPacket(header, meter.payload(seq, performance.now())));
  seq++;
}, 20);
const firstAudio = await meter.firstEcho(15_000).catch(() => fail("audio", "no echoed audio in 15 s"));
const firstAudioMs = firstAudio - t0;
await new Promise((r) => setTimeout(r, cfg.mediaMs));
let transceiver: unknown = null;
try {
  const st = await fetch(`${cfg.edge}/v1/realtime/calls/${callId}`, { headers });
  const b = (await st.json()) as Record<string, unknown>;
  transceiver = {
    popId: b.popId,
    clientAddress: b.clientAddress,
    iceRttMs: b.iceRttMs,
    timings: b.timings,
    packets: b.packets,
    addressChanges: b.addressChanges,
  };
} catch {}
clearInterval(sender);
const lastEchoAgoMs = performance.now() - meter.lastAt;
await new Promise((r) => setTimeout(r, 1_000)); // echoes in flight
emit({
  event: "result",
  mode: cfg.mode,
  callId,
  cluster,
  localPort,
  answeredMs,
  connectMs,
  firstAudioMs,
  lastEchoAgoMs,
  ...clientStats(meter, seq),
  dtls: dtlsState(),
  transceiver,
});
await fetch(`${cfg.edge}/v1/realtime/calls/${callId}`, { method: "DELETE", headers }).catch(() => {});
clearTimeout(deadline);
await pc.close().catch(() => {});
process.exit(0);
