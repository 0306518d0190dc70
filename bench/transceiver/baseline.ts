// werift in its default mode, for comparison: every session binds its own UDP socket (host
// candidate on 127.0.0.1) and echoes RTP and data-channel messages in-process. No relay, no
// frames, no backend bridge.
import { RTCPeerConnection, type RtpPacket, useOPUS, usePCMU } from "werift";
import { disableStunFallback } from "../../regional/transceiver/shell/werift-glue.ts";

export interface BaselineSession {
  pc: RTCPeerConnection;
  answer: string;
}

export async function baselineSession(offer: string): Promise<BaselineSession> {
  const pc = new RTCPeerConnection({
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ["127.0.0.1"],
    iceInterfaceAddresses: { udp4: "127.0.0.1" },
    bundlePolicy: "max-bundle",
    codecs: { audio: [useOPUS({ parameters: "minptime=10;useinbandfec=1" }), usePCMU()], video: [] },
    headerExtensions: { audio: [], video: [] },
  });
  const t = pc.addTransceiver("audio", { direction: "sendrecv" });
  t.onTrack.subscribe((track) => {
    track.onReceiveRtp.subscribe((rtp: RtpPacket) => {
      t.sender.sendRtp(rtp).catch(() => {});
    });
  });
  pc.onDataChannel.subscribe((dc) => {
    dc.onMessage.subscribe((m) => {
      const text = typeof m === "string" ? m : m.toString("utf8");
      dc.send(text.includes('"ping"') ? '{"type":"pong"}' : JSON.stringify({ type: "echo", received: text }));
    });
  });
  await pc.setRemoteDescription({ type: "offer", sdp: offer });
  disableStunFallback(pc);
  await pc.setLocalDescription(await pc.createAnswer());
  return { pc, answer: pc.localDescription!.sdp };
}
