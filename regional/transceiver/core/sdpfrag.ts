// application/trickle-ice-sdpfrag bodies (RFC 8840) of a PATCH: ICE restart and trickled
// candidates. Pure; never throws on input.
import { ICE_CHARS, isMdnsCandidate } from "../../../shared/sdp/offer.ts";

export interface SdpFrag {
  ufrag: string | undefined;
  pwd: string | undefined;
  candidates: string[];
  endOfCandidates: boolean;
}

export type SdpFragResult = ({ ok: true } & SdpFrag) | { ok: false; message: string };

/** Parses an application/trickle-ice-sdpfrag body (RFC 8840). */
export function parseSdpFrag(text: string): SdpFragResult {
  const frag: SdpFrag = { ufrag: undefined, pwd: undefined, candidates: [], endOfCandidates: false };
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l === "") continue;
    if (!/^[a-z]=/.test(l)) return { ok: false, message: `line ${i + 1}: expected "<letter>=<value>"` };
    if (l.startsWith("a=ice-ufrag:")) {
      const v = l.slice(12).trim();
      if (frag.ufrag !== undefined && frag.ufrag !== v)
        return { ok: false, message: "two different a=ice-ufrag" };
      if (v.length < 4 || v.length > 256 || !ICE_CHARS.test(v))
        return { ok: false, message: "a=ice-ufrag must be 4-256 ice-chars" };
      frag.ufrag = v;
    } else if (l.startsWith("a=ice-pwd:")) {
      const v = l.slice(10).trim();
      if (frag.pwd !== undefined && frag.pwd !== v) return { ok: false, message: "two different a=ice-pwd" };
      if (v.length < 22 || v.length > 256 || !ICE_CHARS.test(v))
        return { ok: false, message: "a=ice-pwd must be 22-256 ice-chars" };
      frag.pwd = v;
    } else if (l.startsWith("a=candidate:")) {
      if (!isMdnsCandidate(l.slice(2))) frag.candidates.push(l.slice(2));
    } else if (l === "a=end-of-candidates") {
      frag.endOfCandidates = true;
    }
  }
  return { ok: true, ...frag };
}
