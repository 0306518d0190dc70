// An example offer for trying the calls API with curl (`npm start` prints the line): the Chromium
// offer of docs/examples/offer.sdp with fresh ICE credentials and session id on every request,
// so pasting the same command twice makes two calls. (A transceiver refuses a second offer with
// the same ice-ufrag and ice-pwd as a live session, 409 duplicate_offer: one offer, one session.)
// Its DTLS fingerprint has no key behind it: the call is answered but never connects.

const ICE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function iceChars(n: number, random: Uint8Array): string {
  let s = "";
  for (let i = 0; i < n; i++) s += ICE_CHARS[random[i]! & 63];
  return s;
}

/** `random`: at least 40 random bytes. */
export function exampleOffer(random: Uint8Array): string {
  const ufrag = iceChars(8, random);
  const pwd = iceChars(24, random.subarray(8));
  let sessionId = String(1 + (random[32]! & 7));
  for (let i = 33; i < 40; i++) sessionId += String(random[i]! % 10);
  return (
    [
      "v=0",
      `o=- ${sessionId} 2 IN IP4 127.0.0.1`,
      "s=-",
      "t=0 0",
      "a=group:BUNDLE 0 1",
      "a=extmap-allow-mixed",
      "a=msid-semantic: WMS",
      "m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126",
      "c=IN IP4 0.0.0.0",
      "a=rtcp:9 IN IP4 0.0.0.0",
      `a=ice-ufrag:${ufrag}`,
      `a=ice-pwd:${pwd}`,
      "a=ice-options:trickle",
      "a=fingerprint:sha-256 3D:0D:52:B9:F4:87:5C:9D:DB:91:A5:8F:40:85:37:CB:6A:20:77:97:8A:90:03:BE:4B:AC:DF:2D:57:09:A3:BA",
      "a=setup:actpass",
      "a=mid:0",
      "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level",
      "a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time",
      "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
      "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
      "a=sendrecv",
      "a=msid:- 835b93b7-c645-4b69-80af-d7ffb5e9b4a8",
      "a=rtcp-mux",
      "a=rtcp-rsize",
      "a=rtcp-xr:rcvr-rtt=all",
      "a=rtpmap:111 opus/48000/2",
      "a=rtcp-fb:111 transport-cc",
      "a=fmtp:111 minptime=10;useinbandfec=1",
      "a=rtpmap:63 red/48000/2",
      "a=fmtp:63 111/111",
      "a=rtpmap:9 G722/8000",
      "a=rtpmap:0 PCMU/8000",
      "a=rtpmap:8 PCMA/8000",
      "a=rtpmap:13 CN/8000",
      "a=rtpmap:110 telephone-event/48000",
      "a=rtpmap:126 telephone-event/8000",
      "a=ssrc:2828010043 cname:k5j4nsQwkrFV5cH4",
      "a=ssrc:2828010043 msid:- 835b93b7-c645-4b69-80af-d7ffb5e9b4a8",
      "m=application 9 UDP/DTLS/SCTP webrtc-datachannel",
      "c=IN IP4 0.0.0.0",
      `a=ice-ufrag:${ufrag}`,
      `a=ice-pwd:${pwd}`,
      "a=ice-options:trickle",
      "a=fingerprint:sha-256 3D:0D:52:B9:F4:87:5C:9D:DB:91:A5:8F:40:85:37:CB:6A:20:77:97:8A:90:03:BE:4B:AC:DF:2D:57:09:A3:BA",
      "a=setup:actpass",
      "a=mid:1",
      "a=sctp-port:5000",
      "a=max-message-size:262144",
    ].join("\r\n") + "\r\n"
  );
}
