// Transceiver metrics (names and labels from the system contract). Labels stay bounded: cluster,
// region (client continent as the edge saw it, or "unknown"), reason, stage, direction. Handles
// are bound once and cached, so counting on the hot path allocates nothing.

import {
  type CounterHandle,
  type GaugeHandle,
  type HistogramHandle,
  LATENCY_BUCKETS,
  type Metric,
  Registry,
} from "../common/metrics.ts";
import type { IoMode } from "../common/native/index.ts";
import { ioMetrics, TRANSCEIVER_IO_METRICS } from "../common/native/io-metrics.ts";

export const SETUP_STAGES = [
  "offer_to_answer",
  "answer_to_ice_connected",
  "answer_to_dtls_connected",
  "answer_to_first_audio",
] as const;
export type SetupStage = (typeof SETUP_STAGES)[number];

export { DROP_REASONS, type DropReason } from "./core/drops.ts";

import { DROP_REASONS, type DropReason } from "./core/drops.ts";

/** What happens to client paths (gr_transceiver_path_events_total{event}). */
export const PATH_EVENTS = ["checked", "validated", "expired", "released"] as const;
export type PathEventName = (typeof PATH_EVENTS)[number];

const RATIO_BUCKETS = [0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1] as const;
const JITTER_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1] as const;

export type Region = string;

export interface RegionHandles {
  created: CounterHandle;
  setup: Record<SetupStage, HistogramHandle>;
  iceRtt: HistogramHandle;
  rtcpRtt: HistogramHandle;
  jitter: HistogramHandle;
  loss: HistogramHandle;
}

export class TransceiverMetrics {
  readonly registry: Registry;
  readonly cluster: string;
  readonly callsActive: GaugeHandle;
  readonly #created: Metric<CounterHandle>;
  readonly #failed: Metric<CounterHandle>;
  readonly #ended: Metric<CounterHandle>;
  readonly #setup: Metric<HistogramHandle>;
  readonly #iceRtt: Metric<HistogramHandle>;
  readonly #rtcpRtt: Metric<HistogramHandle>;
  readonly #jitter: Metric<HistogramHandle>;
  readonly #loss: Metric<HistogramHandle>;
  readonly #backendErrors: Metric<CounterHandle>;
  readonly #regions = new Map<string, RegionHandles>();
  readonly drops: Record<DropReason, CounterHandle>;
  readonly #pathEvents: Record<PathEventName, CounterHandle>;
  readonly backendDroppedToBackend: CounterHandle;
  readonly backendDroppedToClient: CounterHandle;
  readonly backendSharedConnections: GaugeHandle;
  readonly #counters = new Map<string, CounterHandle>();
  #beforeRender: (() => void) | undefined;

  constructor(clusterId: number, registry = new Registry()) {
    this.registry = registry;
    this.cluster = String(clusterId);
    const r = registry;
    const cluster = this.cluster;
    this.callsActive = r
      .gauge("gr_transceiver_calls_active", "Calls currently held", ["cluster"])
      .with({ cluster });
    this.#created = r.counter("gr_transceiver_calls_created_total", "Calls answered", ["cluster", "region"]);
    this.#failed = r.counter("gr_transceiver_calls_failed_total", "Call creations refused or failed", [
      "cluster",
      "reason",
    ]);
    this.#ended = r.counter("gr_transceiver_calls_ended_total", "Calls ended", ["cluster", "reason"]);
    this.#setup = r.histogram("gr_transceiver_setup_seconds", "Call setup timings", [
      "cluster",
      "region",
      "stage",
    ]);
    this.#iceRtt = r.histogram("gr_transceiver_ice_rtt_seconds", "ICE consent round-trip time", [
      "cluster",
      "region",
    ]);
    this.#rtcpRtt = r.histogram("gr_transceiver_rtcp_rtt_seconds", "RTCP round-trip time", [
      "cluster",
      "region",
    ]);
    this.#jitter = r.histogram(
      "gr_transceiver_jitter_seconds",
      "Inbound audio jitter (RFC 3550)",
      ["cluster", "region"],
      JITTER_BUCKETS,
    );
    this.#loss = r.histogram(
      "gr_transceiver_packet_loss_ratio",
      "Inbound audio packet loss ratio per sample",
      ["cluster", "region"],
      RATIO_BUCKETS,
    );
    this.#backendErrors = r.counter("gr_transceiver_backend_errors_total", "Backend bridge errors", [
      "cluster",
      "reason",
    ]);
    const dropped = r.counter(
      "gr_transceiver_backend_dropped_frames_total",
      "Frames dropped by the backend bridge",
      ["cluster", "direction"],
    );
    this.backendDroppedToBackend = dropped.with({ cluster, direction: "to_backend" });
    this.backendDroppedToClient = dropped.with({ cluster, direction: "to_client" });
    this.backendSharedConnections = r
      .gauge(
        "gr_transceiver_backend_shared_connections",
        "Shared backend connections open (many calls on one WebSocket)",
        ["cluster"],
      )
      .with({ cluster });
    const drops = r.counter("gr_transceiver_drops_total", "Datagrams dropped by the transceiver", [
      "cluster",
      "reason",
    ]);
    this.drops = Object.fromEntries(
      DROP_REASONS.map((reason) => [reason, drops.with({ cluster, reason })]),
    ) as Record<DropReason, CounterHandle>;
    const paths = r.counter(
      "gr_transceiver_path_events_total",
      "Client paths: our checks sent to new addresses, answered (validated), expired unanswered, released",
      ["cluster", "event"],
    );
    this.#pathEvents = Object.fromEntries(
      PATH_EVENTS.map((event) => [event, paths.with({ cluster, event })]),
    ) as Record<PathEventName, CounterHandle>;
  }

  pathEvent(event: PathEventName): void {
    this.#pathEvents[event].inc();
  }

  pathEventCount(event: PathEventName): number {
    return this.#pathEvents[event].value;
  }

  region(region: Region): RegionHandles {
    let h = this.#regions.get(region);
    if (!h) {
      const cluster = this.cluster;
      h = {
        created: this.#created.with({ cluster, region }),
        setup: Object.fromEntries(
          SETUP_STAGES.map((stage) => [stage, this.#setup.with({ cluster, region, stage })]),
        ) as Record<SetupStage, HistogramHandle>,
        iceRtt: this.#iceRtt.with({ cluster, region }),
        rtcpRtt: this.#rtcpRtt.with({ cluster, region }),
        jitter: this.#jitter.with({ cluster, region }),
        loss: this.#loss.with({ cluster, region }),
      };
      this.#regions.set(region, h);
    }
    return h;
  }

  #counter(metric: Metric<CounterHandle>, key: string, labels: Record<string, string>): CounterHandle {
    let c = this.#counters.get(key);
    if (!c) {
      c = metric.with(labels);
      this.#counters.set(key, c);
    }
    return c;
  }

  failed(reason: string): void {
    this.#counter(this.#failed, `f:${reason}`, { cluster: this.cluster, reason }).inc();
  }
  ended(reason: string): void {
    this.#counter(this.#ended, `e:${reason}`, { cluster: this.cluster, reason }).inc();
  }
  backendError(reason: string): void {
    this.#counter(this.#backendErrors, `b:${reason}`, { cluster: this.cluster, reason }).inc();
  }

  /** Registers gr_transceiver_io_mode and, on the batched path, the addon's counters (read at scrape). */
  datagramIo(io: IoMode, totals: (() => Float64Array) | undefined): void {
    const update = ioMetrics(this.registry, io, TRANSCEIVER_IO_METRICS, { cluster: this.cluster });
    if (totals !== undefined) this.#beforeRender = () => update(totals());
  }

  render(): string {
    this.#beforeRender?.();
    return this.registry.render();
  }
}

export { LATENCY_BUCKETS };
