// The transceivers of this cluster as the gateway sees them: static members (GATEWAY_TRANSCEIVERS)
// or members from heartbeats (REDIS_URL), each probed at /healthz every poll, so a dead process
// (connection refused, timeout) is out of routing within one poll plus the probe timeout. A member
// that was up and goes down is remembered as failed (when) so its calls can be answered for.
import type { TransceiverHeartbeat } from "../../shared/membership.ts";
import type { Logger } from "../common/log.ts";
import type { GatewayConfig } from "./config.ts";

export interface Member {
  id: number;
  url: URL;
  load: number;
  capacity: number;
  draining: boolean;
  healthy: boolean;
  seenAt: number;
}

/** Bound of the failure memory: one entry per transceiver id at most. */
const MAX_FAILED = 65_535;

export class Members {
  readonly byId = new Map<number, Member>();
  readonly #failedAt = new Map<number, number>();
  readonly #cfg: GatewayConfig;
  readonly #log: Logger;
  /** Called once per transition of a member from up to down. */
  onDown: (m: Member, why: string) => void = () => {};

  constructor(cfg: GatewayConfig, log: Logger) {
    this.#cfg = cfg;
    this.#log = log;
    for (const [id, url] of cfg.transceivers) this.byId.set(id, fresh(id, url, false));
  }

  usable(m: Member, now = Date.now()): boolean {
    return m.healthy && !m.draining && m.load < m.capacity && now - m.seenAt <= this.#cfg.staleMs;
  }

  live(m: Member, now = Date.now()): boolean {
    return m.healthy && now - m.seenAt <= this.#cfg.staleMs;
  }

  /** Members that may take a new session, least loaded (by fill ratio) first. */
  candidates(): Member[] {
    const now = Date.now();
    return [...this.byId.values()]
      .filter((m) => this.usable(m, now))
      .sort((a, b) => a.load / a.capacity - b.load / b.capacity || a.load - b.load || a.id - b.id);
  }

  /** A member stopped answering (probe failed, connection refused): no more routing to it. */
  markDown(m: Member, why: string): void {
    if (!m.healthy) return;
    m.healthy = false;
    this.#noteFailed(m.id);
    this.#log.warn("transceiver down", { transceiverId: m.id, reason: why });
    this.onDown(m, why);
  }

  #noteFailed(id: number): void {
    if (this.#failedAt.size >= MAX_FAILED && !this.#failedAt.has(id)) {
      const oldest = this.#failedAt.keys().next().value;
      if (oldest !== undefined) this.#failedAt.delete(oldest);
    }
    this.#failedAt.delete(id);
    this.#failedAt.set(id, Date.now());
  }

  /** When transceiver `id` last failed, if within the failure memory; else undefined. */
  failedAt(id: number): number | undefined {
    const t = this.#failedAt.get(id);
    if (t === undefined) return undefined;
    if (Date.now() - t > this.#cfg.failedMemoryMs) {
      this.#failedAt.delete(id);
      return undefined;
    }
    return t;
  }

  /** Refreshes every member: heartbeats first (Redis), then a /healthz probe of each. */
  async poll(): Promise<void> {
    if (this.#cfg.transceivers.size === 0 && this.#cfg.membership) {
      let beats: TransceiverHeartbeat[];
      try {
        beats = await this.#cfg.membership.list(this.#cfg.clusterId);
      } catch {
        // Redis unreachable: keep the last view; the probes below still judge liveness.
        return this.#probeAll();
      }
      this.#merge(beats);
    }
    await this.#probeAll();
  }

  #merge(beats: TransceiverHeartbeat[]): void {
    const seen = new Set<number>();
    for (const b of beats) {
      seen.add(b.transceiverId);
      let m = this.byId.get(b.transceiverId);
      if (!m || m.url.href !== new URL(b.apiUrl).href) {
        // A new address for the same id is a new process: the old one's calls are gone.
        if (m?.healthy) this.markDown(m, "replaced");
        m = fresh(b.transceiverId, b.apiUrl, true);
        this.byId.set(b.transceiverId, m);
      }
      m.load = b.load;
      m.capacity = b.capacity;
      m.draining = b.draining;
    }
    for (const [id, m] of this.byId) {
      if (seen.has(id)) continue;
      // The record expired: a member that was still up left without saying so.
      if (m.healthy) this.markDown(m, "heartbeat_expired");
      this.byId.delete(id);
    }
  }

  async #probeAll(): Promise<void> {
    const now = Date.now();
    await Promise.all(
      [...this.byId.values()].map(async (m) => {
        try {
          const res = await fetch(new URL("/healthz", m.url), {
            signal: AbortSignal.timeout(this.#cfg.healthTimeoutMs),
          });
          const j = (await res.json()) as { status?: string; load?: number; capacity?: number };
          if (!res.ok) return this.markDown(m, `healthz_${res.status}`);
          m.load = Number(j.load ?? 0);
          m.capacity = Number(j.capacity ?? 0);
          m.draining = j.status === "draining";
          if (!m.healthy) this.#log.info("transceiver up", { transceiverId: m.id });
          m.healthy = true;
          m.seenAt = now;
        } catch (e) {
          this.markDown(m, (e as Error).name === "TimeoutError" ? "healthz_timeout" : "unreachable");
        }
      }),
    );
  }
}

function fresh(id: number, url: string, healthy: boolean): Member {
  return { id, url: new URL(url), load: 0, capacity: 0, draining: false, healthy, seenAt: 0 };
}
