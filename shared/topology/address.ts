// "host:port" and CIDR parsing for configuration (not the hot path).
import { parseIpv4, parseIpv6 } from "../backbone/address.ts";

export interface HostPort {
  host: string;
  port: number;
  ipv6: boolean;
}

/** "1.2.3.4:3478" or "[::1]:3478". Hosts must be literal IPs: the data plane never resolves names. */
export function parseHostPort(text: string): HostPort | string {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  if (!m) return `expected "ip:port" or "[ipv6]:port", got ${JSON.stringify(text)}`;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return `port ${port} is outside 1-65535`;
  if (m[1] !== undefined) {
    if (!parseIpv6(m[1], new Uint8Array(16))) return `${JSON.stringify(m[1])} is not an IPv6 address`;
    return { host: m[1], port, ipv6: true };
  }
  if (parseIpv4(m[2]!) < 0) return `${JSON.stringify(m[2])} is not an IPv4 address`;
  return { host: m[2]!, port, ipv6: false };
}

export interface Cidr {
  ipv6: boolean;
  /** 16 bytes (IPv4 in the last 4). */
  network: Uint8Array;
  prefix: number;
}

export function parseCidr(text: string): Cidr | string {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!m) return `expected CIDR "ip/prefix", got ${JSON.stringify(text)}`;
  const prefix = Number(m[2]);
  const network = new Uint8Array(16);
  const v4 = parseIpv4(m[1]!);
  if (v4 >= 0) {
    if (prefix > 32) return `IPv4 prefix /${prefix} is over 32`;
    network[12] = v4 >>> 24;
    network[13] = (v4 >>> 16) & 255;
    network[14] = (v4 >>> 8) & 255;
    network[15] = v4 & 255;
    return { ipv6: false, network, prefix };
  }
  if (!parseIpv6(m[1]!, network)) return `${JSON.stringify(m[1])} is not an IP address`;
  if (prefix > 128) return `IPv6 prefix /${prefix} is over 128`;
  return { ipv6: true, network, prefix };
}

/** Whether a 16-byte address (IPv4 in the last 4 bytes) lies inside the CIDR. */
export function cidrContains(c: Cidr, ipv6: boolean, ip: Uint8Array): boolean {
  if (c.ipv6 !== ipv6) return false;
  const start = ipv6 ? 0 : 12;
  let bits = c.prefix;
  for (let i = start; i < 16 && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip[i]! & mask) !== (c.network[i]! & mask)) return false;
  }
  return true;
}
