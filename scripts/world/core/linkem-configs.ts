// The link emulator configs of the planet (pure): each POP's front on the VIP carries every
// site's access link; each cluster's fronts carry the backbone from every POP and the direct
// public path from every site. Each route binds the peer's "seen as" address, so the relay behind
// a front sees one stable address per client or POP.
import { backboneLink, POP_INNER_VIP, publicLink, VIP, VIP_PORT, type WorldPlan } from "./plan.ts";

export interface LinkemJson {
  seed: number;
  maxPeers: number;
  idleMs: number;
  fronts: { listen: string; target: string; routes: unknown[] }[];
  tunnels?: unknown[];
}

export function popLinkem(w: WorldPlan, pop: number, seed: number): LinkemJson {
  const p = w.pops[pop]!;
  return {
    seed,
    maxPeers: 4096,
    idleMs: 120_000,
    fronts: [
      {
        listen: `${VIP}:${VIP_PORT}`,
        target: `${POP_INNER_VIP}:${VIP_PORT}`,
        routes: w.sites.map((s) => ({
          name: `${s.site.name}->${p.spec.name}`,
          from: `${s.ip}/32`,
          bindIp: s.seenAs,
          ...publicLink(s.popRttMs[pop]!, w.links),
        })),
      },
    ],
  };
}

/**
 * With conferences, one tunnel to every other cluster: its transceivers' conference sockets at
 * its alias here, this cluster's outgoing half of the backbone link between the two.
 */
function conferenceTunnels(w: WorldPlan, cluster: number): unknown[] {
  const c = w.clusters[cluster]!;
  if (!c.conference) return [];
  const lossPct = c.conference.lossPct;
  return w.clusters
    .filter((o) => o.index !== c.index && o.conference)
    .map((o) => {
      const link = backboneLink(c.conference!.rttMs[o.index]!, w.links).up;
      return {
        name: `${c.spec.name}=>${o.spec.name} conference`,
        local: "127.0.0.1",
        ports: c.transceivers.map((t) => t.conferencePort),
        bindIp: c.ip,
        remoteIp: o.ip,
        aliasIp: o.conference!.alias,
        remotePorts: o.transceivers.map((t) => t.conferencePort),
        out: lossPct === null ? link : { ...link, lossPct, burst: 1 },
      };
    });
}

export function clusterLinkem(w: WorldPlan, cluster: number, seed: number): LinkemJson {
  const c = w.clusters[cluster]!;
  const tunnels = conferenceTunnels(w, cluster);
  return {
    ...(tunnels.length ? { tunnels } : {}),
    seed,
    maxPeers: 4096,
    idleMs: 120_000,
    fronts: [
      {
        listen: c.spec.backbone,
        target: "127.0.0.1:5000",
        routes: w.pops.map((p) => ({
          name: `${p.spec.name}=>${c.spec.name}`,
          from: `${p.ip}/32`,
          bindIp: p.seenAs,
          ...backboneLink(c.backboneRttMs[p.index]!, w.links),
        })),
      },
      {
        listen: c.spec.vip!,
        target: `127.0.0.1:${VIP_PORT}`,
        routes: w.sites.map((s) => ({
          name: `${s.site.name}->${c.spec.name}`,
          from: `${s.ip}/32`,
          bindIp: s.seenAs,
          ...publicLink(s.clusterRttMs[cluster]!, w.links),
        })),
      },
    ],
  };
}
