// Prometheus view of a worker's ICE-TCP listener, every series labelled transport="tcp": the TCP
// engine's counters (same reasons as UDP), plus what only TCP has (connections and why they
// ended, framing and backpressure drops). Copied in at scrape time like RelayMetrics.
import { DATAGRAM_KIND_NAMES } from "../../../shared/stun/classify.ts";
import type { CounterHandle, GaugeHandle, HistogramHandle, Metric, Registry } from "../../common/metrics.ts";
import { RttKind } from "../core/rtt.ts";
import { KINDS, type RttSink } from "../core/stats.ts";
import { DIRECTION_NAMES, DROP_NAMES } from "../core/types.ts";
import type { EngineView } from "./metrics.ts";

/** Why a connection was refused at accept. */
export const TCP_REFUSED = ["total_limit", "source_limit", "draining"] as const;
/** Why a connection ended. */
export const TCP_CLOSED = [
  "peer_closed",
  "half_closed",
  "first_packet_timeout",
  "not_routable",
  "oversized_frame",
  "flow_ended",
  "stalled",
  "error",
  "shutdown",
] as const;
/** Packet drops only TCP has (the engine's reasons are counted beside them). */
export const TCP_DROPS = ["empty_frame", "backpressure", "no_connection"] as const;

export type TcpRefused = (typeof TCP_REFUSED)[number];
export type TcpClosed = (typeof TCP_CLOSED)[number];
export type TcpDrop = (typeof TCP_DROPS)[number];

/** Plain counters the listener bumps (no registry work on the data path). */
export class TcpCounters {
  accepted = 0;
  readonly refused = new Float64Array(TCP_REFUSED.length);
  readonly closed = new Float64Array(TCP_CLOSED.length);
  readonly drops = new Float64Array(TCP_DROPS.length);
  open = 0;
  refuse(r: TcpRefused): void {
    this.refused[TCP_REFUSED.indexOf(r)]!++;
  }
  close(r: TcpClosed): void {
    this.closed[TCP_CLOSED.indexOf(r)]!++;
  }
  drop(r: TcpDrop): void {
    this.drops[TCP_DROPS.indexOf(r)]!++;
  }
}

function setCounter(h: CounterHandle, v: number): void {
  const d = v - h.value;
  if (d > 0) h.inc(d);
}

export class TcpMetrics implements RttSink {
  readonly #packets: CounterHandle[] = [];
  readonly #bytes: CounterHandle[] = [];
  readonly #engineDrops: CounterHandle[];
  readonly #tcpDrops: CounterHandle[];
  readonly #refused: CounterHandle[];
  readonly #closed: CounterHandle[];
  readonly #accepted: CounterHandle;
  readonly #open: GaugeHandle;
  readonly #active: GaugeHandle;
  readonly #halfOpen: GaugeHandle;
  readonly #created: CounterHandle;
  readonly #validated: CounterHandle;
  readonly #firstHopFamily: Metric<HistogramHandle>;
  readonly #firstHop = new Map<number, HistogramHandle>();
  readonly #pop: string;
  readonly #backbone: RttSink | undefined;

  /** `backbone`: where backbone RTT samples go (the same leg as UDP's: the POP's own histogram). */
  constructor(r: Registry, popId: number, backbone?: RttSink) {
    this.#pop = String(popId);
    this.#backbone = backbone;
    this.#firstHopFamily = r.histogram(
      "gr_relay_transport_first_hop_rtt_seconds",
      "Transceiver's Binding request to the client's response, seen at the POP, by transport",
      ["transport", "pop", "cluster"],
    );
    const t = { transport: "tcp" };
    const packets = r.counter("gr_relay_transport_packets_total", "Packets forwarded, by transport", [
      "transport",
      "direction",
      "kind",
    ]);
    const bytes = r.counter("gr_relay_transport_bytes_total", "Payload bytes forwarded, by transport", [
      "transport",
      "direction",
      "kind",
    ]);
    for (let d = 0; d < 2; d++) {
      for (let k = 0; k < KINDS; k++) {
        const labels = { ...t, direction: DIRECTION_NAMES[d]!, kind: DATAGRAM_KIND_NAMES[k]! };
        this.#packets.push(packets.with(labels));
        this.#bytes.push(bytes.with(labels));
      }
    }
    const drops = r.counter("gr_relay_transport_drops_total", "Packets dropped, by transport and reason", [
      "transport",
      "reason",
    ]);
    this.#engineDrops = DROP_NAMES.map((reason) => drops.with({ ...t, reason }));
    this.#tcpDrops = TCP_DROPS.map((reason) => drops.with({ ...t, reason }));
    const conns = r.counter("gr_relay_tcp_connections_total", "TCP connections accepted or refused", [
      "transport",
      "result",
    ]);
    this.#accepted = conns.with({ ...t, result: "accepted" });
    this.#refused = TCP_REFUSED.map((result) => conns.with({ ...t, result }));
    const closed = r.counter("gr_relay_tcp_closed_total", "TCP connections ended, by reason", [
      "transport",
      "reason",
    ]);
    this.#closed = TCP_CLOSED.map((reason) => closed.with({ ...t, reason }));
    this.#open = r.gauge("gr_relay_tcp_connections", "Open TCP connections", ["transport"]).with(t);
    this.#active = r.gauge("gr_relay_transport_flows_active", "Flows, by transport", ["transport"]).with(t);
    this.#halfOpen = r
      .gauge("gr_relay_transport_flows_half_open", "Flows not validated yet, by transport", ["transport"])
      .with(t);
    this.#created = r
      .counter("gr_relay_transport_flows_created_total", "Flows created, by transport", ["transport"])
      .with(t);
    this.#validated = r
      .counter("gr_relay_transport_flows_validated_total", "Flows validated, by transport", ["transport"])
      .with(t);
  }

  rtt(kind: number, clusterId: number, ms: number): void {
    if (kind !== RttKind.firstHop) {
      this.#backbone?.rtt(kind, clusterId, ms);
      return;
    }
    let h = this.#firstHop.get(clusterId);
    if (h === undefined) {
      h = this.#firstHopFamily.with({ transport: "tcp", pop: this.#pop, cluster: String(clusterId) });
      this.#firstHop.set(clusterId, h);
    }
    h.observe(ms / 1000);
  }

  sync(e: EngineView, c: TcpCounters): void {
    const s = e.stats;
    for (let i = 0; i < this.#packets.length; i++) {
      setCounter(this.#packets[i]!, s.packets[i]!);
      setCounter(this.#bytes[i]!, s.bytes[i]!);
    }
    for (let i = 0; i < this.#engineDrops.length; i++) setCounter(this.#engineDrops[i]!, s.drops[i]!);
    for (let i = 0; i < this.#tcpDrops.length; i++) setCounter(this.#tcpDrops[i]!, c.drops[i]!);
    for (let i = 0; i < this.#refused.length; i++) setCounter(this.#refused[i]!, c.refused[i]!);
    for (let i = 0; i < this.#closed.length; i++) setCounter(this.#closed[i]!, c.closed[i]!);
    setCounter(this.#accepted, c.accepted);
    this.#open.set(c.open);
    this.#active.set(e.table.size);
    this.#halfOpen.set(e.table.halfOpen);
    setCounter(this.#created, s.flowsCreated);
    setCounter(this.#validated, s.flowsValidated);
  }
}
