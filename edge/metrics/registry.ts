// A minimal Prometheus registry for the edge isolate (counters and histograms, bounded label
// sets). The regional services have their own in regional/common/metrics.ts; the edge does not
// import regional code (imports run edge -> shared <- regional).

const MAX_SERIES = 1000;
export const EDGE_LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10];

const esc = (v: string): string => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

abstract class Family {
  readonly name: string;
  readonly help: string;
  readonly labels: readonly string[];
  constructor(name: string, help: string, labels: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labels = labels;
  }
  protected key(values: Record<string, string>): string {
    return this.labels.map((l) => `${l}="${esc(values[l] ?? "")}"`).join(",");
  }
  abstract render(out: string[]): void;
}

export class Counter extends Family {
  readonly #series = new Map<string, number>();
  inc(labels: Record<string, string>, n = 1): void {
    const k = this.key(labels);
    const v = this.#series.get(k);
    if (v === undefined && this.#series.size >= MAX_SERIES) return;
    this.#series.set(k, (v ?? 0) + n);
  }
  get(labels: Record<string, string>): number {
    return this.#series.get(this.key(labels)) ?? 0;
  }
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`);
    for (const [k, v] of this.#series) out.push(`${this.name}${k ? `{${k}}` : ""} ${v}`);
  }
}

export class Histogram extends Family {
  readonly bounds: readonly number[];
  readonly #series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(name: string, help: string, labels: readonly string[], bounds: readonly number[]) {
    super(name, help, labels);
    this.bounds = bounds;
  }
  observe(labels: Record<string, string>, v: number): void {
    const k = this.key(labels);
    let s = this.#series.get(k);
    if (!s) {
      if (this.#series.size >= MAX_SERIES) return;
      s = { counts: this.bounds.map(() => 0), sum: 0, count: 0 };
      this.#series.set(k, s);
    }
    s.count++;
    s.sum += v;
    const i = this.bounds.findIndex((b) => v <= b);
    if (i >= 0) s.counts[i]!++;
  }
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const [k, s] of this.#series) {
      const pre = k ? `${k},` : "";
      let cum = 0;
      this.bounds.forEach((b, i) => {
        cum += s.counts[i]!;
        out.push(`${this.name}_bucket{${pre}le="${b}"} ${cum}`);
      });
      out.push(`${this.name}_bucket{${pre}le="+Inf"} ${s.count}`);
      out.push(`${this.name}_sum${k ? `{${k}}` : ""} ${s.sum}`);
      out.push(`${this.name}_count${k ? `{${k}}` : ""} ${s.count}`);
    }
  }
}

export class PromRegistry {
  readonly #families: Family[] = [];
  counter(name: string, help: string, labels: readonly string[]): Counter {
    const f = new Counter(name, help, labels);
    this.#families.push(f);
    return f;
  }
  histogram(name: string, help: string, labels: readonly string[], bounds = EDGE_LATENCY_BUCKETS): Histogram {
    const f = new Histogram(name, help, labels, bounds);
    this.#families.push(f);
    return f;
  }
  render(): string {
    const out: string[] = [];
    for (const f of this.#families) f.render(out);
    return `${out.join("\n")}\n`;
  }
}

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
