// Prometheus view of one worker: engine counters are copied into the registry at scrape time
// (the data path only increments typed arrays), RTT samples are observed as they come.

import { DATAGRAM_KIND_NAMES } from "../../../shared/stun/classify.ts";
import {
  type CounterHandle,
  type GaugeHandle,
  type HistogramHandle,
  Registry,
} from "../../common/metrics.ts";
import { RttKind } from "../core/rtt.ts";
import { type EngineStats, KINDS, type RttSink } from "../core/stats.ts";
import { DIRECTION_NAMES, DROP_NAMES } from "../core/types.ts";
import type { RedisOpsCounter } from "../store/redis.ts";

export interface EngineView {
  readonly stats: EngineStats;
  readonly table: { size: number; halfOpen: number };
}

/** Sets a counter to an absolute value (counters only go up: engine totals are monotonic). */
function setCounter(h: CounterHandle, v: number): void {
  const d = v - h.value;
  if (d > 0) h.inc(d);
}

export class RelayMetrics implements RttSink, RedisOpsCounter {
  readonly registry = new Registry();
  readonly #role: string;
  readonly #popLabel: string;
  readonly #packets: CounterHandle[] = [];
  readonly #bytes: CounterHandle[] = [];
  readonly #drops: CounterHandle[];
  readonly #active: GaugeHandle;
  readonly #halfOpen: GaugeHandle;
  readonly #created: CounterHandle;
  readonly #expiredHalf: CounterHandle;
  readonly #expiredAnswered: CounterHandle;
  readonly #closed: CounterHandle;
  readonly #validated: CounterHandle;
  readonly #restored: CounterHandle;
  readonly #lookups: Record<"hit" | "miss" | "error", CounterHandle>;
  readonly #fallback: CounterHandle;
  readonly #redisOps;
  readonly #rttFamilies;
  readonly #rtt = new Map<number, HistogramHandle>();
  sendErrors = 0;

  constructor(role: string, popId: number) {
    this.#role = role;
    this.#popLabel = String(popId);
    const r = this.registry;
    const role1 = { role };
    const packets = r.counter("gr_relay_packets_total", "Datagrams forwarded", ["role", "direction", "kind"]);
    const bytes = r.counter("gr_relay_bytes_total", "Payload bytes forwarded (without backbone header)", [
      "role",
      "direction",
      "kind",
    ]);
    for (let d = 0; d < 2; d++) {
      for (let k = 0; k < KINDS; k++) {
        const labels = { role, direction: DIRECTION_NAMES[d]!, kind: DATAGRAM_KIND_NAMES[k]! };
        this.#packets.push(packets.with(labels));
        this.#bytes.push(bytes.with(labels));
      }
    }
    this.#active = r.gauge("gr_relay_flows_active", "Flows in the table", ["role"]).with(role1);
    this.#halfOpen = r
      .gauge("gr_relay_flows_half_open", "Flows the transceiver has not validated yet", ["role"])
      .with(role1);
    this.#created = r.counter("gr_relay_flows_created_total", "Flows created", ["role"]).with(role1);
    const expired = r.counter("gr_relay_flows_expired_total", "Flows ended by a timer", ["role", "state"]);
    this.#expiredHalf = expired.with({ role, state: "half_open" });
    this.#expiredAnswered = expired.with({ role, state: "answered" });
    this.#closed = r
      .counter("gr_relay_flows_closed_total", "Flows ended by a flow-close frame", ["role"])
      .with(role1);
    this.#validated = r
      .counter(
        "gr_relay_flows_validated_total",
        "Half-open flows the transceiver validated (pathValidated)",
        ["role"],
      )
      .with(role1);
    const drops = r.counter("gr_relay_drops_total", "Datagrams dropped, by reason", ["role", "reason"]);
    this.#drops = DROP_NAMES.map((reason) => drops.with({ role, reason }));
    this.#restored = r
      .counter("gr_relay_flows_restored_total", "Flows restored from the flow store", ["role"])
      .with(role1);
    const lookups = r.counter("gr_relay_restore_lookups_total", "Flow store lookups by result", ["result"]);
    this.#lookups = {
      hit: lookups.with({ result: "hit" }),
      miss: lookups.with({ result: "miss" }),
      error: lookups.with({ result: "error" }),
    };
    this.#fallback = r
      .counter(
        "gr_relay_fallback_frames_total",
        "Frames sent to a POP's topology address (flow unknown here)",
        ["role"],
      )
      .with(role1);
    this.#redisOps = r.counter("gr_relay_redis_ops_total", "Redis operations by result", ["op", "result"]);
    this.#rttFamilies = [
      r.histogram(
        "gr_relay_backbone_rtt_seconds",
        "Client Binding request to the transceiver's response, seen at the POP",
        ["pop", "cluster"],
      ),
      r.histogram(
        "gr_relay_first_hop_rtt_seconds",
        "Transceiver's Binding request to the client's response, seen at the POP",
        ["pop", "cluster"],
      ),
    ] as const;
  }

  rtt(kind: number, clusterId: number, ms: number): void {
    const key = kind * 65536 + clusterId;
    let h = this.#rtt.get(key);
    if (h === undefined) {
      const fam = this.#rttFamilies[kind === RttKind.backbone ? 0 : 1];
      h = fam.with({ pop: this.#popLabel, cluster: String(clusterId) });
      this.#rtt.set(key, h);
    }
    h.observe(ms / 1000);
  }

  count(op: string, result: "ok" | "error"): void {
    this.#redisOps.with({ op, result }).inc();
  }

  /** Copies the engine's counters in; then `registry.render()`. */
  sync(e: EngineView): void {
    const s = e.stats;
    for (let i = 0; i < this.#packets.length; i++) {
      setCounter(this.#packets[i]!, s.packets[i]!);
      setCounter(this.#bytes[i]!, s.bytes[i]!);
    }
    for (let i = 0; i < this.#drops.length; i++) {
      const extra = i === DROP_NAMES.indexOf("send_failed") ? this.sendErrors : 0;
      setCounter(this.#drops[i]!, s.drops[i]! + extra);
    }
    this.#active.set(e.table.size);
    this.#halfOpen.set(e.table.halfOpen);
    setCounter(this.#created, s.flowsCreated);
    setCounter(this.#expiredHalf, s.expiredHalfOpen);
    setCounter(this.#expiredAnswered, s.expiredIdle + s.expiredLifetime);
    setCounter(this.#closed, s.flowsClosed);
    setCounter(this.#validated, s.flowsValidated);
    setCounter(this.#restored, s.flowsRestored);
    setCounter(this.#lookups.hit, s.lookupHits);
    setCounter(this.#lookups.miss, s.lookupMisses);
    setCounter(this.#lookups.error, s.lookupErrors);
    setCounter(this.#fallback, s.fallbackToPop);
    void this.#role;
  }
}

/** Sums the samples of several workers' expositions (same families, same label sets). */
export function mergeExpositions(texts: readonly string[]): string {
  const meta: string[] = [];
  const seenMeta = new Set<string>();
  const order: string[] = [];
  const values = new Map<string, number>();
  const byFamily = new Map<string, string[]>();
  let family = "";
  for (const text of texts) {
    for (const line of text.split("\n")) {
      if (line === "") continue;
      if (line.startsWith("#")) {
        const name = line.split(" ")[2] ?? "";
        family = name;
        if (!seenMeta.has(line)) {
          seenMeta.add(line);
          meta.push(line);
          if (!byFamily.has(name)) byFamily.set(name, []);
        }
        continue;
      }
      const sp = line.lastIndexOf(" ");
      const key = line.slice(0, sp);
      const v = Number(line.slice(sp + 1));
      if (!values.has(key)) {
        order.push(key);
        const list = byFamily.get(family);
        if (list) list.push(key);
      }
      values.set(key, (values.get(key) ?? 0) + (Number.isFinite(v) ? v : 0));
    }
  }
  const out: string[] = [];
  const emitted = new Set<string>();
  for (const m of meta) {
    out.push(m);
    const name = m.split(" ")[2] ?? "";
    if (m.startsWith("# TYPE") && !emitted.has(name)) {
      emitted.add(name);
      for (const key of byFamily.get(name) ?? []) out.push(`${key} ${values.get(key)}`);
    }
  }
  void order;
  return `${out.join("\n")}\n`;
}
