// What a dashboard panel is (the catalogue itself is regional/dashboard/panels.ts): pure types
// shared by the evaluators, the PromQL builders, the server and the Grafana generator.

export type PanelKind = "quantile" | "rate" | "gauge";
export type Unit = "seconds" | "ratio" | "per_second" | "count";
export type Section = "latency" | "traffic" | "errors" | "conferences";
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

/** The series id of a quantile: 0.95 → "p95". */
export function quantileRef(q: number): string {
  return `p${Math.round(q * 100)}`;
}
