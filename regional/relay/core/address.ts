// Client and peer addresses as the socket layer reports them ("1.2.3.4" / "2001:db8::1"), parsed
// once per datagram into the numeric form the tables use. IPv4 allocates nothing.
import { parseIpv4, parseIpv6 } from "../../../shared/backbone/address.ts";

const MAPPED_PREFIX = "::ffff:";

/**
 * IPv4 as an unsigned 32-bit number, also for IPv4-mapped IPv6 ("::ffff:1.2.3.4", what a
 * dual-stack socket reports); -1 when the address is IPv6 proper (or not an address).
 */
export function ipv4Of(address: string): number {
  const v4 = parseIpv4(address);
  if (v4 >= 0) return v4;
  // Parsed in place: a dual-stack VIP reports every IPv4 client in this form, once per datagram.
  if (address.length > 7 && address.startsWith(MAPPED_PREFIX)) return parseIpv4(address, 7);
  return -1;
}

/** Parses IPv6 text into `out` (16 bytes). */
export function ipv6Into(address: string, out: Uint8Array): boolean {
  return parseIpv6(address, out);
}

/** Map key of an IPv6 flow. */
export function v6Key(ip: Uint8Array, port: number): string {
  let s = "";
  for (let i = 0; i < 16; i++) s += ip[i]!.toString(16).padStart(2, "0");
  return `${s}#${port}`;
}

/** /64 prefix key of an IPv6 address. */
export function v6Prefix(ip: Uint8Array): string {
  let s = "6:";
  for (let i = 0; i < 8; i++) s += ip[i]!.toString(16).padStart(2, "0");
  return s;
}
