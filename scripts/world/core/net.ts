// The planet's network as `ip` batch lines per namespace (pure: the shell runs them). A fabric
// namespace is the public internet (a router holding the edge and Redis on its loopback); each
// site has one link to the fabric and one access link to every POP; each POP and cluster has one
// link to the fabric. Veths are created straight inside namespaces, never in the caller's.
import { EDGE, POP_INNER_VIP, REDIS, VIP, type WorldPlan } from "./plan.ts";

export interface NetBatches {
  namespaces: string[];
  /** Run in order; each entry is [namespace, batch lines]. */
  steps: [string, string[]][];
}

/** Access link subnet between site i and POP j. */
const access = (i: number, j: number): string => `10.2.${i * 16 + j}`;

export function netBatches(w: WorldPlan): NetBatches {
  const net = w.netNs;
  const namespaces = [
    net,
    ...w.sites.map((s) => s.ns),
    ...w.pops.map((p) => p.ns),
    ...w.clusters.map((c) => c.ns),
  ];
  const links: string[] = [];
  const cfg = new Map<string, string[]>(namespaces.map((n) => [n, ["link set lo up"]]));
  const add = (ns: string, ...lines: string[]): void => {
    cfg.get(ns)!.push(...lines);
  };
  add(net, `addr add ${EDGE.host}/32 dev lo`, `addr add ${REDIS.host}/32 dev lo`);
  for (const s of w.sites) {
    links.push(`link add s${s.index} type veth peer name net netns ${s.ns}`);
    add(net, `addr add 10.1.${s.index}.1/24 dev s${s.index}`, `link set s${s.index} up`);
    add(net, `route add ${s.ip}/32 via 10.1.${s.index}.2`);
    add(s.ns, `addr add ${s.ip}/32 dev lo`, `addr add 10.1.${s.index}.2/24 dev net`, "link set net up");
    add(s.ns, `route add default via 10.1.${s.index}.1 src ${s.ip}`);
  }
  const siteLinks: [string, string[]][] = [];
  for (const s of w.sites) {
    const lines: string[] = [];
    for (const p of w.pops) {
      const a = access(s.index, p.index);
      lines.push(`link add p${p.index} type veth peer name s${s.index} netns ${p.ns}`);
      add(s.ns, `addr add ${a}.2/24 dev p${p.index}`, `link set p${p.index} up`);
      add(p.ns, `addr add ${a}.1/24 dev s${s.index}`, `link set s${s.index} up`);
      add(p.ns, `route add ${s.ip}/32 via ${a}.2`);
    }
    siteLinks.push([s.ns, lines]);
    add(s.ns, vipRoute(w, s.index, s.popOrder[0]!).replace(/^route replace/, "route add"));
  }
  for (const p of w.pops) {
    links.push(`link add p${p.index} type veth peer name net netns ${p.ns}`);
    add(net, `addr add 10.3.${p.index}.1/24 dev p${p.index}`, `link set p${p.index} up`);
    add(p.ns, `addr add ${p.ip}/24 dev net`, "link set net up", `route add default via 10.3.${p.index}.1`);
    add(p.ns, `addr add ${VIP}/32 dev lo`, `addr add ${POP_INNER_VIP}/32 dev lo`);
    for (const s of w.sites) add(p.ns, `addr add ${s.seenAs}/32 dev lo`);
  }
  for (const c of w.clusters) {
    links.push(`link add c${c.index} type veth peer name net netns ${c.ns}`);
    add(net, `addr add 10.4.${c.index}.1/24 dev c${c.index}`, `link set c${c.index} up`);
    add(c.ns, `addr add ${c.ip}/24 dev net`, "link set net up", `route add default via 10.4.${c.index}.1`);
    for (const s of w.sites) add(c.ns, `addr add ${s.seenAs}/32 dev lo`);
    for (const p of w.pops) add(c.ns, `addr add ${p.seenAs}/32 dev lo`);
    // The other clusters' transceivers, as this one reaches them (the link emulator's tunnels).
    for (const o of w.clusters)
      if (o.conference && o.index !== c.index) add(c.ns, `addr add ${o.conference.alias}/32 dev lo`);
  }
  return {
    namespaces,
    steps: [[net, links], ...siteLinks, ...namespaces.map((n): [string, string[]] => [n, cfg.get(n)!])],
  };
}

/** The route that sends a site's VIP traffic to one POP (anycast as the site sees it). */
export function vipRoute(w: WorldPlan, site: number, pop: number): string {
  return `route replace ${VIP}/32 via ${access(site, pop)}.1 src ${w.sites[site]!.ip}`;
}
