// The one catalogue of dashboard panels. The built-in page (local aggregator or Prometheus), the
// Grafana dashboard (docs/grafana/global-relay.json is generated from this file) and the docs all
// read it, so a panel shows the same query everywhere. Pure data plus PromQL builders.

export type PanelKind = "quantile" | "rate" | "gauge";
export type Unit = "seconds" | "ratio" | "per_second" | "count";
export type Section = "latency" | "traffic" | "errors";
/** The dimensions the page filters on. */
export const FILTER_LABELS = ["region", "pop", "cluster"] as const;
export type FilterLabel = (typeof FILTER_LABELS)[number];

export interface PanelDef {
  id: string;
  title: string;
  section: Section;
  kind: PanelKind;
  /** Metric family name (histograms without the _bucket suffix). */
  metric: string;
  /** Equality matchers that are part of the panel itself. */
  match?: Readonly<Record<string, string>>;
  /** Series are summed by these labels (one line, or one p50/p95/p99 triple, per group). */
  by: readonly string[];
  /** Which of the page filters apply (labels the series carry, exported or added by the scrape). */
  filters: readonly FilterLabel[];
  unit: Unit;
  /** One line for operators: what the number is and where it is measured. */
  help: string;
}

export const QUANTILES = [0.5, 0.95, 0.99] as const;

const RELAY: readonly FilterLabel[] = ["pop", "cluster"];
const CLIENT: readonly FilterLabel[] = ["region", "cluster"];

function setup(id: string, stage: string, title: string, help: string): PanelDef {
  return {
    id,
    title,
    section: "latency",
    kind: "quantile",
    metric: "gr_setup_seconds",
    match: { stage },
    by: ["region"],
    filters: CLIENT,
    unit: "seconds",
    help,
  };
}

function rate(
  id: string,
  title: string,
  metric: string,
  by: readonly string[],
  filters: readonly FilterLabel[],
  help: string,
  section: Section = "errors",
): PanelDef {
  return { id, title, section, kind: "rate", metric, by, filters, unit: "per_second", help };
}

function gauge(
  id: string,
  title: string,
  metric: string,
  by: readonly string[],
  filters: readonly FilterLabel[],
  help: string,
): PanelDef {
  return { id, title, section: "traffic", kind: "gauge", metric, by, filters, unit: "count", help };
}

export const PANELS: readonly PanelDef[] = [
  {
    id: "first_hop_rtt",
    title: "First hop RTT (client ↔ POP)",
    section: "latency",
    kind: "quantile",
    metric: "gr_relay_first_hop_rtt_seconds",
    by: ["pop"],
    filters: RELAY,
    unit: "seconds",
    help: "Round trip between the client and the POP, from STUN transactions the POP relays, per POP.",
  },
  {
    id: "backbone_rtt",
    title: "Backbone RTT (POP ↔ transceiver)",
    section: "latency",
    kind: "quantile",
    metric: "gr_relay_backbone_rtt_seconds",
    by: ["pop", "cluster"],
    filters: RELAY,
    unit: "seconds",
    help: "Round trip from the POP through the cluster relay to the transceiver and back, per POP and cluster.",
  },
  {
    id: "signalling_total",
    title: "Signalling time (edge receive → answer sent)",
    section: "latency",
    kind: "quantile",
    metric: "gr_edge_signalling_seconds",
    match: { stage: "total" },
    by: ["region"],
    filters: CLIENT,
    unit: "seconds",
    help: "Time the edge spends on an offer, from the request arriving to the answer leaving, per client region.",
  },
  {
    id: "signalling_cluster_hop",
    title: "Signalling: edge → cluster hop",
    section: "latency",
    kind: "quantile",
    metric: "gr_edge_signalling_seconds",
    match: { stage: "cluster_hop" },
    by: ["cluster"],
    filters: CLIENT,
    unit: "seconds",
    help: "The part of the signalling time spent on the signed request to the cluster and its answer, per cluster.",
  },
  setup(
    "setup_offer_to_answer",
    "offer_to_answer",
    "Setup: offer → answer (transceiver)",
    "Transceiver time from the offer arriving to the answer being ready.",
  ),
  setup(
    "setup_ice",
    "answer_to_ice_connected",
    "Setup: answer → ICE connected",
    "From the answer leaving the transceiver to ICE reaching connected (first checks through the POP).",
  ),
  setup(
    "setup_dtls",
    "answer_to_dtls_connected",
    "Setup: answer → DTLS connected",
    "From the answer to the DTLS handshake completing (SRTP keys ready).",
  ),
  setup(
    "setup_first_audio",
    "answer_to_first_audio",
    "Setup: answer → first audio",
    "From the answer to the first RTP audio packet from the client; what a user feels as 'connected'.",
  ),
  {
    id: "e2e_rtt",
    title: "End-to-end RTT (RTCP, client ↔ transceiver)",
    section: "latency",
    kind: "quantile",
    metric: "gr_rtcp_rtt_seconds",
    by: ["region"],
    filters: CLIENT,
    unit: "seconds",
    help: "Media round trip from RTCP receiver reports (LSR/DLSR) at the transceiver: first hop plus backbone.",
  },
  {
    id: "ice_rtt",
    title: "ICE RTT (consent checks, client ↔ transceiver)",
    section: "latency",
    kind: "quantile",
    metric: "gr_ice_rtt_seconds",
    by: ["region"],
    filters: CLIENT,
    unit: "seconds",
    help: "Round trip of the transceiver's STUN consent checks, through the whole relay path.",
  },
  {
    id: "jitter",
    title: "Jitter (client → transceiver audio)",
    section: "latency",
    kind: "quantile",
    metric: "gr_jitter_seconds",
    by: ["region"],
    filters: CLIENT,
    unit: "seconds",
    help: "Interarrival jitter of the client's audio as the transceiver sees it (RFC 3550), per region.",
  },
  {
    id: "loss",
    title: "Packet loss",
    section: "latency",
    kind: "quantile",
    metric: "gr_packet_loss_ratio",
    by: ["region"],
    filters: CLIENT,
    unit: "ratio",
    help: "Fraction of audio packets lost, per RTCP report interval, both directions.",
  },
  gauge(
    "sessions_active",
    "Sessions active",
    "gr_sessions_active",
    ["cluster"],
    ["cluster"],
    "Sessions each cluster holds now.",
  ),
  rate(
    "sessions_created",
    "Sessions created",
    "gr_sessions_created_total",
    ["region"],
    CLIENT,
    "New sessions per second, per client region.",
    "traffic",
  ),
  rate(
    "sessions_ended",
    "Sessions ended by reason",
    "gr_sessions_ended_total",
    ["reason"],
    ["cluster"],
    "Sessions ending per second: hangup, timeout, ice-failed, backend-closed, ...",
    "traffic",
  ),
  {
    id: "transceivers_usable",
    title: "Usable transceivers per cluster",
    section: "traffic",
    kind: "gauge",
    metric: "gr_gateway_transceivers",
    match: { state: "usable" },
    by: ["cluster"],
    filters: ["cluster"],
    unit: "count",
    help: "Transceivers the cluster's gateway would give a new session to (healthy, not draining, not full). Zero: the cluster is out.",
  },
  gauge(
    "flows_active",
    "Relay flows active",
    "gr_relay_flows_active",
    ["role"],
    RELAY,
    "Flows in the relays' tables (role pop: client flows at POPs; role cluster: flows at cluster relays).",
  ),
  gauge(
    "flows_half_open",
    "Relay flows half-open",
    "gr_relay_flows_half_open",
    ["role"],
    RELAY,
    "Flows the transceiver has not answered yet (short timer, capped per source). A surge means probing or a broken cluster.",
  ),
  rate(
    "flows_created",
    "Relay flows created",
    "gr_relay_flows_created_total",
    ["role"],
    RELAY,
    "New flows per second.",
    "traffic",
  ),
  rate(
    "flows_closed",
    "Relay flows closed by the transceiver",
    "gr_relay_flows_closed_total",
    ["role"],
    RELAY,
    "Flows dropped at once because the transceiver ended the session (flowClose frame): hang-ups, timeouts.",
    "traffic",
  ),
  rate(
    "relay_packets",
    "Relay packets",
    "gr_relay_packets_total",
    ["role", "direction"],
    RELAY,
    "Datagrams per second through the relays, by role and direction.",
    "traffic",
  ),
  rate(
    "edge_requests",
    "Edge requests by status",
    "gr_edge_requests_total",
    ["status"],
    [],
    "Signalling requests per second at the edge, by HTTP status.",
    "traffic",
  ),
  rate(
    "sessions_failed",
    "Session setup failures by reason",
    "gr_sessions_failed_total",
    ["reason"],
    ["cluster"],
    "Sessions that never reached media, per second, by reason (ice-timeout, dtls-failed, full, ...).",
  ),
  rate(
    "relay_drops",
    "Relay drops by reason",
    "gr_relay_drops_total",
    ["reason"],
    RELAY,
    "Datagrams the relays dropped, per second, by reason (bad hint, unknown flow, half-open cap, ...).",
  ),
  rate(
    "transceiver_drops",
    "Transceiver drops by reason",
    "gr_transceiver_drops_total",
    ["reason"],
    ["cluster"],
    "Datagrams the transceivers dropped, per second, by reason.",
  ),
  rate(
    "flows_expired",
    "Relay flows expired by state",
    "gr_relay_flows_expired_total",
    ["state"],
    RELAY,
    "Flows removed by their timer, per second: half-open ones never answered, established ones idle.",
  ),
  rate(
    "backend_errors",
    "Backend errors by reason",
    "gr_backend_errors_total",
    ["reason"],
    ["cluster"],
    "Errors on the transceiver ↔ backend link, per second.",
  ),
  rate(
    "backend_dropped_frames",
    "Backend frames dropped",
    "gr_backend_dropped_frames_total",
    ["direction"],
    ["cluster"],
    "Audio frames dropped between transceiver and backend (queue full), per second.",
  ),
  rate(
    "edge_failovers",
    "Edge failovers",
    "gr_edge_failovers_total",
    ["cluster"],
    [],
    "Offers the edge re-sent to another cluster after the first choice failed, per second, by the failed cluster.",
  ),
  rate(
    "restore_lookups",
    "Relay flow restores by result",
    "gr_relay_restore_lookups_total",
    ["result"],
    RELAY,
    "Lookups in the flow store for packets of unknown flows: hit = a flow survived a relay restart; error = Redis unreachable.",
  ),
  rate(
    "redis_ops",
    "Relay Redis operations",
    "gr_relay_redis_ops_total",
    ["op", "result"],
    RELAY,
    "Flow mirror operations per second by result; errors here mean restarts may lose flows.",
  ),
];

export function panelById(id: string): PanelDef | undefined {
  return PANELS.find((p) => p.id === id);
}

/** Escapes a string for a PromQL double-quoted literal. */
export function promString(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** An RE2 alternation matching exactly the given values. */
export function promAlternation(values: readonly string[]): string {
  return values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
}

export interface QueryOptions {
  /** Range for rate()/increase(), e.g. "60s" or Grafana's "$__rate_interval". */
  window: string;
  /**
   * Regex (already RE2) for a filter label, or null for no matcher. Grafana passes "$region";
   * the page passes the selected values through promAlternation.
   */
  filter(label: FilterLabel): string | null;
}

export interface PanelQuery {
  /** Stable id within the panel: "p50", "p95", "p99", "n" or "value". */
  ref: string;
  expr: string;
  /** Grafana legend template. */
  legend: string;
  q?: number;
}

function selector(p: PanelDef, suffix: string, o: QueryOptions): string {
  const m: string[] = [];
  for (const [k, v] of Object.entries(p.match ?? {})) m.push(`${k}="${promString(v)}"`);
  for (const f of p.filters) {
    const re = o.filter(f);
    if (re !== null) m.push(`${f}=~"${promString(re)}"`);
  }
  return `${p.metric}${suffix}${m.length ? `{${m.join(",")}}` : ""}`;
}

export function quantileRef(q: number): string {
  return `p${Math.round(q * 100)}`;
}

/** The PromQL for a panel: one query per quantile (plus the observation count), or one query. */
export function panelQueries(p: PanelDef, o: QueryOptions): PanelQuery[] {
  const by = p.by.join(", ");
  const legendBy = p.by.map((l) => `{{${l}}}`).join(" ");
  if (p.kind === "quantile") {
    const qs: PanelQuery[] = QUANTILES.map((q) => ({
      ref: quantileRef(q),
      q,
      expr: `histogram_quantile(${q}, sum by (le, ${by}) (rate(${selector(p, "_bucket", o)}[${o.window}])))`,
      legend: `${legendBy} ${quantileRef(q)}`,
    }));
    qs.push({
      ref: "n",
      expr: `sum by (${by}) (increase(${selector(p, "_count", o)}[${o.window}]))`,
      legend: `${legendBy} n`,
    });
    return qs;
  }
  const inner = selector(p, "", o);
  const expr =
    p.kind === "rate" ? `sum by (${by}) (rate(${inner}[${o.window}]))` : `sum by (${by}) (${inner})`;
  return [{ ref: "value", expr, legend: legendBy }];
}
