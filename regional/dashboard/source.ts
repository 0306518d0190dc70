// What the page asks for, and the two places the answers come from: the local aggregator (scrapes
// the local processes) and Prometheus (production). Both return the same shapes.
import type { Filters, PanelData } from "./core/evaluate.ts";
import type { FilterLabel, PanelDef } from "./panels.ts";

export interface TargetStatus {
  name: string;
  url: string;
  up: boolean;
  lastScrape: number | null;
  lastError: string | null;
  samples: number;
  parseIssues: number;
  durationMs: number | null;
}

export interface DashboardMeta {
  mode: "local" | "prometheus";
  now: number;
  refreshMs: number;
  windowS: number;
  panels: readonly PanelDef[];
  filterValues: Record<FilterLabel, string[]>;
  targets: TargetStatus[];
}

export interface PanelsRequest {
  rangeS: number;
  maxPoints: number;
  filters: Filters;
  /** Restrict to these panel ids (all when empty). */
  panelIds: readonly string[];
}

export interface PanelsResponse {
  mode: "local" | "prometheus";
  now: number;
  windowS: number;
  panels: PanelData[];
  errors: string[];
}

export interface DataSource {
  meta(): Promise<DashboardMeta>;
  panels(req: PanelsRequest): Promise<PanelsResponse>;
  close(): Promise<void>;
}
