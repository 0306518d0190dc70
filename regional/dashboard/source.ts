// What the page asks for, and the two places the answers come from: the local aggregator (scrapes
// the local processes) and Prometheus (production). Both return the same shapes.
import type { Filters, PanelData } from "./core/evaluate.ts";
import type { FilterLabel, PanelDef } from "./core/panel-def.ts";

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
  /** Only points newer than this (ms); sources that cannot do it answer in full. */
  since?: number;
}

export interface PanelsResponse {
  mode: "local" | "prometheus";
  now: number;
  windowS: number;
  /** Bucket width of the points (ms): a new point replaces an older one in the same bucket. */
  stepMs: number;
  /** true: only points newer than the request's `since`, to merge into what the page has. */
  incremental: boolean;
  panels: PanelData[];
  errors: string[];
}

export interface DataSource {
  meta(): Promise<DashboardMeta>;
  panels(req: PanelsRequest): Promise<PanelsResponse>;
  close(): Promise<void>;
}
