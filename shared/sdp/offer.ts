// The one check of an SDP offer (pure), used by the edge and by the transceiver before werift
// sees it: size, syntax, an audio m-line, an acceptable codec, BUNDLE, ICE credentials.
// mDNS candidates and a=end-of-candidates are stripped (werift would open a multicast socket per
// .local host, and end-of-candidates with no pairable candidate fails connect() at once).
// Every rejection names the exact problem; nothing here throws on input.

export const MAX_SDP_BYTES = 64 * 1024;

export type OfferProblem =
  | "sdp_malformed"
  | "sdp_too_large"
  | "no_audio"
  | "no_acceptable_codec"
  | "bundle_required"
  | "rtcp_mux_required"
  | "ice_lite_unsupported";

export interface OfferCodec {
  payloadType: number;
  name: string;
  clockRate: number;
  channels: number;
  fmtp: string;
}

export interface OfferInfo {
  ok: true;
  /** The offer as werift should see it. */
  sdp: string;
  iceUfrag: string;
  icePwd: string;
  audioMid: string | undefined;
  audioCodecs: OfferCodec[];
  /** Opus offered with useinbandfec=1. */
  opusFec: boolean;
  hasOpus: boolean;
  hasPcmu: boolean;
  hasDataChannel: boolean;
  mdnsCandidatesStripped: number;
  /**
   * The offer's BUNDLE tag (first mid of the group) when it is a video m-line, with its first
   * codec: answered inactive rather than rejected (see `taggedVideo`).
   */
  taggedVideo: { mid: string; codec: OfferCodec } | undefined;
  /** The offer's a=setup (RFC 5763): "actpass", "active", "passive", or undefined. */
  dtlsSetup: string | undefined;
}

export type OfferResult = OfferInfo | { ok: false; code: OfferProblem; message: string };

export const ICE_CHARS = /^[A-Za-z0-9+/]+$/;
/** RFC 8122 §5: a hash function name and the fingerprint as colon-separated hex bytes. */
const FINGERPRINT = /^(sha-1|sha-224|sha-256|sha-384|sha-512|md5|md2) ([0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2})+)$/i;

export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

interface Section {
  kind: string;
  port: number;
  proto: string;
  formats: string[];
  lineNo: number;
  /** Index of the m-line in the sanitised output. */
  outIndex: number;
  attrs: string[];
}

function fail(code: OfferProblem, message: string): OfferResult {
  return { ok: false, code, message };
}

function attrValue(attrs: readonly string[], name: string): string | undefined {
  const prefix = `${name}:`;
  for (const a of attrs) if (a.startsWith(prefix)) return a.slice(prefix.length).trim();
  return undefined;
}

export function isMdnsCandidate(attr: string): boolean {
  // candidate:<foundation> <component> <transport> <priority> <address> <port> typ <type> ...
  const parts = attr.slice("candidate:".length).trim().split(/\s+/);
  const address = parts[4];
  return address?.toLowerCase().endsWith(".local") === true;
}

/** A payload type of an m-line with its rtpmap/fmtp, or what is wrong with it. */
function readCodec(s: Section, f: string): OfferCodec | string {
  const pt = Number(f);
  if (!/^\d+$/.test(f) || pt > 127) {
    return `m=${s.kind} (line ${s.lineNo}): payload type ${JSON.stringify(f)}`;
  }
  const rtpmap = s.attrs.find((a) => a.startsWith(`rtpmap:${pt} `));
  const fmtp = s.attrs.find((a) => a.startsWith(`fmtp:${pt} `));
  let name = "";
  let clockRate = 0;
  let channels = 1;
  if (rtpmap) {
    const m = /^rtpmap:\d+ ([^/\s]+)\/(\d+)(?:\/(\d+))?$/.exec(rtpmap.trim());
    if (!m) return `m=${s.kind}: malformed a=${rtpmap.slice(0, 60)}`;
    name = m[1]!;
    clockRate = Number(m[2]);
    channels = m[3] ? Number(m[3]) : 1;
  } else if (pt === 0 && s.kind === "audio") {
    name = "PCMU";
    clockRate = 8000;
  }
  return { payloadType: pt, name, clockRate, channels, fmtp: fmtp ? fmtp.slice(fmtp.indexOf(" ") + 1) : "" };
}

/**
 * RFC 9143 §7.3.1 lets an answer reject the offerer-tagged m-line (the first mid of the BUNDLE
 * group); the offerer must then move its BUNDLE transport to the next one. GStreamer 1.22
 * webrtcbin cannot (it opens a second ICE stream that never gathers) and simple-whip-client reads
 * the answer's candidates from the first m-line only. So a video m-line that carries the tag is
 * answered inactive (accepted, in the group, no media), and any other video m-line is rejected.
 */
function taggedVideo(
  session: readonly string[],
  active: readonly Section[],
): { mid: string; codec: OfferCodec } | undefined {
  const group = session.find((a) => a.startsWith("group:BUNDLE"));
  const tag = group?.slice("group:BUNDLE".length).trim().split(/\s+/)[0];
  if (!tag) return undefined;
  const s = active.find((x) => attrValue(x.attrs, "mid") === tag);
  if (s?.kind !== "video" || !s.proto.includes("SAVPF")) return undefined;
  for (const f of s.formats) {
    const c = readCodec(s, f);
    if (typeof c !== "string" && c.name !== "" && c.clockRate > 0) return { mid: tag, codec: c };
  }
  return undefined;
}

/** Inspects and sanitises an SDP offer. */
export function inspectOffer(sdp: string): OfferResult {
  if (typeof sdp !== "string" || sdp.length === 0) return fail("sdp_malformed", "sdp is empty");
  const bytes = utf8Length(sdp);
  if (bytes > MAX_SDP_BYTES) {
    return fail("sdp_too_large", `sdp has ${bytes} bytes, the limit is ${MAX_SDP_BYTES}`);
  }
  const lines = sdp.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  if (lines[0] !== "v=0") return fail("sdp_malformed", 'line 1: an SDP must start with "v=0"');
  const session: string[] = [];
  const sections: Section[] = [];
  const out: string[] = [];
  let mdns = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!/^[a-z]=/.test(line)) {
      return fail(
        "sdp_malformed",
        `line ${i + 1}: expected "<letter>=<value>", got ${JSON.stringify(line.slice(0, 40))}`,
      );
    }
    if (line.startsWith("m=")) {
      const m = /^m=(\S+) (\d+)(?:\/\d+)? (\S+)((?: \S+)*)$/.exec(line);
      if (!m) return fail("sdp_malformed", `line ${i + 1}: malformed m-line`);
      sections.push({
        kind: m[1]!,
        port: Number(m[2]),
        proto: m[3]!,
        formats: m[4]!.trim() === "" ? [] : m[4]!.trim().split(" "),
        lineNo: i + 1,
        outIndex: out.length,
        attrs: [],
      });
      out.push(line);
      continue;
    }
    if (line.startsWith("a=")) {
      const attr = line.slice(2);
      if (attr === "end-of-candidates") continue;
      if (attr.startsWith("candidate:") && isMdnsCandidate(attr)) {
        mdns++;
        continue;
      }
      const cur = sections[sections.length - 1];
      if (cur) cur.attrs.push(attr);
      else session.push(attr);
    }
    out.push(line);
  }
  // RFC 8866 §5: o= is required (the edge refused offers without it before it shared this check).
  if (!lines.some((l) => l.startsWith("o="))) return fail("sdp_malformed", "the offer has no o= line");
  if (sections.length === 0) return fail("no_audio", "the offer has no m-line");
  // RFC 8843 §7.3.3: a bundle-only m-line carries port 0 in the offer but is not rejected; it
  // shares the BUNDLE transport (GStreamer webrtcbin with max-bundle and Firefox with bundlePolicy
  // "max-bundle" offer every m-line after the first like this). werift would take port 0 as
  // rejected, so it sees the discard port 9 instead.
  for (const s of sections) {
    if (s.port === 0 && s.attrs.includes("bundle-only")) {
      s.port = 9;
      out[s.outIndex] = out[s.outIndex]!.replace(/^(m=\S+ )0/, (_m, kind: string) => `${kind}9`);
    }
  }
  const audio = sections.find((s) => s.kind === "audio" && s.port !== 0);
  if (!audio) return fail("no_audio", "the offer has no active m=audio section");

  const ufragOf = (s: Section): string | undefined =>
    attrValue(s.attrs, "ice-ufrag") ?? attrValue(session, "ice-ufrag");
  const pwdOf = (s: Section): string | undefined =>
    attrValue(s.attrs, "ice-pwd") ?? attrValue(session, "ice-pwd");
  const active = sections.filter((s) => s.port !== 0);
  for (const s of active) {
    const u = ufragOf(s);
    const p = pwdOf(s);
    if (u === undefined) return fail("sdp_malformed", `m=${s.kind} (line ${s.lineNo}) has no a=ice-ufrag`);
    if (p === undefined) return fail("sdp_malformed", `m=${s.kind} (line ${s.lineNo}) has no a=ice-pwd`);
    if (u.length < 4 || u.length > 256 || !ICE_CHARS.test(u)) {
      return fail("sdp_malformed", `m=${s.kind} (line ${s.lineNo}): a=ice-ufrag must be 4-256 ice-chars`);
    }
    if (p.length < 22 || p.length > 256 || !ICE_CHARS.test(p)) {
      return fail("sdp_malformed", `m=${s.kind} (line ${s.lineNo}): a=ice-pwd must be 22-256 ice-chars`);
    }
    const fp = attrValue(s.attrs, "fingerprint") ?? attrValue(session, "fingerprint");
    if (fp === undefined) {
      return fail("sdp_malformed", `m=${s.kind} (line ${s.lineNo}) has no a=fingerprint (DTLS is required)`);
    }
    if (!FINGERPRINT.test(fp)) {
      return fail(
        "sdp_malformed",
        `m=${s.kind} (line ${s.lineNo}): a=fingerprint must be "<hash> <hex:hex:...>"`,
      );
    }
  }
  if (!audio.proto.includes("RTP/SAVPF") && !audio.proto.includes("RTP/SAVP")) {
    return fail("sdp_malformed", `m=audio (line ${audio.lineNo}): transport ${audio.proto} is not DTLS-SRTP`);
  }
  if (!audio.attrs.includes("rtcp-mux")) {
    return fail("rtcp_mux_required", `m=audio (line ${audio.lineNo}) must carry a=rtcp-mux`);
  }
  if (session.includes("ice-lite") || active.some((s) => s.attrs.includes("ice-lite"))) {
    // A lite agent never sends a connectivity check, and the relay learns a client's address
    // from nothing else: such a call could never connect, so it fails now rather than in 20 s.
    return fail(
      "ice_lite_unsupported",
      "the offer is ICE-lite (a=ice-lite); the client must run full ICE: its first check opens the relay path",
    );
  }
  if (active.length > 1) {
    const mids = active.map((s) => attrValue(s.attrs, "mid"));
    const groups = session
      .filter((a) => a.startsWith("group:BUNDLE"))
      .map((a) => a.slice("group:BUNDLE".length).trim().split(/\s+/));
    const ok = groups.some((g) => mids.every((mid) => mid !== undefined && g.includes(mid)));
    if (!ok) {
      return fail("bundle_required", "every active m-line must be in one a=group:BUNDLE (one transport)");
    }
  }

  const codecs: OfferCodec[] = [];
  for (const f of audio.formats) {
    const c = readCodec(audio, f);
    if (typeof c === "string") return fail("sdp_malformed", c);
    codecs.push(c);
  }
  const opus = codecs.find(
    (c) => c.name.toLowerCase() === "opus" && c.clockRate === 48000 && c.channels === 2,
  );
  const pcmu = codecs.find((c) => c.name.toLowerCase() === "pcmu" && c.clockRate === 8000);
  if (!opus && !pcmu) {
    const offered = codecs
      .map((c) => (c.name ? `${c.name}/${c.clockRate}` : `pt ${c.payloadType}`))
      .join(", ");
    return fail(
      "no_acceptable_codec",
      `no acceptable audio codec (need opus/48000/2 or PCMU/8000), offered: ${offered || "none"}`,
    );
  }
  const opusFec = opus !== undefined && /(^|;)\s*useinbandfec=1\b/.test(opus.fmtp);
  // PCMU as static payload type 0 may come without its rtpmap (RFC 3551; SIP gateways do this);
  // werift only knows codecs by rtpmap, so the line is added for it.
  if (pcmu?.payloadType === 0 && !audio.attrs.some((a) => a.startsWith("rtpmap:0 "))) {
    out.splice(audio.outIndex + 1, 0, "a=rtpmap:0 PCMU/8000");
  }
  return {
    ok: true,
    sdp: `${out.join("\r\n")}\r\n`,
    iceUfrag: ufragOf(audio)!,
    icePwd: pwdOf(audio)!,
    audioMid: attrValue(audio.attrs, "mid"),
    audioCodecs: codecs,
    opusFec,
    hasOpus: opus !== undefined,
    hasPcmu: pcmu !== undefined,
    hasDataChannel: active.some((s) => s.kind === "application"),
    mdnsCandidatesStripped: mdns,
    taggedVideo: taggedVideo(session, active),
    dtlsSetup: attrValue(audio.attrs, "setup") ?? attrValue(session, "setup"),
  };
}
