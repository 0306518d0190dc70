// Who a session is set up for, as the edge tells the cluster in the signed `x-gr-caller` header:
// the credential's short id (12 hex digits of the API key's hash; a client secret counts as the
// key that minted it) and the client's network (IPv4 /24, IPv6 /64). The cluster limits sessions
// in setup by both (docs/wire-formats.md §6, docs/security.md attack 4).

export interface Caller {
  key: string;
  network: string;
}

const KEY = /^[0-9a-f]{12}$/;
const V4_NET = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.0\/24$/;
const V6_NET = /^([0-9a-f]{1,4}:){4}:\/64$/;

/** "key=<12 hex>; net=<prefix>": the header value. */
export function formatCaller(c: Caller): string {
  return `key=${c.key}; net=${c.network}`;
}

export function parseCaller(text: string): Caller | null {
  const m = /^key=([^;]{1,64}); net=(\S{1,64})$/.exec(text);
  if (!m || !KEY.test(m[1]!)) return null;
  const net = m[2]!;
  const v4 = V4_NET.exec(net);
  if (v4) {
    if ([v4[1], v4[2], v4[3]].some((o) => Number(o) > 255)) return null;
    return { key: m[1]!, network: net };
  }
  if (V6_NET.test(net) || net === "unknown") return { key: m[1]!, network: net };
  return null;
}

function expandV6(ip: string): number[] | null {
  const halves = ip.split("::");
  if (halves.length > 2) return null;
  const part = (s: string): number[] | null => {
    if (s === "") return [];
    const out: number[] = [];
    for (const g of s.split(":")) {
      if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const head = part(halves[0]!);
  const tail = halves.length === 2 ? part(halves[1]!) : [];
  if (!head || !tail) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  if (head.length + tail.length > 7) return null;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/** The /24 (IPv4) or /64 (IPv6) holding `ip`; "unknown" when it is neither. */
export function clientNetwork(ip: string): string {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4) {
    const o = [v4[1], v4[2], v4[3], v4[4]].map(Number);
    if (o.some((x) => x > 255)) return "unknown";
    return `${o[0]}.${o[1]}.${o[2]}.0/24`;
  }
  const mapped = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i.exec(ip);
  if (mapped) return clientNetwork(mapped[1]!);
  if (!ip.includes(":") || ip.length > 45) return "unknown";
  const g = expandV6(ip.replace(/%.*$/, ""));
  if (!g) return "unknown";
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(":")}::/64`;
}
