// Redis connection shared by the relay's Redis-backed pieces: no offline queue (a command while
// disconnected fails at once, so forwarding never waits), short command timeout, capped
// exponential reconnect backoff, every operation counted by result.
import { Redis } from "ioredis";

export interface RedisOpsCounter {
  count(op: string, result: "ok" | "error"): void;
}

export interface RelayRedisOptions {
  url: string;
  commandTimeoutMs?: number;
  onError?: (err: Error) => void;
}

export function connectRedis(o: RelayRedisOptions): Redis {
  const redis = new Redis(o.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: o.commandTimeoutMs ?? 500,
    enableAutoPipelining: true,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 7), 5_000),
  });
  // ioredis emits "error" on every failed reconnect; the caller rate-limits its logging.
  redis.on("error", (err: Error) => o.onError?.(err));
  return redis;
}

/** Resolves true once the connection is ready, false after `ms` (the relay starts anyway). */
export function waitReady(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off("ready", onReady);
      resolve(false);
    }, ms);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once("ready", onReady);
  });
}
