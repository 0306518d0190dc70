// leanRoute: werift 0.25.2's RTP routing (RtpRouter.routeRtp, a private member of the peer
// connection's router, pinned) without the extension map it builds for every packet; falls back
// to werift's own when the router is not this shape. Facts in docs/werift.md.
import type { RtpPacket } from "werift";

/** werift's RtpRouter (media/router.ts), what its routeRtp reads. */
interface RouterInternals {
  routeRtp: (packet: RtpPacket) => void;
  readonly ssrcTable: Record<number, { handleRtpBySsrc?(packet: RtpPacket, extensions: object): void }>;
}

// What werift's rtpHeaderExtensionsParser makes of a header without extensions (a new {} each time).
const NO_EXTENSIONS = Object.freeze({});
const leanRouters = new WeakSet<object>();

/**
 * werift's routeRtp, on this peer connection, for a packet without header extensions (what
 * werift clients and most SIP gateways send) whose SSRC the router knows: the receiver's
 * handler directly, with one shared empty extension map instead of an array and an object per
 * packet. Packets with extensions (mid and rid steer werift's routing) and new SSRCs
 * take werift's own. False when werift's router is not the shape this was written for.
 */
export function leanRoute(pc: object): boolean {
  const r = (pc as { router?: RouterInternals }).router;
  if (r === undefined || typeof r.routeRtp !== "function" || typeof r.ssrcTable !== "object") return false;
  if (leanRouters.has(r)) return true;
  leanRouters.add(r);
  const werift = r.routeRtp;
  r.routeRtp = (packet) => {
    if (packet.header.extensions.length === 0) {
      const receiver = r.ssrcTable[packet.header.ssrc];
      if (receiver !== undefined && typeof receiver.handleRtpBySsrc === "function") {
        receiver.handleRtpBySsrc(packet, NO_EXTENSIONS);
        return;
      }
    }
    werift(packet);
  };
  return true;
}
