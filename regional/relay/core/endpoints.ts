// Return endpoints of a cluster relay (the POP workers' backbone sockets), interned to small
// integers with a reference count per flow. Bounded; IPv4 endpoints are found through a
// direct-mapped cache without allocation once seen.

export class EndpointTable {
  readonly capacity: number;
  readonly address: string[];
  readonly port: Uint16Array;
  readonly ip: Int32Array;
  readonly refs: Int32Array;
  readonly #used: Uint8Array;
  readonly #keys = new Map<string, number>();
  readonly #cache = new Int32Array(1024).fill(-1);
  size = 0;

  constructor(capacity = 4096) {
    this.capacity = capacity;
    this.address = new Array<string>(capacity).fill("");
    this.port = new Uint16Array(capacity);
    this.ip = new Int32Array(capacity).fill(-1);
    this.refs = new Int32Array(capacity);
    this.#used = new Uint8Array(capacity);
  }

  static #h(ip: number, port: number): number {
    const h = Math.imul(ip ^ (port << 12) ^ port, 0x9e3779b1);
    return (h ^ (h >>> 16)) & 1023;
  }

  /** Index of the endpoint, or -1. `ip4` is the IPv4 u32, or -1 for IPv6. */
  find(address: string, port: number, ip4: number): number {
    if (ip4 >= 0) {
      const c = this.#cache[EndpointTable.#h(ip4, port)]!;
      if (c >= 0 && this.ip[c] === (ip4 | 0) && this.port[c] === port) return c;
    }
    const i = this.#keys.get(`${address}#${port}`);
    if (i === undefined) return -1;
    if (ip4 >= 0) this.#cache[EndpointTable.#h(ip4, port)] = i;
    return i;
  }

  /** Index of the endpoint, interning it if new; -1 when the table is full. */
  intern(address: string, port: number, ip4: number): number {
    const found = this.find(address, port, ip4);
    if (found >= 0) return found;
    if (this.size >= this.capacity) return -1;
    const i = this.#used.indexOf(0);
    this.#used[i] = 1;
    this.address[i] = address;
    this.port[i] = port;
    this.ip[i] = ip4 >= 0 ? ip4 | 0 : -1;
    this.refs[i] = 0;
    this.#keys.set(`${address}#${port}`, i);
    if (ip4 >= 0) this.#cache[EndpointTable.#h(ip4, port)] = i;
    this.size++;
    return i;
  }

  retain(i: number): void {
    this.refs[i]!++;
  }

  /** Drops one reference; frees the endpoint when none is left (also one never retained). */
  release(i: number): void {
    if (i < 0 || this.#used[i] === 0) return;
    if (--this.refs[i]! > 0) return;
    this.#keys.delete(`${this.address[i]}#${this.port[i]}`);
    if (this.ip[i]! !== -1) {
      const h = EndpointTable.#h(this.ip[i]! >>> 0, this.port[i]!);
      if (this.#cache[h] === i) this.#cache[h] = -1;
    }
    this.#used[i] = 0;
    this.address[i] = "";
    this.ip[i] = -1;
    this.size--;
  }
}
