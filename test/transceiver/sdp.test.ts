// SDP checks and edits (pure): table-driven rejections with precise reasons, sanitising (mDNS,
// end-of-candidates), answer edits (Opus FEC mirrored, second candidate), sdpfrag parsing, and a
// property test that inspectOffer never throws.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  finishAnswer,
  hostPriority,
  replaceIceCredentials,
  restartAnswerFrag,
} from "../../regional/transceiver/core/answer.ts";
import { parseSdpFrag } from "../../regional/transceiver/core/sdpfrag.ts";
import { inspectOffer, MAX_SDP_BYTES } from "../../shared/sdp/offer.ts";

// Modelled on the structure of a Chrome offer (audio + data channel, BUNDLE, mDNS host
// candidate, RED, telephone-event); values are made up. Stored with LF line endings.
const CHROME = readFileSync(new URL("./fixtures/chrome-like-offer.sdp", import.meta.url), "utf8").replace(
  /\n/g,
  "\r\n",
);

describe("inspectOffer", () => {
  it("accepts a browser-style offer and sanitises it", () => {
    const r = inspectOffer(CHROME);
    if (!r.ok) throw new Error(r.message);
    expect(r.iceUfrag).toBe("Xq3v");
    expect(r.opusFec).toBe(true);
    expect(r.hasOpus && r.hasPcmu && r.hasDataChannel).toBe(true);
    expect(r.audioMid).toBe("0");
    expect(r.mdnsCandidatesStripped).toBe(2);
    expect(r.sdp).not.toContain(".local");
    expect(r.sdp).not.toContain("a=end-of-candidates");
    expect(r.sdp).toContain("203.0.113.7 56143 typ srflx");
    expect(r.audioCodecs.map((c) => c.name)).toEqual([
      "opus",
      "red",
      "G722",
      "PCMU",
      "PCMA",
      "CN",
      "telephone-event",
      "telephone-event",
    ]);
  });

  it("reads static payload type 0 without an rtpmap as PCMU", () => {
    const sdp = CHROME.replace(/m=audio 9 UDP\/TLS\/RTP\/SAVPF .*/, "m=audio 9 UDP/TLS/RTP/SAVPF 0").replace(
      /a=rtpmap:.*\r\n|a=fmtp:.*\r\n/g,
      "",
    );
    const r = inspectOffer(sdp);
    expect(r.ok && r.hasPcmu && !r.hasOpus).toBe(true);
  });

  const cases: [string, (s: string) => string, string, RegExp][] = [
    ["empty", () => "", "sdp_malformed", /empty/],
    ["no v=0", (s) => s.replace("v=0", "v=1"), "sdp_malformed", /v=0/],
    ["garbage line", (s) => s.replace("s=-", "hello"), "sdp_malformed", /line 3/],
    ["bad m-line", (s) => s.replace("m=audio 9 UDP", "m=audio nine UDP"), "sdp_malformed", /m-line/],
    [
      "no audio",
      (s) => s.replace(/m=audio[\s\S]*?(?=m=application)/, "").replace("BUNDLE 0 1", "BUNDLE 1"),
      "no_audio",
      /m=audio/,
    ],
    ["audio rejected", (s) => s.replace("m=audio 9 ", "m=audio 0 "), "no_audio", /active/],
    ["no ufrag", (s) => s.replace(/a=ice-ufrag:.*\r\n/g, ""), "sdp_malformed", /ice-ufrag/],
    ["short pwd", (s) => s.replace(/a=ice-pwd:.*\r\n/g, "a=ice-pwd:short\r\n"), "sdp_malformed", /ice-pwd/],
    ["no fingerprint", (s) => s.replace(/a=fingerprint:.*\r\n/g, ""), "sdp_malformed", /fingerprint/],
    ["plain RTP", (s) => s.replace("UDP/TLS/RTP/SAVPF", "RTP/AVP"), "sdp_malformed", /DTLS-SRTP/],
    ["no rtcp-mux", (s) => s.replace("a=rtcp-mux\r\n", ""), "rtcp_mux_required", /rtcp-mux/],
    ["no BUNDLE", (s) => s.replace(/a=group:BUNDLE.*\r\n/, ""), "bundle_required", /BUNDLE/],
    [
      "partial BUNDLE",
      (s) => s.replace("a=group:BUNDLE 0 1", "a=group:BUNDLE 0"),
      "bundle_required",
      /BUNDLE/,
    ],
    [
      "only G722",
      (s) =>
        s
          .replace(/m=audio 9 UDP\/TLS\/RTP\/SAVPF .*/, "m=audio 9 UDP/TLS/RTP/SAVPF 9")
          .replace(/a=rtpmap:(?!9 ).*\r\n|a=fmtp:.*\r\n/g, ""),
      "no_acceptable_codec",
      /G722\/8000/,
    ],
    [
      "opus mono only",
      (s) =>
        s
          .replace(/ 0 8 13/, " 8 13")
          .replace("opus/48000/2", "opus/48000")
          .replace("a=rtpmap:0 PCMU/8000\r\n", ""),
      "no_acceptable_codec",
      /opus/,
    ],
    ["too large", (s) => `${s}a=x:${"y".repeat(MAX_SDP_BYTES)}\r\n`, "sdp_too_large", /65536/],
  ];
  it.each(cases)("rejects %s", (_name, edit, code, message) => {
    const r = inspectOffer(edit(CHROME));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe(code);
    expect(r.message).toMatch(message);
  });

  it("never throws, whatever the input", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2000 }), (s) => {
        inspectOffer(s);
      }),
      { numRuns: 500 },
    );
    const lines = CHROME.split("\r\n");
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: lines.length - 1 }), { maxLength: 8 }),
        fc.string(),
        (drop, junk) => {
          const mutated = lines.filter((_, i) => !drop.includes(i));
          mutated.splice(drop[0] ?? 0, 0, junk);
          inspectOffer(mutated.join("\r\n"));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("finishAnswer", () => {
  const answer =
    "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111 0\r\na=candidate:abc 1 udp 2130706431 192.0.2.1 3478 typ host generation 0 ufrag U1\r\na=rtpmap:111 opus/48000/2\r\na=fmtp:111 minptime=10;useinbandfec=1\r\na=rtpmap:0 PCMU/8000\r\n";
  it("keeps useinbandfec only when the offer asked for it", () => {
    expect(finishAnswer(answer, { opusFec: true })).toContain("a=fmtp:111 minptime=10;useinbandfec=1");
    const off = finishAnswer(answer, { opusFec: false });
    expect(off).toContain("a=fmtp:111 minptime=10\r\n");
    expect(off).not.toContain("useinbandfec");
  });
  it("adds the cluster VIP as a lower-priority second candidate", () => {
    const out = finishAnswer(answer, {
      opusFec: true,
      secondCandidate: { host: "198.51.100.9", port: 3479 },
    });
    const cands = out.split("\r\n").filter((l) => l.startsWith("a=candidate:"));
    expect(cands).toHaveLength(2);
    expect(cands[1]).toBe(
      `a=candidate:gr2 1 udp ${hostPriority(32768)} 198.51.100.9 3479 typ host generation 0 ufrag U1`,
    );
    expect(hostPriority(32768)).toBeLessThan(2130706431);
    expect(hostPriority(65535)).toBe(2130706431);
  });
});

describe("sdpfrag and ICE restart", () => {
  it("parses credentials and candidates, skipping mDNS", () => {
    const r = parseSdpFrag(
      "a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\na=candidate:1 1 udp 1 x.local 1 typ host\r\na=candidate:2 1 udp 1 192.0.2.3 9 typ host\r\na=end-of-candidates\r\n",
    );
    expect(r).toEqual({
      ok: true,
      ufrag: "abcd",
      pwd: "abcdefghijklmnopqrstuvwx",
      candidates: ["candidate:2 1 udp 1 192.0.2.3 9 typ host"],
      endOfCandidates: true,
    });
    expect(parseSdpFrag("a=ice-ufrag:a\r\n").ok).toBe(false);
    expect(parseSdpFrag("a=ice-ufrag:abcd\r\na=ice-ufrag:efgh\r\n").ok).toBe(false);
    expect(parseSdpFrag("nonsense").ok).toBe(false);
  });
  it("builds the restart answer fragment from the new local answer", () => {
    const local =
      "v=0\r\na=group:BUNDLE 0 1\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=candidate:x 1 udp 2130706431 192.0.2.1 3478 typ host\r\na=ice-ufrag:NEWU\r\na=ice-pwd:NEWPWDNEWPWDNEWPWDNEWPWD\r\na=mid:0\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\na=mid:1\r\n";
    expect(restartAnswerFrag(local)).toBe(
      "a=ice-options:trickle\r\na=group:BUNDLE 0 1\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\na=ice-ufrag:NEWU\r\na=ice-pwd:NEWPWDNEWPWDNEWPWDNEWPWD\r\na=candidate:x 1 udp 2130706431 192.0.2.1 3478 typ host\r\na=end-of-candidates\r\n",
    );
    const replaced = replaceIceCredentials(CHROME, "NEWC", "pwdpwdpwdpwdpwdpwdpwdpwd");
    expect(replaced.match(/a=ice-ufrag:NEWC/g)).toHaveLength(2);
    expect(replaced).not.toContain("Xq3v");
    expect(replaced).not.toContain("a=candidate:");
  });
});
