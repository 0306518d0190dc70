// The link emulator's configuration (JSON): fronts, each a UDP listener that forwards to one target
// through per-source-network links. Every problem names its path.
import { parseCidr, parseHostPort } from "../../../shared/topology/address.ts";
import type { LinkParams } from "./core/link.ts";
import { parseLinkSpec } from "./core/params.ts";
import type { TunnelConfig } from "./tunnel.ts";

export interface RouteConfig {
  /** Label for stats (e.g. "sydney->pop-sin"). */
  name: string;
  /** Source network this route serves (IPv4 CIDR). */
  from: { base: number; bits: number };
  /** Local address the per-peer upstream socket binds (the peer's address as the target sees it). */
  bindIp: string;
  /** Peer -> target and target -> peer. */
  up: LinkParams;
  down: LinkParams;
}

export interface FrontConfig {
  listen: { host: string; port: number };
  target: { host: string; port: number };
  routes: RouteConfig[];
}

export interface LinkemConfig {
  seed: number;
  /** Peers (source ip:port) held at once, over all fronts. */
  maxPeers: number;
  /** A peer silent this long is forgotten and its upstream socket closed. */
  idleMs: number;
  fronts: FrontConfig[];
  /** Address-preserving paths to another namespace's programs (tunnel.ts); none by default. */
  tunnels: TunnelConfig[];
}

export class LinkemConfigError extends Error {
  override readonly name = "LinkemConfigError";
}

const ipv4 = (s: string): number | null => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const p = m.slice(1).map(Number);
  if (p.some((x) => x > 255)) return null;
  return ((p[0]! << 24) | (p[1]! << 16) | (p[2]! << 8) | p[3]!) >>> 0;
};

export const ipv4ToInt = ipv4;

export function inCidr(ip: number, c: { base: number; bits: number }): boolean {
  if (c.bits === 0) return true;
  const mask = (0xffffffff << (32 - c.bits)) >>> 0;
  return (ip & mask) >>> 0 === (c.base & mask) >>> 0;
}

export function parseLinkemConfig(raw: unknown): LinkemConfig {
  const errors: string[] = [];
  const o = (raw ?? {}) as Record<string, unknown>;
  const int = (k: string, def: number, min: number, max: number): number => {
    const v = o[k] ?? def;
    if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) {
      errors.push(`${k}: must be an integer ${min}-${max}, got ${JSON.stringify(v)}`);
      return def;
    }
    return v as number;
  };
  const seed = int("seed", 1, 0, 2 ** 32 - 1);
  const maxPeers = int("maxPeers", 1024, 1, 65_536);
  const idleMs = int("idleMs", 60_000, 100, 3_600_000);
  const hp = (v: unknown, path: string): { host: string; port: number } => {
    const r = typeof v === "string" ? parseHostPort(v) : "must be a string ip:port";
    if (typeof r === "string" || r.ipv6) {
      errors.push(`${path}: ${typeof r === "string" ? r : "IPv4 only"}`);
      return { host: "", port: 0 };
    }
    return { host: r.host, port: r.port };
  };
  const fronts: FrontConfig[] = [];
  const rawFronts = Array.isArray(o.fronts) ? o.fronts : [];
  if (rawFronts.length === 0) errors.push("fronts: must be a non-empty array");
  rawFronts.forEach((f: Record<string, unknown>, i: number) => {
    const p = `fronts[${i}]`;
    const routes: RouteConfig[] = [];
    const rawRoutes = Array.isArray(f?.routes) ? f.routes : [];
    if (rawRoutes.length === 0) errors.push(`${p}.routes: must be a non-empty array`);
    rawRoutes.forEach((r: Record<string, unknown>, j: number) => {
      const rp = `${p}.routes[${j}]`;
      const cidr = typeof r?.from === "string" ? parseCidr(r.from) : "must be a CIDR string";
      const [baseText, bitsText] = typeof r?.from === "string" ? r.from.split("/") : ["", ""];
      const base = ipv4(baseText ?? "");
      if (typeof cidr === "string" || base === null) errors.push(`${rp}.from: ${cidr || "IPv4 only"}`);
      const bindIp = typeof r?.bindIp === "string" && ipv4(r.bindIp) !== null ? r.bindIp : "";
      if (!bindIp) errors.push(`${rp}.bindIp: must be an IPv4 address, got ${JSON.stringify(r?.bindIp)}`);
      const up = parseLinkSpec(r?.up, `${rp}.up`);
      const down = parseLinkSpec(r?.down, `${rp}.down`);
      if (!up.ok) errors.push(up.reason);
      if (!down.ok) errors.push(down.reason);
      if (up.ok && down.ok && base !== null)
        routes.push({
          name: typeof r.name === "string" ? r.name : `route${j}`,
          from: { base, bits: Number(bitsText) },
          bindIp,
          up: up.params,
          down: down.params,
        });
    });
    fronts.push({ listen: hp(f?.listen, `${p}.listen`), target: hp(f?.target, `${p}.target`), routes });
  });
  const tunnels = parseTunnels(o.tunnels, errors);
  if (errors.length > 0)
    throw new LinkemConfigError(`invalid link emulator config:\n  ${errors.join("\n  ")}`);
  return { seed, maxPeers, idleMs, fronts, tunnels };
}

const ports = (v: unknown): v is number[] =>
  Array.isArray(v) &&
  v.length > 0 &&
  v.length <= 64 &&
  v.every((p) => Number.isInteger(p) && (p as number) > 0 && (p as number) < 65536);

function parseTunnels(raw: unknown, errors: string[]): TunnelConfig[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > 16) {
    errors.push("tunnels: must be an array of at most 16");
    return [];
  }
  const out: TunnelConfig[] = [];
  raw.forEach((t: Record<string, unknown>, i: number) => {
    const p = `tunnels[${i}]`;
    const ip = (k: string): string => {
      const v = t?.[k];
      if (typeof v === "string" && ipv4(v) !== null) return v;
      errors.push(`${p}.${k}: must be an IPv4 address, got ${JSON.stringify(v)}`);
      return "";
    };
    const [local, bindIp, remoteIp, aliasIp] = [ip("local"), ip("bindIp"), ip("remoteIp"), ip("aliasIp")];
    if (!ports(t?.ports)) errors.push(`${p}.ports: must be 1-64 ports`);
    if (!ports(t?.remotePorts)) errors.push(`${p}.remotePorts: must be 1-64 ports`);
    const link = parseLinkSpec(t?.out, `${p}.out`);
    if (!link.ok) errors.push(link.reason);
    else if (ports(t.ports) && ports(t.remotePorts))
      out.push({
        name: typeof t.name === "string" ? t.name : `tunnel${i}`,
        local,
        bindIp,
        remoteIp,
        aliasIp,
        ports: t.ports,
        remotePorts: t.remotePorts,
        out: link.params,
      });
  });
  return out;
}
