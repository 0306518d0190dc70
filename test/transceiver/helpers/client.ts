// A real werift client peer for tests and benchmarks, confined to 127.0.0.1: it binds one host
// candidate on loopback and never queries a STUN server.

import type { RTCDataChannel, RTCRtpTransceiver } from "werift";
import {
  MediaStreamTrack,
  RTCPeerConnection,
  RTCRtpCodecParameters,
  RtpHeader,
  RtpPacket,
  useOPUS,
  usePCMU,
} from "werift";
import { disableStunFallback, restartIceChecks } from "../../../regional/transceiver/shell/werift-glue.ts";

export interface ClientOptions {
  codecs?: "opus" | "pcmu" | "both";
  dataChannel?: boolean;
  /** Adds "useinbandfec=1" to Opus. */
  fec?: boolean;
  /** Offers red/48000/2 (RFC 2198) of Opus first, as Chromium can; werift sends it with `redDistance`. */
  red?: boolean;
  redDistance?: number;
  /** Offers a=rtcp-fb:<opus> nack. */
  nack?: boolean;
}

export interface TestClient {
  pc: RTCPeerConnection;
  transceiver: RTCRtpTransceiver;
  track: MediaStreamTrack;
  dc?: RTCDataChannel;
  received: RtpPacket[];
  messages: string[];
  createOffer(): Promise<string>;
  setAnswer(sdp: string): Promise<void>;
  /** Sends one RTP packet with the given payload. */
  sendAudio(payload: Buffer, seq: number, ts: number): void;
  connected(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export function createTestClient(o: ClientOptions = {}): TestClient {
  const codecs = o.codecs ?? "both";
  const audio = [];
  // werift numbers red 63 with fmtp "<next>/<next>": the Opus right after it.
  if (o.red) audio.push(new RTCRtpCodecParameters({ mimeType: "audio/red", clockRate: 48000, channels: 2 }));
  if (codecs !== "pcmu")
    audio.push(
      useOPUS({
        parameters: o.fec ? "minptime=10;useinbandfec=1" : "minptime=10",
        ...(o.nack ? { rtcpFeedback: [{ type: "nack" }] } : {}),
      }),
    );
  if (codecs !== "opus") audio.push(usePCMU());
  const pc = new RTCPeerConnection({
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ["127.0.0.1"],
    iceInterfaceAddresses: { udp4: "127.0.0.1" },
    bundlePolicy: "max-bundle",
    codecs: { audio },
  });
  const track = new MediaStreamTrack({ kind: "audio" });
  const transceiver = pc.addTransceiver(track, { direction: "sendrecv" });
  if (o.redDistance !== undefined) transceiver.sender.redDistance = o.redDistance;
  const received: RtpPacket[] = [];
  const messages: string[] = [];
  transceiver.onTrack.subscribe((t) => {
    t.onReceiveRtp.subscribe((rtp) => received.push(rtp));
  });
  let dc: RTCDataChannel | undefined;
  if (o.dataChannel !== false) {
    dc = pc.createDataChannel("oai-events");
    dc.onMessage.subscribe((m) => messages.push(typeof m === "string" ? m : m.toString("utf8")));
  }
  disableStunFallback(pc);
  return {
    pc,
    transceiver,
    track,
    ...(dc ? { dc } : {}),
    received,
    messages,
    async createOffer() {
      const offer = await pc.createOffer();
      await pc.setLocalDescription(offer);
      return pc.localDescription!.sdp;
    },
    async setAnswer(sdp) {
      await pc.setRemoteDescription({ type: "answer", sdp });
    },
    sendAudio(payload, seq, ts) {
      const header = new RtpHeader({ sequenceNumber: seq, timestamp: ts, payloadType: 111, marker: false });
      track.writeRtp(new RtpPacket(header, payload));
    },
    async connected(timeoutMs = 15_000) {
      if (pc.connectionState === "connected") return;
      await pc.connectionStateChange.watch((s) => s === "connected", timeoutMs);
    },
    async close() {
      await pc.close();
    },
  };
}

/** The client side of a WHIP ICE restart: new local credentials, as an sdpfrag for PATCH. */
export async function clientRestartFrag(c: TestClient): Promise<string> {
  c.pc.restartIce();
  const offer = await c.pc.createOffer();
  await c.pc.setLocalDescription(offer);
  const sdp = c.pc.localDescription!.sdp;
  const ufrag = /a=ice-ufrag:(\S+)/.exec(sdp)![1];
  const pwd = /a=ice-pwd:(\S+)/.exec(sdp)![1];
  return `a=ice-ufrag:${ufrag}\r\na=ice-pwd:${pwd}\r\n`;
}

/** Applies the server's restart sdpfrag to the client as a full answer (the old answer, new credentials). */
export async function clientApplyRestartAnswer(
  c: TestClient,
  oldAnswer: string,
  frag: string,
): Promise<string> {
  const ufrag = /a=ice-ufrag:(\S+)/.exec(frag)![1]!;
  const pwd = /a=ice-pwd:(\S+)/.exec(frag)![1]!;
  const cand = frag.split(/\r?\n/).filter((l) => l.startsWith("a=candidate:"));
  const answer = oldAnswer
    .split(/\r?\n/)
    .flatMap((l) => {
      if (l.startsWith("a=ice-ufrag:")) return [`a=ice-ufrag:${ufrag}`];
      if (l.startsWith("a=ice-pwd:")) return [`a=ice-pwd:${pwd}`];
      if (l.startsWith("a=candidate:")) return [];
      if (l === "a=end-of-candidates") return [...cand, l];
      return [l];
    })
    .join("\r\n");
  await c.pc.setRemoteDescription({ type: "answer", sdp: answer });
  // werift as a client does not rerun its checks after a restart (DTLS is up); a browser does.
  void restartIceChecks(c.pc).catch(() => {});
  return answer;
}
