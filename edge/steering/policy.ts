// The steering policy: which clusters to try, in which order. Pure: topology, client location and
// a health lookup in, an ordered plan out; tested with fixed coordinates (test/edge/policy.test.ts).
//
// - With coordinates: every cluster is ranked by great-circle distance plus a load penalty.
// - Without: clusters listing the client's country first, then the client's continent, then the
//   default cluster, then the rest; within a tier by distance from the continent's centre (or the
//   default cluster) plus the load penalty.
// - Clusters that are down, draining or full are excluded; "unknown" counts as up (failover
//   covers a wrong guess).
// - Load penalty: none below `loadKnee` utilisation, rising linearly to `loadPenaltyKm` at 100 %.
//   2,500 km is ~25 ms of round trip over fibre: a nearly full cluster loses to a free one a
//   country away, never to one across an ocean.
import type { ClusterSpec, Topology } from "../../shared/topology/schema.ts";
import type { HealthStatus, HealthView } from "../health/book.ts";
import type { ClientLocation } from "./client.ts";
import { CONTINENT_CENTRES, greatCircleKm } from "./geo.ts";

export interface SteeringOptions {
  loadKnee: number;
  loadPenaltyKm: number;
}

export const DEFAULT_STEERING: SteeringOptions = { loadKnee: 0.7, loadPenaltyKm: 2500 };

export type SteeringBasis = "coordinates" | "country" | "continent" | "default";

export interface Candidate {
  cluster: ClusterSpec;
  /** 0 is preferred; only used without coordinates. */
  tier: number;
  distanceKm: number;
  costKm: number;
  utilization: number;
  health: HealthStatus;
}

export interface SteeringPlan {
  basis: SteeringBasis;
  candidates: Candidate[];
  excluded: { cluster: ClusterSpec; health: HealthView }[];
}

export function loadPenaltyKm(utilization: number, o: SteeringOptions): number {
  if (utilization <= o.loadKnee) return 0;
  return (o.loadPenaltyKm * (Math.min(utilization, 1) - o.loadKnee)) / (1 - o.loadKnee);
}

export function planSteering(
  topology: Topology,
  client: ClientLocation,
  health: (cluster: ClusterSpec) => HealthView,
  o: SteeringOptions = DEFAULT_STEERING,
): SteeringPlan {
  const hasCoords = client.latitude !== undefined && client.longitude !== undefined;
  const tierOf = (c: ClusterSpec): number => {
    if (hasCoords) return 0;
    if (client.country && c.countries.includes(client.country)) return 0;
    if (client.continent && c.continent === client.continent) return 1;
    if (c.id === topology.defaultClusterId) return 2;
    return 3;
  };
  const fallbackAnchor = (): readonly [number, number] => {
    const centre = client.continent ? CONTINENT_CENTRES[client.continent] : undefined;
    if (centre) return centre;
    const d = topology.clusters.find((c) => c.id === topology.defaultClusterId) ?? topology.clusters[0]!;
    return [d.latitude, d.longitude];
  };
  const [aLat, aLon] = hasCoords ? [client.latitude!, client.longitude!] : fallbackAnchor();

  const candidates: Candidate[] = [];
  const excluded: SteeringPlan["excluded"] = [];
  let bestTier = 3;
  for (const cluster of topology.clusters) {
    const tier = tierOf(cluster);
    bestTier = Math.min(bestTier, tier);
    const h = health(cluster);
    if (h.status === "down" || h.status === "draining" || h.status === "full") {
      excluded.push({ cluster, health: h });
      continue;
    }
    const utilization = h.capacity > 0 ? h.load / h.capacity : 0;
    const distanceKm = greatCircleKm(aLat, aLon, cluster.latitude, cluster.longitude);
    candidates.push({
      cluster,
      tier,
      distanceKm,
      costKm: distanceKm + loadPenaltyKm(utilization, o),
      utilization,
      health: h.status,
    });
  }
  candidates.sort((a, b) => a.tier - b.tier || a.costKm - b.costKm || a.cluster.id - b.cluster.id);
  const basis: SteeringBasis = hasCoords
    ? "coordinates"
    : (["country", "continent", "default", "default"] as const)[bestTier]!;
  return { basis, candidates, excluded };
}
