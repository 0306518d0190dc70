// A small Prometheus registry, runtime-neutral (the regional services and the edge isolate both use
// it). Label sets are bound once (`.with(...)`) and the returned handle is a plain object whose
// `inc`/`observe` allocate nothing, so the hot path can count every datagram.
// Names and labels are documented in docs/metrics.md; labels stay bounded (pop, cluster, region,
// reason, kind, direction), never per client or per session.

type Labels = Record<string, string>;

function labelKey(names: readonly string[], labels: Labels): string {
  return names.map((n) => `${n}="${escapeLabel(labels[n] ?? "")}"`).join(",");
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

/** HELP text escapes only backslash and newline (text format 0.0.4). */
function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** Sample values as Prometheus parses them (Go ParseFloat): "+Inf", "-Inf", "NaN", else the number. */
function formatValue(v: number): string {
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

export interface CounterHandle {
  inc(n?: number): void;
  readonly value: number;
}
export interface GaugeHandle {
  set(v: number): void;
  inc(n?: number): void;
  dec(n?: number): void;
  readonly value: number;
}
export interface HistogramHandle {
  /** Observe a value in the histogram's unit (seconds for latencies). */
  observe(v: number): void;
  readonly count: number;
  readonly sum: number;
}

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  render(out: string[]): void;
}

/** Max distinct label sets per family: a guard against unbounded labels. */
const MAX_SERIES = 2000;

class CounterSeries implements CounterHandle {
  value = 0;
  inc(n = 1): void {
    this.value += n;
  }
}
class GaugeSeries implements GaugeHandle {
  value = 0;
  set(v: number): void {
    this.value = v;
  }
  inc(n = 1): void {
    this.value += n;
  }
  dec(n = 1): void {
    this.value -= n;
  }
}
class HistogramSeries implements HistogramHandle {
  count = 0;
  sum = 0;
  readonly buckets: Float64Array;
  readonly bounds: readonly number[];
  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.buckets = new Float64Array(bounds.length);
  }
  observe(v: number): void {
    this.count++;
    this.sum += v;
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]!) {
        this.buckets[i]!++;
        return;
      }
    }
  }
}

export class Metric<H> implements Family {
  readonly #series = new Map<string, H>();
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge" | "histogram";
  readonly labelNames: readonly string[];
  readonly #make: () => H;
  readonly #renderSeries: (name: string, key: string, h: H, out: string[]) => void;
  constructor(
    name: string,
    help: string,
    type: "counter" | "gauge" | "histogram",
    labelNames: readonly string[],
    make: () => H,
    renderSeries: (name: string, key: string, h: H, out: string[]) => void,
  ) {
    this.name = name;
    this.help = help;
    this.type = type;
    this.labelNames = labelNames;
    this.#make = make;
    this.#renderSeries = renderSeries;
  }
  /** Binds a label set; call once and keep the handle. Too many label sets is a bug: it throws. */
  with(labels: Labels = {}): H {
    const h = this.tryWith(labels);
    if (h === undefined) throw new RangeError(`metric ${this.name}: too many label sets`);
    return h;
  }
  /**
   * Like `with`, but a new label set beyond the bound returns undefined (the sample is dropped):
   * for labels taken from requests, where a flood of new values must not fail the request.
   */
  tryWith(labels: Labels = {}): H | undefined {
    const key = labelKey(this.labelNames, labels);
    let h = this.#series.get(key);
    if (h === undefined) {
      if (this.#series.size >= MAX_SERIES) return undefined;
      h = this.#make();
      this.#series.set(key, h);
    }
    return h;
  }
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`);
    for (const [key, h] of this.#series) this.#renderSeries(this.name, key, h, out);
  }
}

const brace = (key: string, extra?: string): string => {
  const parts = [key, extra].filter((x) => x);
  return parts.length ? `{${parts.join(",")}}` : "";
};

/** Latency buckets in seconds: 0.1 ms to 10 s. */
export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1,
  2.5, 5, 10,
] as const;

export class Registry {
  readonly #families: Family[] = [];
  readonly #names = new Set<string>();

  #add<T extends Family>(f: T): T {
    if (this.#names.has(f.name)) throw new Error(`metric ${f.name} registered twice`);
    this.#names.add(f.name);
    this.#families.push(f);
    return f;
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Metric<CounterHandle> {
    return this.#add(
      new Metric<CounterHandle>(
        name,
        help,
        "counter",
        labelNames,
        () => new CounterSeries(),
        (n, k, h, out) => out.push(`${n}${brace(k)} ${formatValue(h.value)}`),
      ),
    );
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Metric<GaugeHandle> {
    return this.#add(
      new Metric<GaugeHandle>(
        name,
        help,
        "gauge",
        labelNames,
        () => new GaugeSeries(),
        (n, k, h, out) => out.push(`${n}${brace(k)} ${formatValue(h.value)}`),
      ),
    );
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    bounds: readonly number[] = LATENCY_BUCKETS,
  ): Metric<HistogramHandle> {
    return this.#add(
      new Metric<HistogramHandle>(
        name,
        help,
        "histogram",
        labelNames,
        () => new HistogramSeries(bounds),
        (n, k, h, out) => {
          const s = h as HistogramSeries;
          let cum = 0;
          for (let i = 0; i < s.bounds.length; i++) {
            cum += s.buckets[i]!;
            out.push(`${n}_bucket${brace(k, `le="${formatValue(s.bounds[i]!)}"`)} ${cum}`);
          }
          out.push(`${n}_bucket${brace(k, 'le="+Inf"')} ${s.count}`);
          out.push(`${n}_sum${brace(k)} ${formatValue(s.sum)}`);
          out.push(`${n}_count${brace(k)} ${s.count}`);
        },
      ),
    );
  }

  /** Prometheus text exposition format 0.0.4. */
  render(): string {
    const out: string[] = [];
    for (const f of this.#families) f.render(out);
    return `${out.join("\n")}\n`;
  }
}

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
