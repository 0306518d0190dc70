// The server's werift peer connection for an offer, and the offer-driven adjustments werift does
// not make by itself (DTLS role, the tagged video m-line).
import {
  type RTCDataChannel,
  RTCPeerConnection,
  RTCRtpCodecParameters,
  type RTCRtpTransceiver,
  type RtpPacket,
  useOPUS,
  usePCMU,
} from "werift";
import type { OfferInfo } from "../../../shared/sdp/offer.ts";
import { redOffered } from "../core/red-offer.ts";

/**
 * Audio codecs follow the offer's order (RFC 3264 §6.1 recommends the answer keep the offerer's
 * preference: a client that lists PCMU first gets PCMU). `taggedVideo` is the codec of a video
 * m-line the offer tagged for BUNDLE: werift needs it in common to accept that m-line (answered
 * inactive, see shared/sdp/offer.ts).
 */
export function serverPeerConnection(
  offer?: Pick<OfferInfo, "audioCodecs" | "taggedVideo">,
): RTCPeerConnection {
  const names = offer?.audioCodecs.map((c) => c.name.toLowerCase()) ?? [];
  const pcmuFirst =
    names.includes("pcmu") && (!names.includes("opus") || names.indexOf("pcmu") < names.indexOf("opus"));
  // RED (RFC 2198) of Opus when offered: listed first, so the answer puts red before opus, which
  // is what makes Chromium send RED (libwebrtc takes red only when it precedes its codec). werift
  // matches red's fmtp against its own payload types, so both take the offer's.
  const red = offer ? redOffered(offer.audioCodecs) : undefined;
  const opus = (): RTCRtpCodecParameters =>
    useOPUS({
      parameters: "minptime=10;useinbandfec=1",
      ...(red ? { payloadType: red.opusPayloadType } : {}),
    });
  const audio = pcmuFirst ? [usePCMU(), opus()] : [opus(), usePCMU()];
  if (red) {
    const { payloadType, fmtp } = red;
    audio.unshift(
      new RTCRtpCodecParameters({
        mimeType: "audio/red",
        clockRate: 48000,
        channels: 2,
        payloadType,
        parameters: fmtp,
      }),
    );
  }
  const video = offer?.taggedVideo?.codec;
  const videoCodecs = video
    ? [
        new RTCRtpCodecParameters({
          mimeType: `video/${video.name}`,
          clockRate: video.clockRate,
          ...(video.fmtp ? { parameters: video.fmtp } : {}),
        }),
      ]
    : [];
  return new RTCPeerConnection({
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceLite: false,
    // Full ICE restricted to the addresses learned from the client's checks (docs/werift.md).
    iceFilterCandidatePair: () => false,
    bundlePolicy: "max-bundle",
    codecs: { audio, video: videoCodecs },
    headerExtensions: { audio: [], video: [] },
  });
}

/** After setRemoteDescription: the DTLS role the offer needs, and the tagged video m-line inactive. */
export function applyOffer(pc: RTCPeerConnection, offer: Pick<OfferInfo, "dtlsSetup" | "taggedVideo">): void {
  // werift answers a=setup:active whatever the offer says; an offer that is itself active (or
  // passive) needs the opposite (RFC 5763 §5), or both ends would send (or wait for) a ClientHello.
  const role = offer.dtlsSetup === "active" ? "server" : offer.dtlsSetup === "passive" ? "client" : undefined;
  if (role !== undefined) {
    for (const t of pc.getTransceivers()) if (t.dtlsTransport) t.dtlsTransport.role = role;
    if (pc.sctpTransport) pc.sctpTransport.dtlsTransport.role = role;
  }
  // Video is never received or sent: a tagged video m-line stays in the BUNDLE group, inactive.
  const tagged = offer.taggedVideo?.mid;
  for (const t of pc.getTransceivers()) {
    if (t.kind === "video" && t.mid === tagged) t.setDirection("inactive");
  }
}

/** What a session hears from its peer connection. */
export interface PeerHandlers {
  iceConnected(): void;
  iceFailed(): void;
  dtlsConnected(): void;
  dtlsFailed(): void;
  closed(): void;
  rtp(rtp: RtpPacket): void;
  dataChannel(dc: RTCDataChannel): void;
}

export function watchPeer(pc: RTCPeerConnection, audio: RTCRtpTransceiver, h: PeerHandlers): void {
  pc.iceConnectionStateChange.subscribe((st) => {
    if (st === "connected") h.iceConnected();
    else if (st === "failed") h.iceFailed();
  });
  pc.connectionStateChange.subscribe((st) => {
    if (st === "connected") h.dtlsConnected();
    else if (st === "failed") h.dtlsFailed();
    else if (st === "closed") h.closed();
  });
  audio.onTrack.subscribe((track) => {
    track.onReceiveRtp.subscribe((rtp) => h.rtp(rtp));
  });
  pc.onDataChannel.subscribe((dc) => h.dataChannel(dc));
}
