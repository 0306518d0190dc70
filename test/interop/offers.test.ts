// What other WebRTC stacks send, played by a real werift client (or a recorded offer) against one
// transceiver through the frame-wrapping loopback relay: ICE-lite agents, other codec orders, only
// PCMU (with or without its rtpmap), a=setup:active / passive, send-only publishers, and the
// bundle-only audio of GStreamer's webrtcbin.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MediaStreamTrack,
  type RTCDataChannel,
  RTCPeerConnection,
  type RTCRtpCodecParameters,
  RtpHeader,
  RtpPacket,
  useOPUS,
  usePCMU,
} from "werift";
import { disableStunFallback } from "../../regional/transceiver/shell/werift-glue.ts";
import { inspectOffer } from "../../shared/sdp/offer.ts";
import { WAIT_MS } from "../support/wait.ts";
import { type CallStatus, type Harness, startHarness, until } from "../transceiver/helpers/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

interface Peer {
  pc: RTCPeerConnection;
  track: MediaStreamTrack;
  received: RtpPacket[];
  /** Text messages on the oai-events data channel. */
  messages: string[];
  dc: RTCDataChannel;
  close(): Promise<void>;
}

interface PeerOptions {
  codecs: RTCRtpCodecParameters[];
  iceLite?: boolean;
  direction?: "sendrecv" | "sendonly";
  /** A second audio track (a second m=audio). */
  secondAudio?: boolean;
}

function peer(o: PeerOptions): Peer {
  const pc = new RTCPeerConnection({
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ["127.0.0.1"],
    iceInterfaceAddresses: { udp4: "127.0.0.1" },
    iceLite: o.iceLite ?? false,
    bundlePolicy: "max-bundle",
    codecs: { audio: o.codecs },
  });
  const track = new MediaStreamTrack({ kind: "audio" });
  const t = pc.addTransceiver(track, { direction: o.direction ?? "sendrecv" });
  const received: RtpPacket[] = [];
  t.onTrack.subscribe((tr) => tr.onReceiveRtp.subscribe((rtp) => received.push(rtp)));
  if (o.secondAudio) pc.addTransceiver(new MediaStreamTrack({ kind: "audio" }), { direction: "sendrecv" });
  const dc = pc.createDataChannel("oai-events");
  const messages: string[] = [];
  dc.onMessage.subscribe((m) => messages.push(typeof m === "string" ? m : m.toString("utf8")));
  disableStunFallback(pc);
  return { pc, track, received, messages, dc, close: () => pc.close() };
}

type Created = { status: number; body: { callId?: string; sdp?: string; error?: { code: string } } };

async function create(sdp: string): Promise<Created> {
  const vip = `${h.relay.vip.host}:${h.relay.vip.port}`;
  const r = await h.call("POST", "/v1/calls", { sdp, client: { region: "test" }, ingress: { vip } });
  return { status: r.status, body: (await r.json()) as Created["body"] };
}

async function status(callId: string): Promise<CallStatus> {
  return (await (await h.call("GET", `/v1/calls/${callId}`)).json()) as CallStatus;
}

/** Offer (optionally edited the way another stack would write it) → answer → connected. */
async function connect(
  p: Peer,
  edit: (sdp: string) => string = (s) => s,
): Promise<{ callId: string; answer: string }> {
  await p.pc.setLocalDescription(await p.pc.createOffer());
  const r = await create(edit(p.pc.localDescription!.sdp));
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await p.pc.setRemoteDescription({ type: "answer", sdp: r.body.sdp! });
  await p.pc.connectionStateChange.watch((s) => s === "connected", WAIT_MS);
  return { callId: r.body.callId!, answer: r.body.sdp! };
}

/**
 * Sends audio every 20 ms, as a client does, until `done` holds: the event waited on is the echo
 * (or the backend's count), not a fixed number of packets sent before the server's DTLS/SRTP is up.
 */
async function talkUntil(p: Peer, done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  let seq = 0;
  await until(
    async () => {
      const header = new RtpHeader({
        sequenceNumber: seq,
        timestamp: seq * 960,
        payloadType: 0,
        marker: false,
      });
      seq++;
      p.track.writeRtp(new RtpPacket(header, randomBytes(80)));
      return done();
    },
    what,
    undefined,
    20,
  );
}

/**
 * A ping on the data channel, answered by the backend after everything it sent before: once the
 * pong is in, any RTP the transceiver had sent the peer is in too (one path, in order on loopback).
 */
async function roundTrip(p: Peer): Promise<void> {
  await until(() => p.dc.readyState === "open", "the data channel open");
  const n = p.messages.length;
  p.dc.send(JSON.stringify({ type: "ping" }));
  await until(() => p.messages.slice(n).some((m) => m.includes("pong")), "pong");
}

const answerCodecs = (sdp: string): string[] =>
  [...sdp.matchAll(/^a=rtpmap:\d+ ([^/\s]+)\//gm)].map((m) => m[1]!.toLowerCase());
const setupOf = (sdp: string): string | undefined => /^a=setup:(\S+)/m.exec(sdp)?.[1];

describe("offers from other stacks", () => {
  it("rejects an ICE-lite offer at once: it never sends the check the relay routes by", async () => {
    const p = peer({ codecs: [useOPUS()], iceLite: true });
    await p.pc.setLocalDescription(await p.pc.createOffer());
    expect(p.pc.localDescription!.sdp).toContain("a=ice-lite");
    const r = await create(p.pc.localDescription!.sdp);
    expect(r.status).toBe(422);
    expect(r.body.error?.code).toBe("ice_lite_unsupported");
    await p.close();
  });

  it("takes PCMU when the offer prefers it over Opus, and echoes it", async () => {
    const p = peer({ codecs: [usePCMU(), useOPUS()] });
    const { callId, answer } = await connect(p);
    expect(answerCodecs(answer)[0]).toBe("pcmu");
    await talkUntil(p, () => p.received.length >= 30, "echoed PCMU");
    expect(p.received.every((x) => x.header.payloadType === 0)).toBe(true);
    expect((await status(callId)).codec).toBe("pcmu");
    await p.close();
  });

  it("takes an offer with only PCMU as static payload type 0 (no rtpmap line)", async () => {
    const p = peer({ codecs: [usePCMU()] });
    const { callId, answer } = await connect(p, (s) => s.replace(/^a=rtpmap:0 PCMU\/8000\r\n/m, ""));
    expect(answer).toMatch(/^m=audio \d+ \S+ 0\r?$/m);
    await talkUntil(p, () => p.received.length >= 30, "echoed PCMU");
    expect((await status(callId)).codec).toBe("pcmu");
    await p.close();
  });

  it("is the DTLS server when the offer says a=setup:active", async () => {
    const p = peer({ codecs: [useOPUS(), usePCMU()] });
    const { answer } = await connect(p, (s) => s.replaceAll("a=setup:actpass", "a=setup:active"));
    expect(setupOf(answer)).toBe("passive");
    await talkUntil(p, () => p.received.length >= 20, "echoed audio");
    await p.close();
  });

  it("is the DTLS client when the offer says a=setup:passive", async () => {
    const p = peer({ codecs: [useOPUS(), usePCMU()] });
    const { answer } = await connect(p, (s) => s.replaceAll("a=setup:actpass", "a=setup:passive"));
    expect(setupOf(answer)).toBe("active");
    await talkUntil(p, () => p.received.length >= 20, "echoed audio");
    await p.close();
  });

  it("takes an offer with two audio tracks: the first is the call, the server never sends on the second", async () => {
    const p = peer({ codecs: [useOPUS()], secondAudio: true });
    const { callId, answer } = await connect(p);
    expect(answer.match(/^m=audio /gm)).toHaveLength(2);
    const second = answer.slice(answer.lastIndexOf("m=audio"), answer.indexOf("m=application"));
    expect(second).toMatch(/^a=(recvonly|inactive)\r?$/m);
    await talkUntil(p, () => p.received.length >= 20, "echoed audio");
    expect((await status(callId)).state).toBe("connected");
    await p.close();
  });

  it("takes an offer with bare LF line endings", async () => {
    const p = peer({ codecs: [useOPUS()] });
    await connect(p, (s) => s.replace(/\r\n/g, "\n"));
    await talkUntil(p, () => p.received.length >= 20, "echoed audio");
    await p.close();
  });

  it("answers a send-only publisher recvonly and sends it no RTP, while its audio reaches the backend", async () => {
    const p = peer({ codecs: [useOPUS()], direction: "sendonly" });
    const { callId, answer } = await connect(p);
    expect(answer).toMatch(/^a=recvonly\r?$/m);
    await talkUntil(p, async () => (await status(callId)).backend.framesFromBackend >= 40, "echo frames");
    await roundTrip(p);
    expect(p.received).toHaveLength(0);
    await p.close();
  });
});

/** A recorded offer (test/interop/fixtures, captured from the real client in a test namespace). */
const fixture = (name: string): string =>
  readFileSync(join(import.meta.dirname, "fixtures", name), "utf8").replace(/\r?\n/g, "\r\n");

/** kind → [port, direction] of each m-section of an SDP, in order. */
function mSections(sdp: string): [string, number, string | undefined][] {
  const out: [string, number, string | undefined][] = [];
  for (const l of sdp.split(/\r?\n/)) {
    const m = /^m=(\S+) (\d+)/.exec(l);
    if (m) out.push([m[1]!, Number(m[2]), undefined]);
    const d = /^a=(sendrecv|sendonly|recvonly|inactive)$/.exec(l);
    if (d && out.length > 0) out[out.length - 1]![2] = d[1];
  }
  return out;
}

describe("recorded offers", () => {
  const gst = fixture("gstreamer-1.22-whip-audio-video.sdp");

  it("Firefox ESR 153 (audio, video, data channel; balanced): video rejected, audio and data accepted", async () => {
    const r = await create(fixture("firefox-esr-153-audio-video-datachannel.sdp"));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const sdp = r.body.sdp!;
    expect(mSections(sdp).map(([k, p]) => [k, p === 0 ? "rejected" : "accepted"])).toEqual([
      ["audio", "accepted"],
      ["video", "rejected"],
      ["application", "accepted"],
    ]);
    expect(sdp).toMatch(/^a=group:BUNDLE 0 2\r?$/m);
    expect(sdp).toMatch(/^a=rtpmap:109 opus\/48000\/2\r?$/m);
    await h.call("DELETE", `/v1/calls/${r.body.callId}`);
  });

  it("Firefox ESR 153 with max-bundle (video and data channel bundle-only, port 0): data channel kept", async () => {
    const offer = fixture("firefox-esr-153-max-bundle.sdp");
    expect(offer).toMatch(/^m=application 0 /m);
    const r = await create(offer);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const sdp = r.body.sdp!;
    expect(mSections(sdp).map(([k, p]) => [k, p === 0 ? "rejected" : "accepted"])).toEqual([
      ["audio", "accepted"],
      ["video", "rejected"],
      ["application", "accepted"],
    ]);
    expect(sdp).toMatch(/^a=group:BUNDLE 0 2\r?$/m);
    await h.call("DELETE", `/v1/calls/${r.body.callId}`);
  });

  it("GStreamer webrtcbin (max-bundle, audio bundle-only with port 0) is accepted", () => {
    expect(gst).toMatch(/^m=audio 0 /m);
    const r = inspectOffer(gst);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.sdp).toMatch(/^m=audio 9 /m);
    expect(r.audioMid).toBe("audio1");
    expect(r.taggedVideo?.mid).toBe("video0");
    expect(r.taggedVideo?.codec.name).toBe("VP8");
  });

  it("answers the tagged video inactive inside the BUNDLE group, audio recvonly", async () => {
    const r = await create(gst);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const sdp = r.body.sdp!;
    expect(sdp).toMatch(/^a=group:BUNDLE video0 audio1\r?$/m);
    const video = sdp.slice(sdp.indexOf("m=video"), sdp.indexOf("m=audio"));
    expect(video).toMatch(/^m=video 9 /);
    expect(video).toMatch(/^a=inactive\r?$/m);
    expect(video).toContain("a=candidate:");
    expect(sdp.slice(sdp.indexOf("m=audio"))).toMatch(/^a=recvonly\r?$/m);
    await h.call("DELETE", `/v1/calls/${r.body.callId}`);
  });

  it("answers an offer whose first m-line (the BUNDLE tag) is the data channel, in the same order", async () => {
    // libwebrtc orders m-lines by creation: createDataChannel() before addTrack() puts it first.
    const p = peer({ codecs: [useOPUS()] });
    await p.pc.setLocalDescription(await p.pc.createOffer());
    const sdp = p.pc.localDescription!.sdp;
    const a = sdp.indexOf("m=audio");
    const d = sdp.indexOf("m=application");
    const [mAudio, mApp] = [/a=mid:(\S+)/.exec(sdp.slice(a, d))![1], /a=mid:(\S+)/.exec(sdp.slice(d))![1]];
    const reordered = (sdp.slice(0, a) + sdp.slice(d) + sdp.slice(a, d)).replace(
      /^a=group:BUNDLE .*$/m,
      `a=group:BUNDLE ${mApp} ${mAudio}`,
    );
    const r = await create(reordered);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const answer = r.body.sdp!;
    expect(answer.indexOf("m=application")).toBeLessThan(answer.indexOf("m=audio"));
    expect(answer).toMatch(new RegExp(`^a=group:BUNDLE ${mApp} ${mAudio}\r?$`, "m"));
    expect(answer).toMatch(/^m=audio 9 /m);
    await h.call("DELETE", `/v1/calls/${r.body.callId}`);
    await p.close();
  });

  it("rejects a video m-line that is not the BUNDLE tag (port 0, out of the group)", async () => {
    // Audio first and tagged, video second: the ordinary browser layout.
    const lines = gst.split("\r\n");
    const vStart = lines.findIndex((l) => l.startsWith("m=video"));
    const aStart = lines.findIndex((l) => l.startsWith("m=audio"));
    const end = lines.findIndex((l, i) => i > aStart && l === "");
    const head = lines
      .slice(0, vStart)
      .map((l) => (l.startsWith("a=group:BUNDLE") ? "a=group:BUNDLE audio1 video0" : l));
    const audio = lines
      .slice(aStart, end < 0 ? undefined : end)
      .filter((l) => l !== "a=bundle-only")
      .map((l) => l.replace(/^m=audio 0 /, "m=audio 9 "));
    const video = lines.slice(vStart, aStart);
    const r = await create(`${[...head, ...audio, ...video].join("\r\n")}\r\n`);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.sdp).toMatch(/^a=group:BUNDLE audio1\r?$/m);
    expect(r.body.sdp).toMatch(/^m=video 0 /m);
    await h.call("DELETE", `/v1/calls/${r.body.callId}`);
  });
});
