// Allow-lists of backbone source networks (from the topology), compiled for a per-datagram check.
import { type Cidr, cidrContains, parseCidr } from "../../../shared/topology/address.ts";

export class SourceList {
  readonly #net4: Uint32Array;
  readonly #mask4: Uint32Array;
  readonly #v6: Cidr[];

  constructor(cidrs: readonly string[]) {
    const v4: Cidr[] = [];
    this.#v6 = [];
    for (const text of cidrs) {
      const c = parseCidr(text);
      if (typeof c === "string") throw new RangeError(`source list: ${c}`);
      (c.ipv6 ? this.#v6 : v4).push(c);
    }
    this.#net4 = new Uint32Array(v4.length);
    this.#mask4 = new Uint32Array(v4.length);
    v4.forEach((c, i) => {
      const mask = c.prefix === 0 ? 0 : (0xffffffff << (32 - c.prefix)) >>> 0;
      const n =
        ((c.network[12]! << 24) | (c.network[13]! << 16) | (c.network[14]! << 8) | c.network[15]!) >>> 0;
      this.#mask4[i] = mask;
      this.#net4[i] = (n & mask) >>> 0;
    });
  }

  has4(ip: number): boolean {
    for (let i = 0; i < this.#net4.length; i++) {
      if ((ip & this.#mask4[i]!) >>> 0 === this.#net4[i]) return true;
    }
    return false;
  }

  has6(ip: Uint8Array): boolean {
    for (const c of this.#v6) if (cidrContains(c, true, ip)) return true;
    return false;
  }
}
