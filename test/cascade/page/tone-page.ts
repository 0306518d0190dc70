// The cascade tests' browser page: sends a pure tone (OscillatorNode → MediaStreamDestination →
// addTrack) on one WebRTC call to the edge and measures, with the same detector the Node tests
// use (test/support/tone.ts), how much 440 Hz and 880 Hz is in what it receives. Bundled by
// esbuild and served on the edge's own origin (test/cascade/harness.ts), so every fetch here is
// same-origin. Observations go to window.grTone for the test to read.
import { median, rms, TONE_A_HZ, TONE_B_HZ, toneAmplitude } from "../../support/tone.ts";

export interface ToneState {
  step: "idle" | "offering" | "answered" | "failed" | "closed";
  error: string | null;
  /** The edge's status for the offer, its Location, x-relay-cluster. */
  status: number | null;
  location: string | null;
  cluster: string | null;
  connection: string | null;
  dataChannel: string | null;
  /** Every oai-events message, as received. */
  events: string[];
  packetsSent: number;
  packetsReceived: number;
  /** Median amplitude at each tone over the last second of received audio, and its RMS. */
  levels: Record<number, number>;
  rms: number;
  /** Blocks analysed since the remote track arrived. */
  blocks: number;
  /** For failure messages: the transport's packet count, each inbound stream's stats. */
  transportPacketsReceived: number;
  inbound: Record<string, unknown>[];
}

export interface ConnectOptions {
  /** Where the offer goes: /v1/realtime/calls or /v1/realtime/calls/{id}/participants. */
  url: string;
  key: string;
  freq: number;
  amplitude?: number;
}

const BLOCK = 4096;
const HISTORY = 10;
const FREQS = [TONE_A_HZ, TONE_B_HZ];

const state: ToneState = {
  step: "idle",
  error: null,
  status: null,
  location: null,
  cluster: null,
  connection: null,
  dataChannel: null,
  events: [],
  packetsSent: 0,
  packetsReceived: 0,
  levels: { [TONE_A_HZ]: 0, [TONE_B_HZ]: 0 },
  rms: 0,
  blocks: 0,
  transportPacketsReceived: 0,
  inbound: [],
};

let pc: RTCPeerConnection | null = null;
let ctx: AudioContext | null = null;
let timer: ReturnType<typeof setInterval> | null = null;
let key = "";

function analyse(stream: MediaStream, audio: AudioContext): void {
  const an = audio.createAnalyser();
  an.fftSize = BLOCK;
  audio.createMediaStreamSource(stream).connect(an);
  const buf = new Float32Array(BLOCK);
  const hist: Record<number, number[]> = { [TONE_A_HZ]: [], [TONE_B_HZ]: [] };
  const levels: number[] = [];
  // A block is ~85 ms at 48 kHz: every 100 ms reads fresh samples, ten of them make a second.
  setInterval(() => {
    an.getFloatTimeDomainData(buf);
    for (const f of FREQS) {
      const h = hist[f]!;
      h.push(toneAmplitude(buf, audio.sampleRate, f));
      if (h.length > HISTORY) h.shift();
      state.levels[f] = median(h);
    }
    levels.push(rms(buf));
    if (levels.length > HISTORY) levels.shift();
    state.rms = median(levels);
    state.blocks++;
  }, 100);
}

async function stats(): Promise<void> {
  if (!pc) return;
  const report = await pc.getStats();
  // Summed over streams: a new SSRC from the transceiver shows up as a second inbound-rtp.
  let sent = 0;
  let received = 0;
  const inbound: Record<string, unknown>[] = [];
  report.forEach((s) => {
    if (s.type === "outbound-rtp" && s.kind === "audio") sent += s.packetsSent;
    if (s.type === "inbound-rtp" && s.kind === "audio") {
      received += s.packetsReceived;
      inbound.push({
        ssrc: s.ssrc,
        packetsReceived: s.packetsReceived,
        packetsLost: s.packetsLost,
        packetsDiscarded: s.packetsDiscarded,
        concealedSamples: s.concealedSamples,
        totalSamplesReceived: s.totalSamplesReceived,
        jitterBufferEmittedCount: s.jitterBufferEmittedCount,
        lastPacketReceivedTimestamp: s.lastPacketReceivedTimestamp,
      });
    }
    if (s.type === "transport") state.transportPacketsReceived = s.packetsReceived ?? 0;
  });
  state.inbound = inbound;
  state.packetsSent = sent;
  state.packetsReceived = received;
}

async function connect(o: ConnectOptions): Promise<ToneState> {
  key = o.key;
  state.step = "offering";
  try {
    ctx = new AudioContext({ sampleRate: 48_000 });
    await ctx.resume();
    const osc = ctx.createOscillator();
    osc.frequency.value = o.freq;
    const gain = ctx.createGain();
    gain.gain.value = o.amplitude ?? 0.3;
    const dest = ctx.createMediaStreamDestination();
    osc.connect(gain).connect(dest);
    osc.start();
    const audio = ctx;
    const mine = new RTCPeerConnection();
    pc = mine;
    for (const t of dest.stream.getAudioTracks()) mine.addTrack(t, dest.stream);
    mine.ontrack = (ev) => {
      const stream = ev.streams[0] ?? new MediaStream([ev.track]);
      // Chromium feeds a remote track into WebAudio only while a media element plays it.
      const el = new Audio();
      el.srcObject = stream;
      el.play().catch(() => {});
      analyse(stream, audio);
    };
    mine.onconnectionstatechange = () => {
      state.connection = mine.connectionState;
    };
    const dc = mine.createDataChannel("oai-events");
    state.dataChannel = "connecting";
    dc.onopen = () => {
      state.dataChannel = "open";
    };
    dc.onclose = () => {
      state.dataChannel = "closed";
    };
    dc.onmessage = (ev) => {
      state.events.push(String(ev.data));
    };
    await mine.setLocalDescription(await mine.createOffer());
    await new Promise<void>((r) => {
      if (mine.iceGatheringState === "complete") return r();
      mine.onicegatheringstatechange = () => mine.iceGatheringState === "complete" && r();
      setTimeout(r, 1500);
    });
    const res = await fetch(o.url, {
      method: "POST",
      body: mine.localDescription!.sdp,
      headers: { "content-type": "application/sdp", authorization: `Bearer ${o.key}` },
    });
    state.status = res.status;
    state.location = res.headers.get("location");
    state.cluster = res.headers.get("x-relay-cluster");
    const body = await res.text();
    if (res.status !== 201) throw new Error(`edge answered ${res.status}: ${body}`);
    await mine.setRemoteDescription({ type: "answer", sdp: body });
    state.step = "answered";
    timer = setInterval(() => void stats(), 250);
  } catch (e) {
    state.error = String((e as Error)?.message ?? e);
    state.step = "failed";
  }
  return state;
}

/** A request from this page (e.g. DELETE on its Location); returns the status. */
async function request(method: string, url: string): Promise<number> {
  const r = await fetch(url, { method, headers: { authorization: `Bearer ${key}` } });
  return r.status;
}

function close(): void {
  if (timer) clearInterval(timer);
  pc?.close();
  pc = null;
  state.step = "closed";
}

Object.assign(window, { grTone: state, grToneConnect: connect, grToneRequest: request, grToneClose: close });
