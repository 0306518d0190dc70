// The flow mirror in Redis: SET key value PX ttl; GET; DEL. Values carry the creation time (wall
// clock) so a restored flow keeps its age and maximum lifetime.
import type { Redis } from "ioredis";
import type { FlowRecord } from "../core/events.ts";
import { decodeFlowValue, encodeFlowValue, type FlowStore, flowKey } from "./flow-store.ts";
import type { RedisOpsCounter } from "./redis.ts";

export class RedisFlowStore implements FlowStore {
  readonly #redis: Redis;
  readonly #ops: RedisOpsCounter | undefined;
  readonly #clock: () => number;
  readonly #owned: boolean;

  /** `owned`: close() also closes the connection. */
  constructor(redis: Redis, ops?: RedisOpsCounter, clock: () => number = Date.now, owned = true) {
    this.#redis = redis;
    this.#ops = ops;
    this.#clock = clock;
    this.#owned = owned;
  }

  async #run<T>(op: string, f: () => Promise<T>): Promise<T> {
    try {
      const r = await f();
      this.#ops?.count(op, "ok");
      return r;
    } catch (e) {
      this.#ops?.count(op, "error");
      throw e;
    }
  }

  async put(address: string, port: number, record: FlowRecord, ttlMs: number): Promise<void> {
    const value = encodeFlowValue(record, this.#clock());
    await this.#run("set", () =>
      this.#redis.set(flowKey(address, port), value, "PX", Math.max(1, Math.round(ttlMs))),
    );
  }

  async get(address: string, port: number): Promise<FlowRecord | null> {
    const v = await this.#run("get", () => this.#redis.get(flowKey(address, port)));
    return v === null ? null : decodeFlowValue(v, this.#clock());
  }

  async delete(address: string, port: number): Promise<void> {
    await this.#run("del", () => this.#redis.del(flowKey(address, port)));
  }

  async close(): Promise<void> {
    if (this.#owned) this.#redis.disconnect();
  }
}
