// What the edge reports, as past-tense events. Two sinks: the isolate's Prometheus registry
// (scraped locally at /internal/metrics) and, in production, Workers Analytics Engine (one data
// point per steered call; schema in docs/edge.md).
import type { AnalyticsEngineDataset } from "../platform.ts";
import { PromRegistry } from "./registry.ts";

export interface CallSteered {
  route: "calls.create" | "participants.join" | "ws";
  status: number;
  region: string;
  cluster: string;
  colo: string;
  country: string;
  basis: string;
  totalMs: number;
  clusterMs: number;
  attempts: number;
}

export class EdgeMetrics {
  readonly registry = new PromRegistry();
  readonly signalling = this.registry.histogram(
    "gr_edge_signalling_seconds",
    "Signalling latency seen at the edge: total (request in to answer out) and cluster_hop (the answering attempt).",
    ["region", "cluster", "stage"],
  );
  readonly requests = this.registry.counter("gr_edge_requests_total", "Edge requests by route and status.", [
    "route",
    "status",
  ]);
  readonly failovers = this.registry.counter(
    "gr_edge_failovers_total",
    "Attempts that failed over to the next cluster, by the cluster that failed.",
    ["cluster"],
  );
}

export class Telemetry {
  readonly metrics: EdgeMetrics;
  readonly #ae: AnalyticsEngineDataset | undefined;
  constructor(metrics: EdgeMetrics, ae: AnalyticsEngineDataset | undefined) {
    this.metrics = metrics;
    this.#ae = ae;
  }

  requestServed(route: string, status: number): void {
    this.metrics.requests.inc({ route, status: String(status) });
  }

  failedOver(cluster: string): void {
    this.metrics.failovers.inc({ cluster });
  }

  callSteered(e: CallSteered): void {
    this.metrics.signalling.observe(
      { region: e.region, cluster: e.cluster, stage: "total" },
      e.totalMs / 1000,
    );
    this.metrics.signalling.observe(
      { region: e.region, cluster: e.cluster, stage: "cluster_hop" },
      e.clusterMs / 1000,
    );
    try {
      this.#ae?.writeDataPoint({
        indexes: [e.cluster],
        blobs: [e.route, e.region, e.cluster, e.colo, e.country, String(e.status), e.basis],
        doubles: [e.totalMs, e.clusterMs, e.attempts],
      });
    } catch {
      // Analytics must never fail a call.
    }
  }
}
