// Client addresses as the relay sees them (dgram gives strings) to and from the 16-byte form the
// backbone frame carries, plus a numeric flow key for IPv4 that costs no allocation.

/** Parses dotted IPv4 (`text` from index `from` to its end) into a u32; -1 if it is not IPv4. No allocation. */
export function parseIpv4(text: string, from = 0): number {
  let acc = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      acc = acc * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      // No leading zeros ("01" is octal to some parsers): the same strict form as inet_pton and net.isIPv4.
      if (digits === 1 && part === 0) return -1;
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else return -1;
  }
  if (dots !== 3 || digits === 0) return -1;
  return acc * 256 + part;
}

export function formatIpv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** Writes an IPv4 u32 into the 16-byte frame form. */
export function writeIpv4(out: Uint8Array, n: number): void {
  // Stores, not fill(): fill is a call into the runtime, and this runs for every relayed datagram.
  for (let i = 0; i < 12; i++) out[i] = 0;
  out[12] = (n >>> 24) & 255;
  out[13] = (n >>> 16) & 255;
  out[14] = (n >>> 8) & 255;
  out[15] = n & 255;
}

export function readIpv4(ip: Uint8Array): number {
  return ((ip[12]! << 24) | (ip[13]! << 16) | (ip[14]! << 8) | ip[15]!) >>> 0;
}

/** Parses an IPv6 text address (with "::" and optional embedded IPv4) into 16 bytes; false if invalid. */
export function parseIpv6(text: string, out: Uint8Array): boolean {
  const zone = text.indexOf("%");
  // A zone id ("fe80::1%eth0") is accepted and dropped, with net.isIPv6's character set.
  if (zone >= 0 && !/^[0-9A-Za-z.:-]+$/.test(text.slice(zone + 1))) return false;
  const s = zone >= 0 ? text.slice(0, zone) : text;
  const halves = s.split("::");
  if (halves.length > 2) return false;
  // An embedded IPv4 ("::ffff:1.2.3.4") may only end the address, never precede "::".
  const groups = (part: string, last: boolean): number[] | null => {
    if (part === "") return [];
    const res: number[] = [];
    const items = part.split(":");
    for (let i = 0; i < items.length; i++) {
      const g = items[i]!;
      if (last && i === items.length - 1 && g.includes(".")) {
        const v4 = parseIpv4(g);
        if (v4 < 0) return null;
        res.push(v4 >>> 16, v4 & 0xffff);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
        res.push(Number.parseInt(g, 16));
      }
    }
    return res;
  };
  const head = groups(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? groups(halves[1]!, true) : [];
  if (!head || !tail) return false;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return false;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  for (let i = 0; i < 8; i++) {
    out[i * 2] = all[i]! >> 8;
    out[i * 2 + 1] = all[i]! & 255;
  }
  return true;
}

/**
 * RFC 5952 text form, exactly as Node (libuv's inet_ntop) prints it in `rinfo.address`: the
 * longest run of two or more zero groups (the first on a tie) becomes "::", and an address that
 * starts with 6 zero groups or with 0:0:0:0:0:ffff ends in dotted IPv4 ("::ffff:192.0.2.1").
 */
export function formatIpv6(ip: Uint8Array): string {
  const words: number[] = [];
  for (let i = 0; i < 8; i++) words.push((ip[i * 2]! << 8) | ip[i * 2 + 1]!);
  let bestBase = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      bestBase = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestLen < 2) bestBase = -1;
  let s = "";
  for (let i = 0; i < 8; i++) {
    if (bestBase >= 0 && i >= bestBase && i < bestBase + bestLen) {
      if (i === bestBase) s += ":";
      continue;
    }
    if (i !== 0) s += ":";
    if (i === 6 && bestBase === 0 && (bestLen === 6 || (bestLen === 5 && words[5] === 0xffff))) {
      return `${s}${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}`;
    }
    s += words[i]!.toString(16);
  }
  if (bestBase >= 0 && bestBase + bestLen === 8) s += ":";
  return s;
}

/** Text address of a decoded frame header's client. */
export function formatClientIp(ip: Uint8Array, ipv6: boolean): string {
  return ipv6 ? formatIpv6(ip) : formatIpv4(readIpv4(ip));
}
