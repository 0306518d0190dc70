// The edge's view of shared/metrics: label values come from requests, so series are bound per
// observation and a new label set beyond the registry's bound is dropped, never thrown. Latency
// buckets suit a signalling round trip (5 ms to 10 s).
import {
  type CounterHandle,
  type HistogramHandle,
  type Metric,
  PROMETHEUS_CONTENT_TYPE,
  Registry,
} from "../../shared/metrics/registry.ts";

export { PROMETHEUS_CONTENT_TYPE };
export const EDGE_LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels = Record<string, string>;

export class Counter {
  readonly #m: Metric<CounterHandle>;
  constructor(m: Metric<CounterHandle>) {
    this.#m = m;
  }
  inc(labels: Labels, n = 1): void {
    this.#m.tryWith(labels)?.inc(n);
  }
}

export class Histogram {
  readonly #m: Metric<HistogramHandle>;
  constructor(m: Metric<HistogramHandle>) {
    this.#m = m;
  }
  observe(labels: Labels, v: number): void {
    this.#m.tryWith(labels)?.observe(v);
  }
}

export class PromRegistry {
  readonly #r = new Registry();
  counter(name: string, help: string, labels: readonly string[]): Counter {
    return new Counter(this.#r.counter(name, help, labels));
  }
  histogram(name: string, help: string, labels: readonly string[], bounds = EDGE_LATENCY_BUCKETS): Histogram {
    return new Histogram(this.#r.histogram(name, help, labels, bounds));
  }
  render(): string {
    return this.#r.render();
  }
}
