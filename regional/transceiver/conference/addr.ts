// Conference addresses between the wire (hello: family, port, 16 IP bytes with IPv4 in the last
// 4) and the socket (host text): both ways, and the backbone CIDR check the hub applies to a
// hello before it sends anything to the address inside.
import { type Cidr, cidrContains, type HostPort, parseCidr } from "../../../shared/topology/address.ts";

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
