// Client addresses as the relay sees them (dgram gives strings) to and from the 16-byte form the
// backbone frame carries, plus a numeric flow key for IPv4 that costs no allocation.

/** Parses dotted IPv4 into a u32; -1 if it is not IPv4. No allocation. */
export function parseIpv4(text: string): number {
  let acc = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      acc = acc * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
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
  out.fill(0, 0, 12);
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
  const s = zone >= 0 ? text.slice(0, zone) : text;
  const halves = s.split("::");
  if (halves.length > 2) return false;
  const groups = (part: string): number[] | null => {
    if (part === "") return [];
    const res: number[] = [];
    const items = part.split(":");
    for (let i = 0; i < items.length; i++) {
      const g = items[i]!;
      if (i === items.length - 1 && g.includes(".")) {
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
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
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

export function formatIpv6(ip: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < 8; i++) parts.push(((ip[i * 2]! << 8) | ip[i * 2 + 1]!).toString(16));
  return parts.join(":").replace(/(^|:)0(:0)+(:|$)/, "::");
}

/** Text address of a decoded frame header's client. */
export function formatClientIp(ip: Uint8Array, ipv6: boolean): string {
  return ipv6 ? formatIpv6(ip) : formatIpv4(readIpv4(ip));
}
