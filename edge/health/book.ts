// What this isolate believes about each cluster's health. Pure: time comes in as an argument.
// Two sources, each stamped with when it was learned, newest wins:
// - active probes of {signallingUrl}/healthz (status, load, capacity);
// - passive marks from real traffic: a cluster that refused, timed out or failed is "down" for
//   passiveDownMs; one that answered 503 is "full" for its Retry-After; a success clears both.
// Entries serialise to JSON so the Cache API can share them with the colo's other isolates.

export type HealthStatus = "up" | "unknown" | "draining" | "full" | "down";

export interface ProbeRecord {
  ok: boolean;
  /** What the cluster said ("ok" | "draining"), or why the probe failed ("timeout", "http_500"). */
  status: string;
  load: number;
  capacity: number;
  /** When the probe was sent. */
  atMs: number;
}

export interface PassiveRecord {
  state: "ok" | "down" | "full";
  untilMs: number;
  atMs: number;
  reason: string;
}

export interface HealthEntry {
  probe: ProbeRecord | null;
  passive: PassiveRecord | null;
}

export interface HealthView {
  status: HealthStatus;
  /** Sessions reported by the last probe (0 when unknown). */
  load: number;
  capacity: number;
  /** Where the status came from: "probe", "passive:<reason>", or "none". */
  source: string;
  checkedAtMs: number | null;
  /** When a passive mark lapses. */
  untilMs?: number;
}

export interface HealthTiming {
  /** A probe younger than this is fresh: no new probe is started. */
  freshMs: number;
  /** A probe older than this is ignored (status "unknown"). */
  maxAgeMs: number;
  /** How long a passive failure keeps a cluster out of the candidates. */
  passiveDownMs: number;
}

export const DEFAULT_HEALTH_TIMING: HealthTiming = {
  freshMs: 10_000,
  maxAgeMs: 60_000,
  passiveDownMs: 15_000,
};

export class HealthBook {
  readonly #entries = new Map<number, HealthEntry>();
  readonly timing: HealthTiming;
  constructor(timing: HealthTiming = DEFAULT_HEALTH_TIMING) {
    this.timing = timing;
  }

  #entry(id: number): HealthEntry {
    let e = this.#entries.get(id);
    if (!e) {
      e = { probe: null, passive: null };
      this.#entries.set(id, e);
    }
    return e;
  }

  entry(id: number): HealthEntry | undefined {
    return this.#entries.get(id);
  }

  recordProbe(id: number, probe: ProbeRecord): void {
    const e = this.#entry(id);
    if (!e.probe || probe.atMs >= e.probe.atMs) e.probe = probe;
  }

  recordFailure(id: number, nowMs: number, reason: string): void {
    this.#passive(id, { state: "down", untilMs: nowMs + this.timing.passiveDownMs, atMs: nowMs, reason });
  }

  recordFull(id: number, nowMs: number, retryAfterS: number): void {
    this.#passive(id, { state: "full", untilMs: nowMs + retryAfterS * 1000, atMs: nowMs, reason: "full" });
  }

  recordSuccess(id: number, nowMs: number): void {
    const p = this.#entries.get(id)?.passive;
    if (p && p.state !== "ok") this.#passive(id, { state: "ok", untilMs: 0, atMs: nowMs, reason: "ok" });
  }

  #passive(id: number, rec: PassiveRecord): void {
    const e = this.#entry(id);
    if (!e.passive || rec.atMs >= e.passive.atMs) e.passive = rec;
  }

  /** Folds in an entry learned elsewhere (another isolate, via the cache); newest facts win. */
  merge(id: number, other: HealthEntry): void {
    if (other.probe) this.recordProbe(id, other.probe);
    if (other.passive) this.#passive(id, other.passive);
  }

  needsProbe(id: number, nowMs: number): boolean {
    const p = this.#entries.get(id)?.probe;
    return !p || nowMs - p.atMs >= this.timing.freshMs;
  }

  view(id: number, topologyCapacity: number, nowMs: number): HealthView {
    const e = this.#entries.get(id);
    const probe = e?.probe && nowMs - e.probe.atMs <= this.timing.maxAgeMs ? e.probe : null;
    const passive = e?.passive && e.passive.state !== "ok" && e.passive.untilMs > nowMs ? e.passive : null;
    const probeView = probe ? fromProbe(probe, topologyCapacity) : null;
    // "full" (a 503's Retry-After) stands until it lapses: the cluster said so. "down" stands
    // unless a probe sent after the failure found the cluster healthy again.
    const cleared =
      passive?.state === "down" && probe && probe.atMs > passive.atMs && probeView?.status === "up";
    if (passive && !cleared) {
      return {
        status: passive.state === "full" ? "full" : "down",
        load: probeView?.load ?? 0,
        capacity: probeView?.capacity ?? topologyCapacity,
        source: `passive:${passive.reason}`,
        checkedAtMs: passive.atMs,
        untilMs: passive.untilMs,
      };
    }
    if (probeView) return probeView;
    return { status: "unknown", load: 0, capacity: topologyCapacity, source: "none", checkedAtMs: null };
  }
}

function fromProbe(p: ProbeRecord, topologyCapacity: number): HealthView {
  const capacity = p.capacity > 0 ? p.capacity : topologyCapacity;
  const base = { load: p.load, capacity, source: "probe", checkedAtMs: p.atMs };
  if (!p.ok) return { ...base, status: "down" };
  if (p.status === "draining") return { ...base, status: "draining" };
  if (p.load >= capacity) return { ...base, status: "full" };
  return { ...base, status: "up" };
}

/** Parses an entry read back from the cache; null if it is not one. */
export function parseHealthEntry(raw: unknown): HealthEntry | null {
  if (typeof raw !== "object" || raw === null) return null;
  const o = raw as Record<string, unknown>;
  const probe = o.probe as ProbeRecord | null | undefined;
  const passive = o.passive as PassiveRecord | null | undefined;
  const okProbe =
    probe == null ||
    (typeof probe.ok === "boolean" &&
      typeof probe.status === "string" &&
      Number.isFinite(probe.load) &&
      Number.isFinite(probe.capacity) &&
      Number.isFinite(probe.atMs));
  const okPassive =
    passive == null ||
    ((passive.state === "ok" || passive.state === "down" || passive.state === "full") &&
      Number.isFinite(passive.untilMs) &&
      Number.isFinite(passive.atMs) &&
      typeof passive.reason === "string");
  if (!okProbe || !okPassive) return null;
  return { probe: probe ?? null, passive: passive ?? null };
}
