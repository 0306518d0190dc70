// PromQL for a panel, the same for the built-in page on Prometheus and for Grafana. Pure.
import { type FilterLabel, type PanelDef, QUANTILES, quantileRef } from "./panel-def.ts";

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
