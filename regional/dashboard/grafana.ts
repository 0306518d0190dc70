// Builds the Grafana dashboard (docs/grafana/global-relay.json) from the panel catalogue, so Grafana
// and the built-in page run the same PromQL. `npx node scripts/dashboard-grafana.ts` writes it.
import { FILTER_LABELS, type FilterLabel, type PanelDef, type Section, type Unit } from "./core/panel-def.ts";
import { panelQueries } from "./core/promql.ts";
import { PANELS } from "./panels.ts";

// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JS template.
const DS = { type: "prometheus", uid: "${datasource}" };

const SECTIONS: Record<Section, string> = {
  latency: "Latency per hop (p50 solid, p95 dashed, p99 dotted)",
  traffic: "Calls and flows",
  errors: "Drops, failures and errors",
  conferences: "Conferences (hub ↔ legs, conference frames over the backbone)",
};

const UNITS: Record<Unit, string> = { seconds: "s", ratio: "percentunit", per_second: "ops", count: "short" };

/** Where each filter variable takes its values from (a metric that always carries the label). */
const VARIABLE_SOURCES: Record<FilterLabel, string> = {
  region: "gr_transceiver_setup_seconds_count",
  pop: "gr_relay_first_hop_rtt_seconds_count",
  cluster: "gr_transceiver_calls_active",
};

function variable(label: FilterLabel) {
  const query = `label_values(${VARIABLE_SOURCES[label]}, ${label})`;
  return {
    name: label,
    label: label === "pop" ? "POP" : label[0]!.toUpperCase() + label.slice(1),
    type: "query",
    datasource: DS,
    definition: query,
    query: { query, refId: "PrometheusVariableQueryEditor-VariableQuery" },
    multi: true,
    includeAll: true,
    allValue: ".*",
    current: { selected: true, text: ["All"], value: ["$__all"] },
    refresh: 2,
    sort: 3,
  };
}

function timeseries(p: PanelDef, id: number, x: number, y: number) {
  const queries = panelQueries(p, { window: "$__rate_interval", filter: (l) => `$${l}` }).filter(
    (q) => q.ref !== "n",
  );
  const style = (re: string, dash: number[]) => ({
    matcher: { id: "byRegexp", options: re },
    properties: [{ id: "custom.lineStyle", value: { fill: dash.length > 2 ? "dot" : "dash", dash } }],
  });
  return {
    id,
    type: "timeseries",
    title: p.title,
    description: p.help,
    datasource: DS,
    gridPos: { h: 8, w: 12, x, y },
    fieldConfig: {
      defaults: {
        unit: UNITS[p.unit],
        min: 0,
        custom: { lineWidth: 1, fillOpacity: 0, spanNulls: false, showPoints: "never" },
      },
      overrides: p.kind === "quantile" ? [style(".* p95$", [10, 6]), style(".* p99$", [2, 4, 2, 4])] : [],
    },
    options: {
      legend: { showLegend: true, displayMode: "table", placement: "bottom", calcs: ["lastNotNull", "max"] },
      tooltip: { mode: "multi", sort: "desc" },
    },
    targets: queries.map((q, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DS,
      expr: q.expr,
      legendFormat: q.legend,
      range: true,
    })),
  };
}

export function grafanaDashboard(): Record<string, unknown> {
  const panels: unknown[] = [];
  let id = 1;
  let y = 0;
  panels.push({
    id: id++,
    type: "text",
    title: "How to read this dashboard",
    gridPos: { h: 3, w: 24, x: 0, y },
    options: {
      mode: "markdown",
      content:
        "Per hop, per region: **first hop** (client ↔ POP) + **backbone** (POP ↔ transceiver) ≈ **end-to-end RTT**. " +
        "Signalling is measured at the edge, setup stages at the transceiver. Quantiles are `histogram_quantile` over " +
        "bucket rates. Operator guide: `docs/dashboards.md`; every metric: `docs/metrics.md`.",
    },
  });
  y += 3;
  for (const section of Object.keys(SECTIONS) as Section[]) {
    panels.push({
      id: id++,
      type: "row",
      title: SECTIONS[section],
      collapsed: false,
      gridPos: { h: 1, w: 24, x: 0, y },
      panels: [],
    });
    y += 1;
    let col = 0;
    for (const p of PANELS.filter((x) => x.section === section)) {
      panels.push(timeseries(p, id++, col * 12, y));
      col = 1 - col;
      if (col === 0) y += 8;
    }
    if (col === 1) y += 8;
  }
  return {
    title: "Global Relay: latency per hop",
    uid: "global-relay",
    description:
      "Where the milliseconds go, per region, POP and cluster. Generated from regional/dashboard/panels.ts.",
    tags: ["global-relay", "webrtc", "latency"],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    refresh: "30s",
    time: { from: "now-3h", to: "now" },
    timepicker: {},
    timezone: "browser",
    annotations: { list: [] },
    links: [],
    templating: {
      list: [
        {
          name: "datasource",
          label: "Data source",
          type: "datasource",
          query: "prometheus",
          current: {},
          hide: 0,
          refresh: 1,
        },
        ...FILTER_LABELS.map(variable),
      ],
    },
    panels,
  };
}

/** The file's exact text (stable key order, two-space indent, trailing newline). */
export function grafanaDashboardText(): string {
  return `${JSON.stringify(grafanaDashboard(), null, 2)}\n`;
}
