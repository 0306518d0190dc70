// Client addresses in logs are cut to their network: the /24 (IPv4) or /48 (IPv6), no port.
import { formatIpv4, formatIpv6, parseIpv4, parseIpv6, readIpv4 } from "../backbone/address.ts";

/**
 * Accepts "ip", "ip:port", "[ipv6]:port" and IPv4-mapped IPv6; anything else is "redacted".
 */
export function redactAddress(address: string): string {
  let host = address;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(address);
  const v4WithPort = /^([\d.]+):\d{1,5}$/.exec(address);
  if (bracketed) host = bracketed[1]!;
  else if (v4WithPort) host = v4WithPort[1]!;
  let v4 = parseIpv4(host);
  const ip = new Uint8Array(16);
  if (v4 < 0 && parseIpv6(host, ip)) {
    const mapped = ip.subarray(0, 10).every((b) => b === 0) && ip[10] === 0xff && ip[11] === 0xff;
    if (!mapped) {
      ip.fill(0, 6);
      return `${formatIpv6(ip)}/48`;
    }
    v4 = readIpv4(ip);
  }
  if (v4 < 0) return "redacted";
  return `${formatIpv4((v4 & 0xffffff00) >>> 0)}/24`;
}
