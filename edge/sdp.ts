// Structural checks of an SDP offer (RFC 8866, RFC 8839, RFC 8122) before it crosses the ocean:
// the edge rejects what no transceiver could answer, with the reason, and leaves codec and ICE
// semantics to the transceiver. Never throws; the text is the caller's.

export type SdpCheck = { ok: true; audio: number; application: number } | { ok: false; reason: string };

const LINE = /^([a-z])=(.*)$/;
const ICE_CHARS = /^[A-Za-z0-9+/]+$/;
const MEDIA = /^(audio|video|text|application|message) (\d+)(?:\/\d+)? (\S+)(?: (.+))?$/;
const FINGERPRINT = /^(sha-1|sha-224|sha-256|sha-384|sha-512|md5|md2) ([0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2})+)$/i;
const MAX_LINES = 2000;

export function checkSdpOffer(text: string): SdpCheck {
  if (text.length === 0) return { ok: false, reason: "empty body" };
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  if (lines.length > MAX_LINES) return { ok: false, reason: `more than ${MAX_LINES} lines` };
  if (lines[0] !== "v=0") return { ok: false, reason: 'the first line must be "v=0"' };
  let audio = 0;
  let application = 0;
  let inMedia = false;
  let hasOrigin = false;
  const session = { ufrag: false, pwd: false, fingerprint: false };
  const media = { ufrag: false, pwd: false, fingerprint: false };
  const missing: string[] = [];
  let portZero = false; // a rejected or bundle-only section need not repeat ICE credentials
  const closeMedia = (index: number): void => {
    if (!inMedia || portZero) return;
    for (const k of ["ufrag", "pwd", "fingerprint"] as const) {
      if (!media[k] && !session[k])
        missing.push(`m-line ${index} has no ${k === "fingerprint" ? "a=fingerprint" : `a=ice-${k}`}`);
    }
  };
  let mIndex = 0;
  for (let i = 0; i < lines.length; i++) {
    const m = LINE.exec(lines[i]!);
    if (!m) return { ok: false, reason: `line ${i + 1} is not "<type>=<value>"` };
    const type = m[1]!;
    const value = m[2]!;
    if (type === "o") hasOrigin = true;
    if (type === "m") {
      closeMedia(mIndex);
      const mm = MEDIA.exec(value);
      if (!mm) return { ok: false, reason: `line ${i + 1}: malformed m-line` };
      if (mm[1] === "audio") audio++;
      if (mm[1] === "application") application++;
      inMedia = true;
      portZero = mm[2] === "0";
      mIndex++;
      media.ufrag = media.pwd = media.fingerprint = false;
      continue;
    }
    if (type !== "a") continue;
    const target = inMedia ? media : session;
    if (value.startsWith("ice-ufrag:")) {
      const u = value.slice(10);
      if (u.length < 4 || u.length > 256 || !ICE_CHARS.test(u))
        return { ok: false, reason: `line ${i + 1}: ice-ufrag must be 4-256 ice-chars` };
      target.ufrag = true;
    } else if (value.startsWith("ice-pwd:")) {
      const p = value.slice(8);
      if (p.length < 22 || p.length > 256 || !ICE_CHARS.test(p))
        return { ok: false, reason: `line ${i + 1}: ice-pwd must be 22-256 ice-chars` };
      target.pwd = true;
    } else if (value.startsWith("fingerprint:")) {
      if (!FINGERPRINT.test(value.slice(12)))
        return { ok: false, reason: `line ${i + 1}: a=fingerprint must be "<hash> <hex:hex:...>"` };
      target.fingerprint = true;
    }
  }
  closeMedia(mIndex);
  if (!hasOrigin) return { ok: false, reason: "no o= line" };
  if (audio === 0) return { ok: false, reason: "no audio m-line" };
  if (missing.length > 0) return { ok: false, reason: missing[0]! };
  return { ok: true, audio, application };
}
