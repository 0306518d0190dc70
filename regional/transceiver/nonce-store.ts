// Nonces shared by the gateway replicas of one cluster (they share the "gateway:<id>" identity):
// a nonce is claimed with SET NX PX in Redis, so a request accepted by one replica is refused by
// the others inside the replay window. Signalling path only, never the packet path. A failing
// Redis is the caller's decision (RequestVerifier skips the claim and counts it).
import { Redis } from "ioredis";
import type { SharedNonces } from "./signing.ts";

export class RedisNonces implements SharedNonces {
  readonly redis: Redis;
  constructor(url: string) {
    // No offline queue: a claim must not wait for a reconnect while a request is pending.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: 500 });
    this.redis.on("error", () => {});
  }
  async claim(nonce: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(`gr:nonce:${nonce}`, "1", "PX", ttlMs, "NX")) === "OK";
  }
  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
