// A bounded ring of scrape snapshots. One snapshot per scrape round holds every target's samples at
// one timestamp. Counters (and histogram buckets, counts, sums) are stored as a reset-corrected
// running total, so the increase between any two retained snapshots is one subtraction, exactly
// what PromQL's increase() computes from the samples in between (without its edge extrapolation,
// which scales every bucket alike and so never changes a quantile). Gauges are stored as read.
// Pure: time comes in as an argument.
import { type Exposition, sampleKind } from "./exposition.ts";
import { upsert } from "./map.ts";

export interface TargetScrape {
  /** Target name (its `job` label). */
  target: string;
  /** Labels added to every series of the target; the exporter's own labels win (honor_labels). */
  labels: Readonly<Record<string, string>>;
  /** null when the scrape failed (target down). */
  exposition: Exposition | null;
}

export interface Series {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly monotonic: boolean;
  /** Per slot: running total (monotonic) or value (gauge); NaN when unknown. */
  readonly values: Float64Array;
  /** Last raw value read (monotonic series: to detect resets). */
  raw: number;
  total: number;
  lastSeq: number;
}

interface TargetState {
  everUp: boolean;
  up: Uint8Array;
}

export function seriesKey(name: string, labels: Readonly<Record<string, string>>): string {
  const keys = Object.keys(labels).sort();
  let k = name;
  for (const l of keys) k += `\u0000${l}\u0001${labels[l]}`;
  return k;
}

export class SnapshotStore {
  readonly capacity: number;
  readonly #times: Float64Array;
  #next = 0; // sequence number of the next snapshot
  readonly #series = new Map<string, Series>();
  readonly #byName = new Map<string, Set<Series>>();
  readonly #targets = new Map<string, TargetState>();

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 2) throw new RangeError("capacity must be an integer >= 2");
    this.capacity = capacity;
    this.#times = new Float64Array(capacity);
  }

  /** Sequence number of the oldest retained snapshot (== end() when empty). */
  start(): number {
    return Math.max(0, this.#next - this.capacity);
  }
  /** One past the newest snapshot's sequence number. */
  end(): number {
    return this.#next;
  }
  time(seq: number): number {
    return this.#times[seq % this.capacity]!;
  }
  /** A series' stored value at a retained snapshot (NaN when unknown). */
  value(s: Series, seq: number): number {
    return s.values[seq % this.capacity]!;
  }
  /** Whether the target answered the scrape of that snapshot. */
  targetUp(target: string, seq: number): boolean {
    return this.#targets.get(target)?.up[seq % this.capacity] === 1;
  }
  targetNames(): string[] {
    return [...this.#targets.keys()];
  }
  /** Every retained series with this exact sample name. */
  byName(name: string): Iterable<Series> {
    return this.#byName.get(name) ?? [];
  }
  /** Distinct values of a label across retained series (excluding ""). */
  labelValues(label: string, names?: ReadonlySet<string>): string[] {
    const out = new Set<string>();
    for (const s of this.#series.values()) {
      if (names !== undefined && !names.has(s.name)) continue;
      const v = s.labels[label];
      if (v !== undefined && v !== "") out.add(v);
    }
    return [...out].sort();
  }
  get seriesCount(): number {
    return this.#series.size;
  }

  /** Appends a snapshot taken at time `t` (ms). Times must not go backwards. */
  append(t: number, scrapes: readonly TargetScrape[]): number {
    const seq = this.#next;
    if (seq > 0 && t < this.time(seq - 1)) t = this.time(seq - 1);
    const slot = seq % this.capacity;
    this.#times[slot] = t;
    for (const sc of scrapes) {
      let st = this.#targets.get(sc.target);
      if (st === undefined) {
        st = { everUp: false, up: new Uint8Array(this.capacity) };
        this.#targets.set(sc.target, st);
      }
      st.up[slot] = sc.exposition === null ? 0 : 1;
      if (sc.exposition !== null) {
        this.#ingest(seq, slot, sc, st.everUp);
        st.everUp = true;
      }
    }
    for (const [name, st] of this.#targets) if (!scrapes.some((s) => s.target === name)) st.up[slot] = 0;
    // Series not written this round: counters carry their total; gauges become unknown. Series
    // unseen for a whole ring are forgotten.
    for (const [key, s] of this.#series) {
      if (s.lastSeq === seq) continue;
      if (seq - s.lastSeq >= this.capacity) {
        this.#series.delete(key);
        this.#byName.get(s.name)?.delete(s);
        continue;
      }
      s.values[slot] = s.monotonic ? s.total : Number.NaN;
    }
    this.#next = seq + 1;
    return seq;
  }

  #ingest(seq: number, slot: number, sc: TargetScrape, targetSeenBefore: boolean): void {
    const { samples, types } = sc.exposition!;
    const kinds = new Map<string, boolean>();
    for (const sample of samples) {
      if (Number.isNaN(sample.value)) continue;
      const labels = { ...sc.labels, ...sample.labels };
      const key = seriesKey(sample.name, labels);
      let s = this.#series.get(key);
      if (s === undefined) {
        let monotonic = kinds.get(sample.name);
        if (monotonic === undefined) {
          monotonic = sampleKind(sample.name, types).monotonic;
          kinds.set(sample.name, monotonic);
        }
        s = {
          name: sample.name,
          labels,
          monotonic,
          values: new Float64Array(this.capacity).fill(Number.NaN),
          raw: sample.value,
          // A target's first scrape is the baseline; a series that appears later in a target we
          // already knew started from zero since that scrape, so all of its value is new.
          total: monotonic && targetSeenBefore ? sample.value : 0,
          lastSeq: seq,
        };
        this.#series.set(key, s);
        upsert(this.#byName, sample.name, () => new Set<Series>()).add(s);
      } else if (s.monotonic) {
        if (s.lastSeq === seq) continue; // duplicate line in one scrape: keep the first
        s.total += sample.value >= s.raw ? sample.value - s.raw : sample.value;
        s.raw = sample.value;
      }
      s.lastSeq = seq;
      s.values[slot] = s.monotonic ? s.total : sample.value;
    }
  }
}
