// The gate every backbone frame passes first, on the POP's backbone listener and at the cluster
// relay alike: the header decoded once (into the engine's reused header), the source address
// checked against the networks of the peer the header names (a cluster for a POP, a POP for a
// cluster relay), and a ping turned into a pong in place. The engine goes on with the header.
import {
  decodeFrameHeader,
  FRAME_VERSION,
  type FrameHeader,
  FrameType,
} from "../../../shared/backbone/frame.ts";
import { ipv4Of, ipv6Into } from "./address.ts";
import type { SourceList } from "./sources.ts";

export const Gate = {
  /** A frame for the engine: `h` holds its header. */
  pass: 0,
  malformed: 1,
  sourceNotAllowed: 2,
  /** The frame is now a pong: send it back to its source. */
  pong: 3,
} as const;
export type Gate = (typeof Gate)[keyof typeof Gate];

/** One per engine; `ip` is the IPv4 source of the last frame as a number (-1 for IPv6). */
export class BackboneGate {
  ip = -1;
  readonly #h: FrameHeader;
  readonly #ip6: Uint8Array;
  readonly #sources: ReadonlyMap<number, SourceList>;
  readonly #byPop: boolean;

  /**
   * `h` is the engine's reused header, `ip6` its scratch buffer for an IPv6 source; `sources`
   * are the networks per peer, keyed by the header's POP id (`by: "pop"`, at a cluster relay) or
   * cluster id (`by: "cluster"`, at a POP).
   */
  constructor(
    h: FrameHeader,
    ip6: Uint8Array,
    sources: ReadonlyMap<number, SourceList>,
    by: "pop" | "cluster",
  ) {
    this.#h = h;
    this.#ip6 = ip6;
    this.#sources = sources;
    this.#byPop = by === "pop";
  }

  check(buf: Uint8Array, len: number, address: string): Gate {
    const h = this.#h;
    if (decodeFrameHeader(buf, len, h) !== "ok") return Gate.malformed;
    const sources = this.#sources.get(this.#byPop ? h.popId : h.clusterId);
    if (sources === undefined) return Gate.sourceNotAllowed;
    const ip = ipv4Of(address);
    this.ip = ip;
    const allowed = ip >= 0 ? sources.has4(ip) : ipv6Into(address, this.#ip6) && sources.has6(this.#ip6);
    if (!allowed) return Gate.sourceNotAllowed;
    if (h.type === FrameType.ping) {
      buf[1] = (FRAME_VERSION << 4) | FrameType.pong;
      return Gate.pong;
    }
    return Gate.pass;
  }
}
