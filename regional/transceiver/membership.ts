// Cluster membership stores (shared/membership.ts records): Redis with a TTL in production, an
// in-memory map when everything runs embedded in one process. The gateway and the cluster
// relay's registry read the same records.
import { Redis } from "ioredis";
import {
  HEARTBEAT_TTL_MS,
  parseHeartbeat,
  type TransceiverHeartbeat,
  transceiverKey,
  transceiverKeyPattern,
} from "../../shared/membership.ts";

export interface MembershipStore {
  publish(hb: TransceiverHeartbeat, ttlMs?: number): Promise<void>;
  remove(clusterId: number, transceiverId: number): Promise<void>;
  /** Live records of one cluster. */
  list(clusterId: number): Promise<TransceiverHeartbeat[]>;
  close(): Promise<void>;
}

export class MemoryMembership implements MembershipStore {
  readonly #records = new Map<string, { hb: TransceiverHeartbeat; expiresAt: number }>();
  readonly #now: () => number;
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }
  async publish(hb: TransceiverHeartbeat, ttlMs = HEARTBEAT_TTL_MS): Promise<void> {
    this.#records.set(transceiverKey(hb.clusterId, hb.transceiverId), {
      hb: { ...hb },
      expiresAt: this.#now() + ttlMs,
    });
  }
  async remove(clusterId: number, transceiverId: number): Promise<void> {
    this.#records.delete(transceiverKey(clusterId, transceiverId));
  }
  async list(clusterId: number): Promise<TransceiverHeartbeat[]> {
    const now = this.#now();
    const out: TransceiverHeartbeat[] = [];
    for (const [k, r] of this.#records) {
      if (r.expiresAt <= now) this.#records.delete(k);
      else if (r.hb.clusterId === clusterId) out.push({ ...r.hb });
    }
    return out;
  }
  async close(): Promise<void> {}
}

export class RedisMembership implements MembershipStore {
  readonly redis: Redis;
  constructor(url: string) {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.redis.on("error", () => {});
  }
  async publish(hb: TransceiverHeartbeat, ttlMs = HEARTBEAT_TTL_MS): Promise<void> {
    await this.redis.set(transceiverKey(hb.clusterId, hb.transceiverId), JSON.stringify(hb), "PX", ttlMs);
  }
  async remove(clusterId: number, transceiverId: number): Promise<void> {
    await this.redis.del(transceiverKey(clusterId, transceiverId));
  }
  async list(clusterId: number): Promise<TransceiverHeartbeat[]> {
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await this.redis.scan(
        cursor,
        "MATCH",
        transceiverKeyPattern(clusterId),
        "COUNT",
        200,
      );
      cursor = next;
      keys.push(...batch);
    } while (cursor !== "0");
    if (keys.length === 0) return [];
    const values = await this.redis.mget(...keys);
    const out: TransceiverHeartbeat[] = [];
    for (const v of values) {
      const hb = v === null ? null : parseHeartbeat(v);
      if (hb && hb.clusterId === clusterId) out.push(hb);
    }
    return out;
  }
  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
