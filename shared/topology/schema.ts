// The network topology every component reads: clusters and POPs, rendered by Terraform
// (terraform/outputs.tf) into JSON. docs/wire-formats.md §5 documents each field.
import { parseCidr, parseHostPort } from "./address.ts";

export type ClusterId = number & { readonly __brand: "ClusterId" };
export type PopId = number & { readonly __brand: "PopId" };

export const CONTINENTS = ["AF", "AN", "AS", "EU", "NA", "OC", "SA"] as const;
export type Continent = (typeof CONTINENTS)[number];

export interface ClusterSpec {
  id: ClusterId;
  name: string;
  region: string;
  continent: Continent;
  /** ISO 3166 alpha-2 codes this cluster prefers when the client has no coordinates. */
  countries: string[];
  latitude: number;
  longitude: number;
  /** Internal signalling API of the cluster (transceiver entry), called by the edge. */
  signallingUrl: string;
  /** The cluster relay's backbone listener, "ip:port". */
  backbone: string;
  /** Source networks the cluster's relay and transceivers send backbone frames from. */
  backboneCidrs: string[];
  /** The cluster's own VIP, advertised as a lower-priority second candidate (optional). */
  vip?: string;
  /** Sessions the cluster can hold (steering weighs load against it). */
  capacity: number;
}

export interface PopSpec {
  id: PopId;
  name: string;
  region: string;
  latitude: number;
  longitude: number;
  /** The address clients send to (the anycast VIP as this POP binds it), "ip:port". */
  vip: string;
  /** Where cluster relays send frames back to this POP, "ip:port". */
  backbone: string;
  backboneCidrs: string[];
  /** A POP co-located with a cluster forwards to its transceivers directly. */
  clusterId?: ClusterId;
  /** TCP port of the POP's ICE-TCP listener on the VIP's address (RFC 6544); absent: no listener. */
  vipTcpPort?: number;
}

export interface Topology {
  version: 1;
  /** The Global Relay VIP advertised in every answer, "ip:port". */
  globalVip: string;
  /** TCP port of the passive ICE-TCP candidate on the VIP in every answer (443 in production). */
  globalVipTcpPort?: number;
  defaultClusterId: ClusterId;
  clusters: ClusterSpec[];
  pops: PopSpec[];
}

export type TopologyResult = { ok: true; topology: Topology } | { ok: false; errors: string[] };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

class Checker {
  readonly errors: string[] = [];
  fail(path: string, msg: string): void {
    this.errors.push(`${path}: ${msg}`);
  }
  id(o: Obj, path: string, key: string): number {
    const v = o[key];
    if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > 65535) {
      this.fail(`${path}.${key}`, `must be an integer 1-65535, got ${JSON.stringify(v)}`);
      return 0;
    }
    return v as number;
  }
  str(o: Obj, path: string, key: string, re?: RegExp, hint?: string): string {
    const v = o[key];
    if (typeof v !== "string" || v.length === 0) {
      this.fail(`${path}.${key}`, `must be a non-empty string, got ${JSON.stringify(v)}`);
      return "";
    }
    if (re && !re.test(v))
      this.fail(`${path}.${key}`, `${hint ?? "has an invalid form"}, got ${JSON.stringify(v)}`);
    return v;
  }
  num(o: Obj, path: string, key: string, min: number, max: number): number {
    const v = o[key];
    if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) {
      this.fail(`${path}.${key}`, `must be a number between ${min} and ${max}, got ${JSON.stringify(v)}`);
      return 0;
    }
    return v;
  }
  hostPort(o: Obj, path: string, key: string): string {
    const v = this.str(o, path, key);
    if (v === "") return v;
    const r = parseHostPort(v);
    if (typeof r === "string") this.fail(`${path}.${key}`, r);
    return v;
  }
  cidrs(o: Obj, path: string, key: string, fallbackFrom: string): string[] {
    const v = o[key];
    if (v === undefined) {
      const hp = parseHostPort(fallbackFrom);
      return typeof hp === "string" ? [] : [`${hp.host}/${hp.ipv6 ? 128 : 32}`];
    }
    if (!Array.isArray(v) || v.length === 0) {
      this.fail(`${path}.${key}`, "must be a non-empty array of CIDRs");
      return [];
    }
    v.forEach((c, i) => {
      const r = typeof c === "string" ? parseCidr(c) : "must be a string";
      if (typeof r === "string") this.fail(`${path}.${key}[${i}]`, r);
    });
    return v as string[];
  }
  unknownKeys(o: Obj, path: string, allowed: readonly string[]): void {
    for (const k of Object.keys(o)) {
      if (allowed.includes(k)) continue;
      // A key that is not a plain identifier is quoted, so the path stays unambiguous.
      this.fail(
        /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`,
        "is not a known field",
      );
    }
  }
}

const CLUSTER_KEYS = [
  "id",
  "name",
  "region",
  "continent",
  "countries",
  "latitude",
  "longitude",
  "signallingUrl",
  "backbone",
  "backboneCidrs",
  "vip",
  "capacity",
] as const;
const POP_KEYS = [
  "id",
  "name",
  "region",
  "latitude",
  "longitude",
  "vip",
  "backbone",
  "backboneCidrs",
  "clusterId",
  "vipTcpPort",
] as const;

function checkCluster(c: Checker, raw: unknown, path: string): ClusterSpec | null {
  if (!isObj(raw)) {
    c.fail(path, "must be an object");
    return null;
  }
  c.unknownKeys(raw, path, CLUSTER_KEYS);
  const continent = c.str(raw, path, "continent");
  if (continent && !(CONTINENTS as readonly string[]).includes(continent)) {
    c.fail(`${path}.continent`, `must be one of ${CONTINENTS.join(", ")}, got ${JSON.stringify(continent)}`);
  }
  const countries = raw.countries ?? [];
  if (!Array.isArray(countries) || countries.some((x) => typeof x !== "string" || !/^[A-Z]{2}$/.test(x))) {
    c.fail(`${path}.countries`, 'must be an array of ISO 3166 alpha-2 codes such as "DE"');
  }
  const signallingUrl = c.str(
    raw,
    path,
    "signallingUrl",
    /^https?:\/\/[^\s/]+(\/\S*)?$/,
    "must be an http(s) URL",
  );
  const backbone = c.hostPort(raw, path, "backbone");
  const spec: ClusterSpec = {
    id: c.id(raw, path, "id") as ClusterId,
    name: c.str(raw, path, "name", NAME, "must be lower-case letters, digits and '-' (1-63)"),
    region: c.str(raw, path, "region", NAME, "must be lower-case letters, digits and '-' (1-63)"),
    continent: continent as Continent,
    countries: Array.isArray(countries) ? (countries as string[]) : [],
    latitude: c.num(raw, path, "latitude", -90, 90),
    longitude: c.num(raw, path, "longitude", -180, 180),
    signallingUrl,
    backbone,
    backboneCidrs: c.cidrs(raw, path, "backboneCidrs", backbone),
    capacity: c.num(raw, path, "capacity", 1, 10_000_000),
  };
  if (raw.vip !== undefined) spec.vip = c.hostPort(raw, path, "vip");
  return spec;
}

function checkPop(c: Checker, raw: unknown, path: string): PopSpec | null {
  if (!isObj(raw)) {
    c.fail(path, "must be an object");
    return null;
  }
  c.unknownKeys(raw, path, POP_KEYS);
  const backbone = c.hostPort(raw, path, "backbone");
  const spec: PopSpec = {
    id: c.id(raw, path, "id") as PopId,
    name: c.str(raw, path, "name", NAME, "must be lower-case letters, digits and '-' (1-63)"),
    region: c.str(raw, path, "region", NAME, "must be lower-case letters, digits and '-' (1-63)"),
    latitude: c.num(raw, path, "latitude", -90, 90),
    longitude: c.num(raw, path, "longitude", -180, 180),
    vip: c.hostPort(raw, path, "vip"),
    backbone,
    backboneCidrs: c.cidrs(raw, path, "backboneCidrs", backbone),
  };
  if (raw.clusterId !== undefined) spec.clusterId = c.id(raw, path, "clusterId") as ClusterId;
  if (raw.vipTcpPort !== undefined) spec.vipTcpPort = c.id(raw, path, "vipTcpPort");
  return spec;
}

function unique<T>(c: Checker, items: T[], path: string, key: (t: T) => unknown, what: string): void {
  const seen = new Map<unknown, number>();
  items.forEach((item, i) => {
    const k = key(item);
    const first = seen.get(k);
    if (first !== undefined)
      c.fail(`${path}[${i}].${what}`, `duplicates ${path}[${first}] (${JSON.stringify(k)})`);
    else seen.set(k, i);
  });
}

export function validateTopology(raw: unknown): TopologyResult {
  const c = new Checker();
  if (!isObj(raw)) return { ok: false, errors: ["topology: must be a JSON object"] };
  c.unknownKeys(raw, "topology", [
    "version",
    "globalVip",
    "globalVipTcpPort",
    "defaultClusterId",
    "clusters",
    "pops",
    "$schema",
  ]);
  if (raw.version !== 1) c.fail("topology.version", `must be 1, got ${JSON.stringify(raw.version)}`);
  const globalVip = c.hostPort(raw, "topology", "globalVip");
  const defaultClusterId = c.id(raw, "topology", "defaultClusterId");
  const clusters: ClusterSpec[] = [];
  const pops: PopSpec[] = [];
  if (!Array.isArray(raw.clusters) || raw.clusters.length === 0) {
    c.fail("topology.clusters", "must be a non-empty array");
  } else {
    raw.clusters.forEach((x, i) => {
      const s = checkCluster(c, x, `clusters[${i}]`);
      if (s) clusters.push(s);
    });
  }
  if (!Array.isArray(raw.pops) || raw.pops.length === 0) {
    c.fail("topology.pops", "must be a non-empty array");
  } else {
    raw.pops.forEach((x, i) => {
      const s = checkPop(c, x, `pops[${i}]`);
      if (s) pops.push(s);
    });
  }
  unique(c, clusters, "clusters", (x) => x.id, "id");
  unique(c, clusters, "clusters", (x) => x.name, "name");
  unique(c, pops, "pops", (x) => x.id, "id");
  unique(c, pops, "pops", (x) => x.name, "name");
  const clusterIds = new Set<number>(clusters.map((x) => x.id));
  if (defaultClusterId && clusters.length > 0 && !clusterIds.has(defaultClusterId)) {
    c.fail("topology.defaultClusterId", `names no cluster (${defaultClusterId})`);
  }
  pops.forEach((p, i) => {
    if (p.clusterId !== undefined && !clusterIds.has(p.clusterId)) {
      c.fail(`pops[${i}].clusterId`, `names no cluster (${p.clusterId})`);
    }
  });
  const tcpPort = raw.globalVipTcpPort === undefined ? undefined : c.id(raw, "topology", "globalVipTcpPort");
  if (c.errors.length > 0) return { ok: false, errors: c.errors };
  const topology: Topology = {
    version: 1,
    globalVip,
    defaultClusterId: defaultClusterId as ClusterId,
    clusters,
    pops,
  };
  if (tcpPort !== undefined) topology.globalVipTcpPort = tcpPort;
  return { ok: true, topology };
}

export class TopologyError extends Error {
  override readonly name = "TopologyError";
  readonly source: string;
  readonly errors: string[];
  constructor(source: string, errors: string[]) {
    super(`invalid topology (${source}):\n  ${errors.join("\n  ")}`);
    this.source = source;
    this.errors = errors;
  }
}

/** Parses JSON text and validates it; throws TopologyError naming every problem. */
export function parseTopology(text: string, source: string): Topology {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new TopologyError(source, [`not valid JSON: ${(e as Error).message}`]);
  }
  const r = validateTopology(raw);
  if (!r.ok) throw new TopologyError(source, r.errors);
  return r.topology;
}
