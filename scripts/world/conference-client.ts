// One participant of the world's conference, run inside a site's namespace by the runner: a
// werift peer at the site's address creates a call through the edge (owner) or joins one
// (joiner: POST /v1/realtime/calls/{id}/participants), keeps only the Global Relay VIP candidate,
// and sends its tone in bursts (core/conference.ts) until told to stop on stdin. It records the
// level of the other's tone in each frame it receives. Stdin lines: "stop" (stop sending, read
// the hub's or the leg's status, print the result), "end" (leave or end the call, exit). Prints
// JSON lines: {event:"connected"}, {event:"result"}, {event:"error"}. Config: WORLD_CLIENT (JSON).
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { MediaStreamTrack, RTCPeerConnection, RtpHeader, RtpPacket, useOPUS } from "werift";
import { AudioCodec } from "../../regional/transceiver/backend-protocol.ts";
import { guardDtlsServerRole } from "../../regional/transceiver/shell/dtls-server-guard.ts";
import { MixCodecs } from "../../regional/transceiver/shell/opus-codecs.ts";
import { disableStunFallback } from "../../regional/transceiver/shell/werift-glue.ts";
import { goertzel, TONE_AMPLITUDE, toneOn } from "./core/conference.ts";

interface ConferenceClientConfig {
  edge: string;
  apiKey: string;
  ip: string;
  cf: Record<string, unknown>;
  vip: string;
  /** Absent: create the call (owner); present: join it. */
  callId?: string;
  /** The tone this participant sends and the one it listens for. */
  freq: number;
  farFreq: number;
}

const cfg = JSON.parse(process.env.WORLD_CLIENT ?? "{}") as ConferenceClientConfig;
const emit = (o: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};
const fail = (stage: string, e: unknown): never => {
  emit({ event: "error", stage, error: String((e as Error)?.message ?? e) });
  process.exit(1);
};
const deadline = setTimeout(() => fail("deadline", "the participant did not finish in time"), 120_000);
const wall = (): number => performance.timeOrigin + performance.now();

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
// Frames as they arrive (wall time, payload); decoded after the call, off the receive path.
const rx: { at: number; payload: Buffer }[] = [];
tr.onTrack.subscribe((t) =>
  t.onReceiveRtp.subscribe((rtp) => {
    if (rx.length < 10_000) rx.push({ at: wall(), payload: Buffer.from(rtp.payload) });
  }),
);

await pc.setLocalDescription(await pc.createOffer());
guardDtlsServerRole(pc);
const headers = {
  authorization: `Bearer ${cfg.apiKey}`,
  "mf-cf-blob": JSON.stringify({ ...cfg.cf, clientAcceptEncoding: "" }),
};
const path = cfg.callId ? `/v1/realtime/calls/${cfg.callId}/participants` : "/v1/realtime/calls";
const t0 = performance.now();
const res = await fetch(`${cfg.edge}${path}`, {
  method: "POST",
  body: pc.localDescription!.sdp,
  headers: { ...headers, "content-type": "application/sdp" },
}).catch((e) => fail("offer", e));
const answer = await res.text();
if (res.status !== 201) fail("offer", `edge answered ${res.status}: ${answer.slice(0, 300)}`);
const location = res.headers.get("location") ?? "";
const callId = cfg.callId ?? location.split("/").pop() ?? "";
const cluster = res.headers.get("x-relay-cluster");
const answeredMs = performance.now() - t0;
const vip = ` ${cfg.vip.replace(":", " ")} typ`;
const sdp = answer
  .split("\r\n")
  .filter((l) => !l.startsWith("a=candidate:") || l.includes(vip))
  .join("\r\n");
await pc.setRemoteDescription({ type: "answer", sdp }).catch((e) => fail("answer", e));
await pc.connectionStateChange
  .watch((s) => s === "connected", 30_000)
  .catch(() => fail("connect", `ICE/DTLS did not connect (state ${pc.connectionState})`));
const connectedAt = wall();
emit({ event: "connected", callId, location, cluster, answeredMs, joinMs: performance.now() - t0 });

// The burst pattern starts at this participant's connect; each burst's first frame is an onset.
const enc = new MixCodecs(AudioCodec.opus);
const pcm = new Int16Array(960);
const out = new Uint8Array(1500);
const sentOnsets: number[] = [];
let seq = 0;
let on = false;
let phase = 0;
const sender = setInterval(() => {
  const now = wall();
  const tone = toneOn(now, connectedAt);
  if (tone && !on && sentOnsets.length < 1000) sentOnsets.push(now);
  on = tone;
  for (let i = 0; i < 960; i++)
    pcm[i] = tone ? Math.round(TONE_AMPLITUDE * Math.sin((2 * Math.PI * cfg.freq * (phase + i)) / 48000)) : 0;
  phase += 960;
  const len = enc.encode(pcm, out);
  const header = new RtpHeader({
    sequenceNumber: seq & 0xffff,
    timestamp: (seq * 960) >>> 0,
    payloadType: 111,
  });
  track.writeRtp(new RtpPacket(header, Buffer.from(out.subarray(0, len))));
  seq++;
}, 20);

const statusOf = async (): Promise<unknown> => {
  const url = cfg.callId ? `${cfg.edge}${location}` : `${cfg.edge}/v1/realtime/calls/${callId}/participants`;
  try {
    const r = await fetch(url, { headers });
    return { status: r.status, body: await r.json() };
  } catch (e) {
    return { error: String(e) };
  }
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line === "stop") {
    clearInterval(sender);
    await new Promise((r) => setTimeout(r, 1_000)); // frames in flight
    const dec = new MixCodecs(AudioCodec.opus);
    const frame = new Int16Array(5760);
    const times: number[] = [];
    const levels: number[] = [];
    for (const f of rx) {
      const n = dec.decode(0, AudioCodec.opus, f.payload, f.payload.length, frame);
      times.push(Math.round(f.at * 10) / 10);
      levels.push(Math.round(goertzel(frame, cfg.farFreq, 48000, Math.min(n, 960))));
    }
    dec.close();
    emit({
      event: "result",
      callId,
      location,
      cluster,
      connectedAt,
      sentOnsets,
      rx: { times, levels },
      status: await statusOf(),
    });
  } else if (line === "end") {
    const url = cfg.callId ? `${cfg.edge}${location}` : `${cfg.edge}/v1/realtime/calls/${callId}`;
    await fetch(url, { method: "DELETE", headers }).catch(() => {});
    break;
  }
}
enc.close();
clearTimeout(deadline);
await pc.close().catch(() => {});
process.exit(0);
