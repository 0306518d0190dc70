// The emulated planet, planned from a topology (as Terraform renders it) and a sites file, as plain
// data: namespaces, addresses, which POP each site's VIP route points at (lowest emulated RTT:
// what anycast approximates), every link's parameters, and the runtime topology every component
// reads. The topology's own addresses are replaced by the emulation's; ids, names, coordinates,
// countries and capacities are kept, so steering decides on the same data as in production.
import type { ClusterSpec, PopSpec, Topology } from "../../../shared/topology/schema.ts";
import { validateTopology } from "../../../shared/topology/schema.ts";
import type { LinkSpec } from "../linkem/core/params.ts";
import { publicRttMs } from "./rtt.ts";
import type { LinkAssumptions, Site, SitesFile } from "./sites.ts";

export const MAX_POPS = 8;
export const MAX_CLUSTERS = 6;
export const MAX_TRANSCEIVERS = 4;

export const VIP = "10.255.255.1";
export const VIP_PORT = 3478;
/** Where each anycast POP's relay binds its VIP socket, behind the POP's link emulator front. */
export const POP_INNER_VIP = "10.250.0.1";
export const EDGE = { host: "10.0.0.1", port: 8787 };
export const REDIS = { host: "10.0.0.2", port: 6379 };
export const DASHBOARD = { host: "10.0.0.1", port: 9090 };
export const ADMIN_PORT = 9300;
/** Transceiver k of cluster c binds its conference socket on 127.0.0.1:CONFERENCE_PORT + 10c + k. */
export const CONFERENCE_PORT = 6201;

/** The inter-cluster conference link (`npm run world -- --conference`). */
export interface ConferenceOptions {
  /** Loss on each direction of the backbone between clusters, % (independent losses); null = the sites file's backbone loss. */
  lossPct: number | null;
}

export interface SitePlan {
  index: number;
  site: Site;
  ns: string;
  /** The site's public address (on its loopback; every route out uses it as source). */
  ip: string;
  /** The same client as POPs and clusters see it (behind their emulator fronts). */
  seenAs: string;
  /** POP indexes by emulated RTT, nearest first. */
  popOrder: number[];
  popRttMs: number[];
  clusterRttMs: number[];
}

export interface PopPlan {
  index: number;
  spec: PopSpec;
  ns: string;
  /** Backbone address (fabric side) and how clusters see it behind their fronts. */
  ip: string;
  seenAs: string;
}

export interface ClusterPlan {
  index: number;
  spec: ClusterSpec;
  ns: string;
  ip: string;
  /** The co-located POP serving the cluster's own VIP (the "direct" public path). */
  directPop: PopSpec;
  transceivers: { id: number; udpPort: number; httpPort: number; conferencePort: number }[];
  backboneRttMs: number[];
  /**
   * With conferences: the address every OTHER cluster's namespace holds for this cluster's
   * transceivers (their TRANSCEIVER_CONFERENCE_ADDR host, inside this cluster's backboneCidrs),
   * and the backbone RTT to each cluster (0 to itself).
   */
  conference: { alias: string; rttMs: number[]; lossPct: number | null } | null;
}

export interface WorldPlan {
  tag: string;
  netNs: string;
  sites: SitePlan[];
  pops: PopPlan[];
  clusters: ClusterPlan[];
  links: LinkAssumptions;
  topology: Topology;
  /** What the emulation does differently from the input topology. */
  notes: string[];
}

export type LinkPair = { up: LinkSpec; down: LinkSpec };

export function publicLink(rttMs: number, a: LinkAssumptions): LinkPair {
  const oneWay = rttMs / 2;
  const p = a.public;
  const spec: LinkSpec = {
    delayMs: oneWay,
    jitterMs: round(p.jitterMs + p.jitterPerMs * oneWay),
    lossPct: round(Math.min(50, p.lossPct + p.lossPerMs * oneWay)),
    burst: p.burst,
  };
  return { up: spec, down: { ...spec } };
}

export function backboneLink(rttMs: number, a: LinkAssumptions): LinkPair {
  const b = a.backbone;
  const spec: LinkSpec = { delayMs: rttMs / 2, jitterMs: b.jitterMs, lossPct: b.lossPct, burst: b.burst };
  return { up: spec, down: { ...spec } };
}

const round = (x: number): number => Math.round(x * 100) / 100;

const withoutCluster = (p: PopSpec): PopSpec => {
  const { clusterId: _, ...rest } = p;
  return rest;
};

export function planWorld(
  tag: string,
  input: Topology,
  sites: SitesFile,
  transceiversPerCluster = 2,
  conference: ConferenceOptions | null = null,
): WorldPlan {
  const problems: string[] = [];
  if (input.pops.length < 1 || input.pops.length > MAX_POPS)
    problems.push(`topology: the world holds 1-${MAX_POPS} POPs, got ${input.pops.length}`);
  if (input.clusters.length < 1 || input.clusters.length > MAX_CLUSTERS)
    problems.push(`topology: the world holds 1-${MAX_CLUSTERS} clusters, got ${input.clusters.length}`);
  if (transceiversPerCluster < 1 || transceiversPerCluster > MAX_TRANSCEIVERS)
    problems.push(`transceivers per cluster: 1-${MAX_TRANSCEIVERS}`);
  // A co-located POP (clusterId) runs here as a plain POP reaching its cluster over a metro
  // backbone link; the cluster's own VIP is served by the world's direct entry instead.
  const notes = input.pops
    .filter((p) => p.clusterId !== undefined)
    .map(
      (p) => `${p.name}: co-located with cluster ${p.clusterId}; emulated as a POP with a 1 ms backbone link`,
    );
  if (problems.length) throw new Error(`cannot plan the world:\n  ${problems.join("\n  ")}`);
  const links = sites.links;
  const metro = links.metroRttMs;
  const ns = (kind: string, i: number | "") => `${tag}${kind}${i}`;

  const pops: PopPlan[] = input.pops.map((spec, j) => ({
    index: j,
    ns: ns("p", j),
    ip: `10.3.${j}.2`,
    seenAs: `10.103.${j}.2`,
    spec: {
      ...withoutCluster(spec),
      vip: `${POP_INNER_VIP}:${VIP_PORT}`,
      backbone: `10.3.${j}.2:4478`,
      backboneCidrs: [`10.3.${j}.2/32`, `10.103.${j}.2/32`],
    },
  }));
  const maxPopId = Math.max(...input.pops.map((p) => p.id));
  const clusters: ClusterPlan[] = input.clusters.map((spec, c) => {
    const ip = `10.4.${c}.2`;
    const alias = `10.105.${c}.2`;
    return {
      index: c,
      ns: ns("c", c),
      ip,
      spec: {
        ...spec,
        signallingUrl: `http://${ip}:7100`,
        backbone: `${ip}:5000`,
        backboneCidrs: [`${ip}/32`, "127.0.0.1/32", ...(conference ? [`${alias}/32`] : [])],
        vip: `${ip}:${VIP_PORT}`,
      },
      directPop: {
        id: (maxPopId + 1 + c) as PopSpec["id"],
        name: `${spec.name}-direct`.slice(0, 63),
        region: spec.region,
        latitude: spec.latitude,
        longitude: spec.longitude,
        vip: `127.0.0.1:${VIP_PORT}`,
        // On the fabric address: a relay's backbone socket also reaches other clusters' relays.
        backbone: `${ip}:4479`,
        backboneCidrs: [`${ip}/32`],
        clusterId: spec.id,
      },
      transceivers: Array.from({ length: transceiversPerCluster }, (_, k) => ({
        id: k + 1,
        udpPort: 6101 + k,
        httpPort: 7111 + k,
        conferencePort: CONFERENCE_PORT + 10 * c + k,
      })),
      // Server to server: no last mile; 1 ms inside one city.
      backboneRttMs: input.pops.map((p) =>
        Math.max(1, round(publicRttMs(p, spec).ms * links.backbone.rttFactor)),
      ),
      // Between clusters as between a POP and a cluster: the city pair's RTT x rttFactor.
      conference: conference
        ? {
            alias,
            lossPct: conference.lossPct,
            rttMs: input.clusters.map((o) =>
              o.id === spec.id ? 0 : Math.max(1, round(publicRttMs(o, spec).ms * links.backbone.rttFactor)),
            ),
          }
        : null,
    };
  });
  const sitePlans: SitePlan[] = sites.sites.map((site, i) => {
    // A client's path is its last mile (metro) plus the public path between the cities.
    const popRttMs = input.pops.map((p) => metro + publicRttMs(site, p).ms);
    const popOrder = popRttMs.map((_, j) => j).sort((a, b) => popRttMs[a]! - popRttMs[b]! || a - b);
    return {
      index: i,
      site,
      ns: ns("s", i),
      ip: `10.10.${i}.2`,
      seenAs: `10.101.${i}.2`,
      popOrder,
      popRttMs,
      clusterRttMs: input.clusters.map((c) => metro + publicRttMs(site, c).ms),
    };
  });
  const raw: Topology = {
    version: 1,
    globalVip: `${VIP}:${VIP_PORT}`,
    defaultClusterId: input.defaultClusterId,
    clusters: clusters.map((c) => c.spec),
    pops: [...pops.map((p) => p.spec), ...clusters.map((c) => c.directPop)],
  };
  const v = validateTopology(JSON.parse(JSON.stringify(raw)));
  if (!v.ok) throw new Error(`the emulated topology is invalid:\n  ${v.errors.join("\n  ")}`);
  return { tag, netNs: ns("n", ""), sites: sitePlans, pops, clusters, links, topology: v.topology, notes };
}
