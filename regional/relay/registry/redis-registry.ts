// Transceivers of one cluster from their heartbeats in Redis (shared/membership.ts): SCAN the
// cluster's key pattern and MGET the records on each refresh. When Redis is unreachable the last
// known view stays in force (a stale route beats dropping every live session).
import type { Redis } from "ioredis";
import { parseHeartbeat, transceiverKeyPattern } from "../../../shared/membership.ts";
import type { RedisOpsCounter } from "../store/redis.ts";
import { PublishedRegistry, type TransceiverRegistry } from "./registry.ts";

export class RedisRegistry extends PublishedRegistry implements TransceiverRegistry {
  readonly #redis: Redis;
  readonly #clusterId: number;
  readonly #ops: RedisOpsCounter | undefined;
  readonly #owned: boolean;
  #refreshing: Promise<void> | null = null;

  constructor(redis: Redis, clusterId: number, ops?: RedisOpsCounter, owned = true) {
    super();
    this.#redis = redis;
    this.#clusterId = clusterId;
    this.#ops = ops;
    this.#owned = owned;
  }

  /** One refresh at a time; rejects (view unchanged) when Redis fails. */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#load().finally(() => {
      this.#refreshing = null;
    });
    return this.#refreshing;
  }

  async #load(): Promise<void> {
    const keys: string[] = [];
    try {
      let cursor = "0";
      do {
        const [next, batch] = await this.#redis.scan(
          cursor,
          "MATCH",
          transceiverKeyPattern(this.#clusterId),
          "COUNT",
          500,
        );
        cursor = next;
        keys.push(...batch);
        if (keys.length > 65_535) break;
      } while (cursor !== "0");
      this.#ops?.count("scan", "ok");
    } catch (e) {
      this.#ops?.count("scan", "error");
      throw e;
    }
    const next = new Map<number, string>();
    if (keys.length > 0) {
      let values: (string | null)[];
      try {
        values = await this.#redis.mget(keys);
        this.#ops?.count("mget", "ok");
      } catch (e) {
        this.#ops?.count("mget", "error");
        throw e;
      }
      for (const v of values) {
        const hb = v === null ? null : parseHeartbeat(v);
        if (hb !== null && hb.clusterId === this.#clusterId) next.set(hb.transceiverId, hb.backbone);
      }
    }
    this.publish(next);
  }

  async close(): Promise<void> {
    this.dropListeners();
    if (this.#owned) this.#redis.disconnect();
  }
}
