// The local aggregator: scrapes every target once per interval (all at once, each with a timeout
// and a body cap), appends one snapshot to the ring and answers panel queries from it.
import type { Logger } from "../common/log.ts";
import type { TargetSpec } from "./config.ts";
import { evaluatePanel, stepFor } from "./core/evaluate.ts";
import { parseExposition } from "./core/exposition.ts";
import { FILTER_LABELS, type FilterLabel } from "./core/panel-def.ts";
import { SnapshotStore, type TargetScrape } from "./core/store.ts";
import { PANELS } from "./panels.ts";
import type { DashboardMeta, DataSource, PanelsRequest, PanelsResponse, TargetStatus } from "./source.ts";

const MAX_BODY = 16 * 1024 * 1024;

export interface LocalSourceOptions {
  targets: readonly TargetSpec[];
  scrapeIntervalMs: number;
  scrapeTimeoutMs: number;
  windowS: number;
  retentionS: number;
  refreshMs?: number;
  /** Largest scrape body accepted (default 16 MiB). */
  maxBodyBytes?: number;
  /** Time source (ms); the screenshot script drives a virtual clock through it. */
  clock?: () => number;
  log?: Logger;
}

/** GETs a scrape body, refusing more than maxBody bytes whatever the server claims or streams. */
async function fetchText(url: string, timeoutMs: number, maxBody: number): Promise<string> {
  const res = await fetch(url, {
    signal: AbortSignal.timeout(timeoutMs),
    headers: { accept: "text/plain;version=0.0.4;q=1,*/*;q=0.1" },
  });
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new Error(`HTTP ${res.status}`);
  }
  if (Number(res.headers.get("content-length") ?? "0") > maxBody || res.body === null) {
    await res.body?.cancel();
    throw new Error(res.body === null ? "no body" : `body over ${maxBody} bytes`);
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBody) {
      await reader.cancel();
      throw new Error(`body over ${maxBody} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

export class LocalSource implements DataSource {
  readonly store: SnapshotStore;
  readonly #opts: LocalSourceOptions;
  readonly #clock: () => number;
  readonly #status = new Map<string, TargetStatus>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | null = null;
  #closed = false;
  /** Scrape rounds completed (tests wait on it). */
  rounds = 0;

  constructor(opts: LocalSourceOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? Date.now;
    const capacity = Math.max(2, Math.ceil((opts.retentionS * 1000) / opts.scrapeIntervalMs) + 1);
    this.store = new SnapshotStore(capacity);
    for (const t of opts.targets)
      this.#status.set(t.name, {
        name: t.name,
        url: t.url,
        up: false,
        lastScrape: null,
        lastError: "not scraped yet",
        samples: 0,
        parseIssues: 0,
        durationMs: null,
      });
  }

  /** Scrapes every target once and appends one snapshot. Concurrent calls share one round. */
  scrapeOnce(): Promise<void> {
    if (this.#running === null)
      this.#running = this.#round().finally(() => {
        this.#running = null;
      });
    return this.#running;
  }

  async #round(): Promise<void> {
    const results = await Promise.all(
      this.#opts.targets.map(async (t): Promise<TargetScrape> => {
        const st = this.#status.get(t.name)!;
        const started = performance.now();
        try {
          const text = await fetchText(
            t.url,
            this.#opts.scrapeTimeoutMs,
            this.#opts.maxBodyBytes ?? MAX_BODY,
          );
          const exposition = parseExposition(text);
          if (!st.up) this.#opts.log?.info("target up", { target: t.name });
          st.up = true;
          st.lastError = exposition.issues.length
            ? `line ${exposition.issues[0]!.line}: ${exposition.issues[0]!.reason}`
            : null;
          st.samples = exposition.samples.length;
          st.parseIssues = exposition.issues.length;
          return { target: t.name, labels: t.labels, exposition };
        } catch (e) {
          const msg = e instanceof Error ? (e.name === "TimeoutError" ? "timeout" : e.message) : String(e);
          if (st.up || st.lastScrape === null)
            this.#opts.log?.warn("target down", { target: t.name, error: msg });
          st.up = false;
          st.lastError = msg;
          return { target: t.name, labels: t.labels, exposition: null };
        } finally {
          st.durationMs = performance.now() - started;
        }
      }),
    );
    const now = this.#clock();
    for (const t of this.#opts.targets) this.#status.get(t.name)!.lastScrape = now;
    this.store.append(now, results);
    this.rounds++;
  }

  /** Scrapes now and then every interval until close(). */
  start(): void {
    const tick = () => {
      if (this.#closed) return;
      const started = Date.now();
      this.scrapeOnce().finally(() => {
        if (this.#closed) return;
        const wait = Math.max(0, this.#opts.scrapeIntervalMs - (Date.now() - started));
        this.#timer = setTimeout(tick, wait);
      });
    };
    tick();
  }

  async meta(): Promise<DashboardMeta> {
    const names = new Set<string>();
    for (const p of PANELS) for (const s of ["", "_bucket", "_count"]) names.add(p.metric + s);
    const filterValues = {} as Record<FilterLabel, string[]>;
    for (const l of FILTER_LABELS) filterValues[l] = this.store.labelValues(l, names);
    return {
      mode: "local",
      now: this.#clock(),
      refreshMs: this.#opts.refreshMs ?? this.#opts.scrapeIntervalMs,
      windowS: this.#opts.windowS,
      panels: PANELS,
      filterValues,
      targets: [...this.#status.values()].map((s) => ({ ...s })),
    };
  }

  async panels(req: PanelsRequest): Promise<PanelsResponse> {
    const now = this.#clock();
    const interval = this.#opts.scrapeIntervalMs;
    // Buckets of whole scrape intervals keep the points evenly spaced; at one point per scrape or
    // more, every snapshot is its own point.
    const from = now - req.rangeS * 1000;
    let inRange = 0;
    for (let s = this.store.end() - 1; s >= this.store.start() && this.store.time(s) >= from; s--) inRange++;
    const raw = stepFor(req.rangeS * 1000, req.maxPoints);
    // 1 = every snapshot is a point (what pointsFor does while they fit in maxPoints).
    const stepMs = inRange <= req.maxPoints || raw <= interval ? 1 : interval * Math.ceil(raw / interval);
    const panels = PANELS.filter((p) => req.panelIds.length === 0 || req.panelIds.includes(p.id)).map((p) =>
      evaluatePanel(this.store, p, {
        from,
        maxPoints: req.maxPoints,
        windowMs: this.#opts.windowS * 1000,
        filters: req.filters,
        stepMs,
        ...(req.since !== undefined ? { since: req.since } : {}),
      }),
    );
    return {
      mode: "local",
      now,
      windowS: this.#opts.windowS,
      stepMs,
      incremental: req.since !== undefined,
      panels,
      errors: [],
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}
