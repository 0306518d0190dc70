// Relay addresses for the batched backbone socket: the text form the mux keys paths by (made once
// per address, not per datagram) and the parsed form the addon sends to. Bounded: relay workers
// are a handful; a flood of sources only churns the caches.
import { formatIpv4, formatIpv6, parseIpv4, parseIpv6 } from "../../../shared/backbone/address.ts";

const MAX_ADDRESSES = 4096;

export interface Destination {
  family: 4 | 6;
  ip4: number;
  ip6: Uint8Array | undefined;
}

export class RelayAddresses {
  readonly #text4 = new Map<number, string>();
  readonly #parsed = new Map<string, Destination>();
  readonly #ip6 = new Uint8Array(16);
  readonly #onBadHost: () => void;

  constructor(onBadHost: () => void) {
    this.#onBadHost = onBadHost;
  }

  host4(ip: number): string {
    let text = this.#text4.get(ip);
    if (text === undefined) {
      text = formatIpv4(ip);
      if (this.#text4.size >= MAX_ADDRESSES) this.#text4.clear();
      this.#text4.set(ip, text);
    }
    return text;
  }

  /** The IPv6 source at word `o + 4` of the receive metadata (16 bytes, network order). */
  host6(metaBytes: Uint8Array, o: number): string {
    const at = (o + 4) * 4;
    return formatIpv6(metaBytes.subarray(at, at + 16));
  }

  /** Where a host text sends to; undefined (counted) when it is not an IP literal. */
  destination(host: string): Destination | undefined {
    let d = this.#parsed.get(host);
    if (d !== undefined) return d;
    const ip4 = parseIpv4(host);
    if (ip4 >= 0) d = { family: 4, ip4, ip6: undefined };
    else if (parseIpv6(host, this.#ip6)) d = { family: 6, ip4: 0, ip6: this.#ip6.slice() };
    else {
      this.#onBadHost();
      return undefined;
    }
    if (this.#parsed.size >= MAX_ADDRESSES) this.#parsed.clear();
    this.#parsed.set(host, d);
    return d;
  }
}
