// Whether an offer's audio carries RED we take (RFC 2198 of Opus, as Chromium offers
// `a=rtpmap:63 red/48000/2` + `a=fmtp:63 111/111`). Pure.
import type { OfferCodec } from "../../../shared/sdp/offer.ts";
import { RED_MAX_BLOCKS } from "./red.ts";

export interface RedOffer {
  /** The offer's payload type for red, and its fmtp (redundancy levels, each Opus's pt). */
  payloadType: number;
  fmtp: string;
  /** The offer's Opus payload type, the only one RED may carry here. */
  opusPayloadType: number;
}

/**
 * The offer's red codec when every level of its fmtp names the offer's opus/48000/2 and Opus is
 * preferred over PCMU (RED here only ever carries Opus); else undefined.
 */
export function redOffered(codecs: readonly OfferCodec[]): RedOffer | undefined {
  let opus = -1;
  let pcmu = -1;
  let red = -1;
  for (let i = 0; i < codecs.length; i++) {
    const c = codecs[i]!;
    const name = c.name.toLowerCase();
    if (opus < 0 && name === "opus" && c.clockRate === 48000 && c.channels === 2) opus = i;
    else if (pcmu < 0 && name === "pcmu" && c.clockRate === 8000) pcmu = i;
    else if (red < 0 && name === "red" && c.clockRate === 48000) red = i;
  }
  if (opus < 0 || red < 0 || (pcmu >= 0 && pcmu < opus)) return undefined;
  const r = codecs[red]!;
  const o = codecs[opus]!;
  const levels = r.fmtp.trim().split("/");
  if (levels.length < 1 || levels.length > RED_MAX_BLOCKS) return undefined;
  for (const l of levels) if (l !== String(o.payloadType)) return undefined;
  return { payloadType: r.payloadType, fmtp: levels.join("/"), opusPayloadType: o.payloadType };
}
