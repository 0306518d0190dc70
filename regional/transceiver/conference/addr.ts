// Conference addresses between the wire (hello: family, port, 16 IP bytes with IPv4 in the last
// 4) and the socket (host text): both ways, and the backbone CIDR check the hub applies to a
// hello before it sends anything to the address inside.
import type { Hello } from "../../../shared/conference/payloads.ts";
import { type Cidr, cidrContains, type HostPort, parseCidr } from "../../../shared/topology/address.ts";

/** "ip:port", "[ip6]:port". */
export const hostPortText = (h: HostPort): string =>
  h.ipv6 ? `[${h.host}]:${h.port}` : `${h.host}:${h.port}`;

/** The 16-byte form of a host ("10.0.0.1" in bytes 12-15), or undefined if it is not an IP. */
export function ipBytes(hp: HostPort): Uint8Array | undefined {
  const c = parseCidr(`${hp.host}/${hp.ipv6 ? 128 : 32}`);
  return typeof c === "string" ? undefined : c.network;
}

/** Host text for the socket from the 16 wire bytes. */
export function ipText(ipv6: boolean, ip: Uint8Array): string {
  if (!ipv6) return `${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((ip[i]! << 8) | ip[i + 1]!).toString(16));
  return groups.join(":");
}

/** Inside one of `cidrs`, or anywhere when none are configured. */
export function allowed(cidrs: readonly Cidr[], ipv6: boolean, ip: Uint8Array): boolean {
  if (cidrs.length === 0) return true;
  for (const c of cidrs) if (cidrContains(c, ipv6, ip)) return true;
  return false;
}

/** What a hello says of its leg (payloads.ts Hello without the participant id). */
export type LegHello = Omit<Hello, "participantId">;

/**
 * The leg a participant is bound to (its first MAC-valid hello): frames for that participant
 * from anywhere else are `wrong_leg`. The source address of a datagram is compared with the
 * hello's address (so the backbone must not translate it: TRANSCEIVER_CONFERENCE_ADDR is the
 * address peers see), the text of the last match cached so a datagram costs no parse.
 */
export class LegBinding {
  readonly clusterId: number;
  readonly transceiverId: number;
  readonly legId: string;
  readonly ipv6: boolean;
  readonly port: number;
  readonly #ip: Uint8Array;
  // A wildcard address in the hello (a leg bound to 0.0.0.0 without TRANSCEIVER_CONFERENCE_ADDR,
  // reachable only on one host): its datagrams come from some local address; the port decides.
  readonly #anyHost: boolean;
  #seen = "";

  constructor(h: LegHello) {
    this.clusterId = h.clusterId;
    this.transceiverId = h.transceiverId;
    this.legId = h.legId;
    this.ipv6 = h.ipv6;
    this.port = h.port;
    this.#ip = Uint8Array.from(h.ip);
    this.#anyHost = this.#ip.every((b, i) => b === 0 || (!h.ipv6 && i < 12));
  }

  /** The same leg as a hello says (ids, leg id, address). */
  sameHello(h: LegHello): boolean {
    if (h.clusterId !== this.clusterId || h.transceiverId !== this.transceiverId) return false;
    if (h.legId !== this.legId || h.ipv6 !== this.ipv6 || h.port !== this.port) return false;
    for (let i = 0; i < 16; i++) if (h.ip[i] !== this.#ip[i]) return false;
    return true;
  }

  /** A datagram's source is this leg's address. */
  isFrom(address: string, port: number): boolean {
    if (port !== this.port) return false;
    if (address === this.#seen || this.#anyHost) return true;
    // A dual-stack socket reports an IPv4 leg as "::ffff:a.b.c.d".
    const host = !this.ipv6 && address.startsWith("::ffff:") ? address.slice(7) : address;
    const ip = ipBytes({ host, port, ipv6: host.includes(":") });
    if (ip === undefined) return false;
    for (let i = 0; i < 16; i++) if (ip[i] !== this.#ip[i]) return false;
    this.#seen = address;
    return true;
  }

  toJSON(): { clusterId: number; transceiverId: number; legId: string } {
    return { clusterId: this.clusterId, transceiverId: this.transceiverId, legId: this.legId };
  }
}
