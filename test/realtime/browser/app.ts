// A page on another origin than the edge, written as an OpenAI Realtime developer would write it:
// `openai` mints a client secret (and later hangs up), `@openai/agents-realtime` connects a
// RealtimeSession over WebRTC. Only the base URLs point at Global Relay. Bundled by esbuild in the
// test; progress and observations go to window.grSdk for the test to read.
import { OpenAIRealtimeWebRTC, RealtimeAgent, RealtimeSession } from "@openai/agents-realtime";
import OpenAI from "openai";

interface SdkState {
  step: string;
  error: string | null;
  warnings: string[];
  secretHasSession: boolean;
  connectMs: number | null;
  callId: string | null;
  events: string[];
  selectedRemote: string | null;
  packetsReceived: number;
  audioLevel: number;
  transcript: string | null;
  hungUp: boolean;
  connectionState: string | null;
}

const state: SdkState = {
  step: "loading",
  error: null,
  warnings: [],
  secretHasSession: false,
  connectMs: null,
  callId: null,
  events: [],
  selectedRemote: null,
  packetsReceived: 0,
  audioLevel: 0,
  transcript: null,
  hungUp: false,
  connectionState: null,
};
(window as unknown as { grSdk: SdkState }).grSdk = state;

// The Agents SDK reports its 5 s wait for session.updated as a warning: count every warning.
for (const level of ["warn", "error"] as const) {
  const orig = console[level].bind(console);
  console[level] = (...args: unknown[]) => {
    state.warnings.push(`${level}: ${args.map(String).join(" ").slice(0, 300)}`);
    orig(...args);
  };
}

async function stats(pc: RTCPeerConnection): Promise<void> {
  const report = await pc.getStats();
  let pairId: string | undefined;
  report.forEach((s) => {
    if (s.type === "transport" && s.selectedCandidatePairId) pairId = s.selectedCandidatePairId;
  });
  report.forEach((s) => {
    if (s.type === "candidate-pair" && (s.id === pairId || (!pairId && s.selected))) {
      const remote = report.get(s.remoteCandidateId);
      if (remote) state.selectedRemote = `${remote.address ?? remote.ip}:${remote.port}`;
    }
    if (s.type === "inbound-rtp" && s.kind === "audio") {
      state.packetsReceived = s.packetsReceived ?? 0;
      state.audioLevel = Math.max(state.audioLevel, s.audioLevel ?? 0);
    }
  });
}

async function run(): Promise<void> {
  const q = new URLSearchParams(location.search);
  const edge = q.get("edge")!;
  const apiKey = q.get("key")!;
  state.step = "client secret";
  // The openai package in a browser: its x-stainless-* headers must pass the edge's preflight.
  const openai = new OpenAI({ apiKey, baseURL: `${edge}/v1`, dangerouslyAllowBrowser: true });
  const secret = await openai.realtime.clientSecrets.create({
    session: { type: "realtime", instructions: "Repeat after me." },
  });
  state.secretHasSession = secret.session?.type === "realtime";

  state.step = "connect";
  const agent = new RealtimeAgent({ name: "echo", instructions: "Repeat after me." });
  const audioElement = document.createElement("audio");
  document.body.append(audioElement);
  const transport = new OpenAIRealtimeWebRTC({ baseUrl: `${edge}/v1/realtime/calls`, audioElement });
  const session = new RealtimeSession(agent, { transport, model: "gpt-realtime" });
  session.on("transport_event", (ev) => {
    state.events.push((ev as { type: string }).type);
  });
  const t0 = performance.now();
  await session.connect({ apiKey: secret.value });
  state.connectMs = Math.round(performance.now() - t0);
  state.callId = transport.callId ?? null;
  const pc = transport.connectionState.peerConnection!;
  const timer = setInterval(() => {
    state.connectionState = pc.connectionState;
    void stats(pc);
  }, 200);

  state.step = "talk";
  session.sendMessage("hello relay");
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (state.events.includes("response.done")) {
        clearInterval(check);
        resolve();
      }
    }, 50);
  });
  const last = session.history.at(-1) as
    | { role?: string; content?: { transcript?: string | null }[] }
    | undefined;
  state.transcript = last?.role === "assistant" ? (last.content?.[0]?.transcript ?? null) : null;

  state.step = "audio";
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (state.packetsReceived > 100 && state.selectedRemote !== null) {
        clearInterval(check);
        resolve();
      }
    }, 100);
  });

  state.step = "hangup";
  await openai.realtime.calls.hangup(state.callId!);
  state.hungUp = true;
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (
        pc.connectionState === "closed" ||
        pc.connectionState === "failed" ||
        pc.connectionState === "disconnected"
      ) {
        clearInterval(check);
        resolve();
      }
    }, 100);
  });
  clearInterval(timer);
  state.connectionState = pc.connectionState;
  session.close();
  state.step = "done";
}

run().catch((e: unknown) => {
  state.error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
});
