// Production mode: the page's data comes from Prometheus' HTTP API, with the same PromQL as the
// Grafana dashboard (panels.ts builds both). One query_range per panel query, a few at a time.
import type { PanelData, SeriesData } from "./core/evaluate.ts";
import { upsert } from "./core/map.ts";
import { FILTER_LABELS, type FilterLabel } from "./core/panel-def.ts";
import { panelQueries, promAlternation } from "./core/promql.ts";
import { PANELS } from "./panels.ts";
import type { DashboardMeta, DataSource, PanelsRequest, PanelsResponse } from "./source.ts";

export interface PrometheusSourceOptions {
  url: string;
  windowS: number;
  refreshMs: number;
  timeoutMs?: number;
  clock?: () => number;
}

interface MatrixResult {
  metric: Record<string, string>;
  values: [number, string][];
}

interface ApiResponse<T> {
  status: "success" | "error";
  data?: T;
  errorType?: string;
  error?: string;
}

const CONCURRENCY = 6;

export class PrometheusSource implements DataSource {
  readonly #o: PrometheusSourceOptions;
  readonly #clock: () => number;

  constructor(o: PrometheusSourceOptions) {
    this.#o = o;
    this.#clock = o.clock ?? Date.now;
  }

  async #get<T>(path: string, params: [string, string][]): Promise<T> {
    const u = new URL(`${this.#o.url}${path}`);
    for (const [k, v] of params) u.searchParams.append(k, v);
    const res = await fetch(u, { signal: AbortSignal.timeout(this.#o.timeoutMs ?? 10_000) });
    let body: ApiResponse<T>;
    try {
      body = (await res.json()) as ApiResponse<T>;
    } catch {
      throw new Error(`prometheus ${path}: HTTP ${res.status}, not JSON`);
    }
    if (body.status !== "success" || body.data === undefined)
      throw new Error(
        `prometheus ${path}: ${body.errorType ?? `HTTP ${res.status}`}: ${body.error ?? "no data"}`,
      );
    return body.data;
  }

  async meta(): Promise<DashboardMeta> {
    const filterValues = {} as Record<FilterLabel, string[]>;
    const names = [...new Set(PANELS.map((p) => p.metric))];
    const match = `{__name__=~"${names.map((n) => `${n}(_bucket|_count)?`).join("|")}"}`;
    const now = this.#clock();
    await Promise.all(
      FILTER_LABELS.map(async (l) => {
        try {
          const v = await this.#get<string[]>(`/api/v1/label/${l}/values`, [
            ["match[]", match],
            ["start", String((now - 6 * 3600_000) / 1000)],
            ["end", String(now / 1000)],
          ]);
          filterValues[l] = v.filter((x) => x !== "").sort();
        } catch {
          filterValues[l] = [];
        }
      }),
    );
    let up: { metric: Record<string, string>; value: [number, string] }[] = [];
    try {
      up = (await this.#get<{ result: typeof up }>("/api/v1/query", [["query", 'up{job=~".+"}']])).result;
    } catch {
      up = [];
    }
    return {
      mode: "prometheus",
      now,
      refreshMs: this.#o.refreshMs,
      windowS: this.#o.windowS,
      panels: PANELS,
      filterValues,
      targets: up.map((r) => ({
        name: `${r.metric.job ?? "?"} ${r.metric.instance ?? ""}`.trim(),
        url: r.metric.instance ?? "",
        up: r.value[1] === "1",
        lastScrape: r.value[0] * 1000,
        lastError: r.value[1] === "1" ? null : "down",
        samples: 0,
        parseIssues: 0,
        durationMs: null,
      })),
    };
  }

  async panels(req: PanelsRequest): Promise<PanelsResponse> {
    const now = this.#clock();
    const step = Math.max(1, Math.ceil(req.rangeS / Math.max(1, req.maxPoints)));
    // Align like Grafana does so successive refreshes hit the same evaluation instants.
    const end = Math.floor(now / 1000 / step) * step;
    const start = end - Math.floor(req.rangeS / step) * step;
    const timestamps: number[] = [];
    for (let t = start; t <= end; t += step) timestamps.push(t * 1000);
    const opts = {
      window: `${Math.max(this.#o.windowS, 2 * step)}s`,
      filter: (l: FilterLabel) => {
        const v = req.filters[l];
        return v !== undefined && v.length > 0 ? promAlternation(v) : null;
      },
    };
    const panels = PANELS.filter((p) => req.panelIds.length === 0 || req.panelIds.includes(p.id));
    const jobs: { panel: PanelData; by: readonly string[]; ref: string; expr: string }[] = [];
    const out: PanelData[] = [];
    for (const p of panels) {
      const data: PanelData = { id: p.id, timestamps, series: [] };
      out.push(data);
      for (const q of panelQueries(p, opts)) jobs.push({ panel: data, by: p.by, ref: q.ref, expr: q.expr });
    }
    const errors: string[] = [];
    const results = new Array<MatrixResult[] | null>(jobs.length).fill(null);
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const i = next++;
        const job = jobs[i]!;
        try {
          const d = await this.#get<{ resultType: string; result: MatrixResult[] }>("/api/v1/query_range", [
            ["query", job.expr],
            ["start", String(start)],
            ["end", String(end)],
            ["step", String(step)],
          ]);
          results[i] = d.result;
        } catch (e) {
          errors.push(`${job.panel.id}/${job.ref}: ${(e as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, jobs.length) }, worker));
    // Keep the series order of the local mode: by group, then p50, p95, p99, n.
    const grouped = new Map<PanelData, Map<string, SeriesData[]>>();
    jobs.forEach((job, i) => {
      for (const r of results[i] ?? []) {
        const group: Record<string, string> = {};
        for (const l of job.by) group[l] = r.metric[l] ?? "";
        const values = timestamps.map((): number | null => null);
        for (const [t, v] of r.values) {
          const idx = Math.round((t - start) / step);
          const n = Number(v);
          if (idx >= 0 && idx < values.length && Number.isFinite(n)) values[idx] = n;
        }
        const key = job.by.map((l) => group[l]).join("\u0000");
        const byGroup = upsert(grouped, job.panel, () => new Map<string, SeriesData[]>());
        upsert(byGroup, key, (): SeriesData[] => []).push({ group, ref: job.ref, values });
      }
    });
    for (const [panel, byGroup] of grouped)
      for (const key of [...byGroup.keys()].sort()) panel.series.push(...byGroup.get(key)!);
    return {
      mode: "prometheus",
      now,
      windowS: this.#o.windowS,
      stepMs: step * 1000,
      incremental: false,
      panels: out,
      errors,
    };
  }

  async close(): Promise<void> {}
}
