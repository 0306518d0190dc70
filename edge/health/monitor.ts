// Cluster health at the edge: three layers, cheapest first.
// 1. This isolate's HealthBook (memory, no I/O).
// 2. The colo's Cache API: probe results and passive marks shared by every isolate in the same
//    Cloudflare location, read only when the isolate's own view has gone stale.
// 3. Active probes of /healthz, started in the background (waitUntil) when both are stale, one
//    batch at a time per isolate; a request never waits for a probe.
// docs/edge.md explains why the Cache API and not KV or a Durable Object.
import type { SigningKeys } from "../../shared/signing/request.ts";
import type { ClusterSpec, Topology } from "../../shared/topology/schema.ts";
import type { ExecutionContextLike } from "../platform.ts";
import { type HealthBook, type HealthEntry, type HealthView, parseHealthEntry } from "./book.ts";
import { probeCluster } from "./probe.ts";

export interface HealthDeps {
  cache: Cache | undefined;
  /** Origin the cache keys live under (the worker's own host, so keys stay in its zone). */
  cacheOrigin: string;
  key: SigningKeys;
  ctx: ExecutionContextLike | undefined;
  probeTimeoutMs: number;
  now: () => number;
  onError?: (msg: string, e: unknown) => void;
}

export class HealthMonitor {
  readonly book: HealthBook;
  #probing: Promise<void> | null = null;
  #hydratedAtMs = Number.NEGATIVE_INFINITY;
  constructor(book: HealthBook) {
    this.book = book;
  }

  view(c: ClusterSpec, nowMs: number): HealthView {
    return this.book.view(c.id, c.capacity, nowMs);
  }

  #key(d: HealthDeps, id: number): string {
    return `${d.cacheOrigin}/__gr/health/v1/cluster/${id}`;
  }

  #stale(t: Topology, nowMs: number): ClusterSpec[] {
    return t.clusters.filter((c) => this.book.needsProbe(c.id, nowMs));
  }

  /** Brings the view up to date as far as is cheap; starts background probes if still stale. */
  async prepare(t: Topology, d: HealthDeps): Promise<void> {
    const now = d.now();
    if (this.#stale(t, now).length === 0) return;
    if (d.cache && now - this.#hydratedAtMs >= this.book.timing.freshMs / 2) {
      this.#hydratedAtMs = now;
      await this.#hydrate(t, d);
    }
    if (this.#stale(t, d.now()).length > 0 && !this.#probing) {
      const run = this.probe(t, d).finally(() => {
        this.#probing = null;
      });
      this.#probing = run;
      d.ctx?.waitUntil(run);
    }
  }

  /** Probes every stale cluster now (or all with `all`) and shares the results. */
  async probe(t: Topology, d: HealthDeps, all = false): Promise<void> {
    const targets = all ? t.clusters : this.#stale(t, d.now());
    await Promise.all(
      targets.map(async (c) => {
        const rec = await probeCluster(c, d.key, d.probeTimeoutMs, d.now);
        this.book.recordProbe(c.id, rec);
        await this.#store(c.id, d);
      }),
    );
  }

  async #hydrate(t: Topology, d: HealthDeps): Promise<void> {
    await Promise.all(
      t.clusters.map(async (c) => {
        try {
          const hit = await d.cache!.match(this.#key(d, c.id));
          if (!hit) return;
          const e = parseHealthEntry(await hit.json());
          if (e) this.book.merge(c.id, e);
        } catch (e) {
          d.onError?.("health cache read failed", e);
        }
      }),
    );
  }

  async #store(id: number, d: HealthDeps): Promise<void> {
    if (!d.cache) return;
    const e: HealthEntry | undefined = this.book.entry(id);
    if (!e) return;
    const maxAgeS = Math.ceil(this.book.timing.maxAgeMs / 1000);
    try {
      await d.cache.put(
        this.#key(d, id),
        new Response(JSON.stringify(e), {
          headers: { "content-type": "application/json", "cache-control": `max-age=${maxAgeS}` },
        }),
      );
    } catch (err) {
      d.onError?.("health cache write failed", err);
    }
  }

  /** Passive marks from real traffic, shared with the colo in the background. */
  noteFailure(c: ClusterSpec, reason: string, d: HealthDeps): void {
    this.book.recordFailure(c.id, d.now(), reason);
    d.ctx?.waitUntil(this.#store(c.id, d));
  }

  noteFull(c: ClusterSpec, retryAfterS: number, d: HealthDeps): void {
    this.book.recordFull(c.id, d.now(), retryAfterS);
    d.ctx?.waitUntil(this.#store(c.id, d));
  }

  noteSuccess(c: ClusterSpec, d: HealthDeps): void {
    const before = this.book.entry(c.id)?.passive;
    this.book.recordSuccess(c.id, d.now());
    if (before && before.state !== "ok") d.ctx?.waitUntil(this.#store(c.id, d));
  }
}
