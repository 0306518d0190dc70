// One contract suite for each small interface, run against every implementation:
// FlowStore (memory, Redis) and TransceiverRegistry (memory heartbeats, Redis heartbeats).
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisRegistry } from "../../regional/relay/registry/redis-registry.ts";
import {
  MemoryRegistry,
  parseStaticRegistry,
  type TransceiverRegistry,
} from "../../regional/relay/registry/registry.ts";
import { type FlowStore, MemoryFlowStore } from "../../regional/relay/store/flow-store.ts";
import { connectRedis } from "../../regional/relay/store/redis.ts";
import { RedisFlowStore } from "../../regional/relay/store/redis-flow-store.ts";
import { type TransceiverHeartbeat, transceiverKey } from "../../shared/membership.ts";
import { type RedisHandle, startRedis } from "../support/redis.ts";
import { until } from "../support/wait.ts";

let server: RedisHandle;
let admin: Redis;
beforeAll(async () => {
  server = await startRedis();
  admin = new Redis(server.url);
});
afterAll(async () => {
  admin.disconnect();
  await server.stop();
});

interface StoreCase {
  name: string;
  make(clock: () => number): FlowStore;
}
const stores: StoreCase[] = [
  { name: "memory", make: (clock) => new MemoryFlowStore(clock) },
  { name: "redis", make: (clock) => new RedisFlowStore(connectRedis({ url: server.url }), undefined, clock) },
];

describe.each(stores)("FlowStore contract: $name", ({ make }) => {
  it("puts, gets with the age, refreshes, deletes", async () => {
    let wall = 1_700_000_000_000;
    const s = make(() => wall);
    await until(async () => {
      try {
        await s.get("0.0.0.0", 1);
        return true;
      } catch {
        return false;
      }
    }, "the store to answer");
    const rec = { clusterId: 2, transceiverId: 17, popId: 3, ageMs: 1_500 };
    expect(await s.get("198.51.100.7", 40000)).toBeNull();
    await s.put("198.51.100.7", 40000, rec, 60_000);
    await s.put("2001:db8::7", 40000, { ...rec, transceiverId: 18 }, 60_000);
    wall += 2_000;
    expect(await s.get("198.51.100.7", 40000)).toEqual({ ...rec, ageMs: 3_500 });
    expect((await s.get("2001:db8::7", 40000))!.transceiverId).toBe(18);
    expect(await s.get("198.51.100.7", 40001)).toBeNull();
    await s.delete("198.51.100.7", 40000);
    expect(await s.get("198.51.100.7", 40000)).toBeNull();
    await s.close();
  });

  it("forgets a flow whose TTL ran out", async () => {
    let wall = Date.now();
    const s = make(() => wall);
    await until(async () => {
      try {
        await s.get("0.0.0.0", 1);
        return true;
      } catch {
        return false;
      }
    }, "the store to answer");
    await s.put("198.51.100.9", 1, { clusterId: 1, transceiverId: 1, popId: 1, ageMs: 0 }, 30);
    // Redis expires on its own clock; the memory store on the injected one: advance both.
    wall += 1_000;
    await until(async () => (await s.get("198.51.100.9", 1)) === null, "the flow to expire");
    await s.close();
  });
});

describe("FlowStore over Redis: unreachable", () => {
  it("rejects at once (no offline queue) and counts the error", async () => {
    const dead = await startRedis();
    await dead.stop();
    const counts: string[] = [];
    const s = new RedisFlowStore(connectRedis({ url: dead.url }), {
      count: (op, r) => counts.push(`${op}:${r}`),
    });
    await expect(s.get("198.51.100.7", 1)).rejects.toThrow();
    await expect(
      s.put("198.51.100.7", 1, { clusterId: 1, transceiverId: 1, popId: 1, ageMs: 0 }, 1000),
    ).rejects.toThrow();
    expect(counts).toEqual(["get:error", "set:error"]);
    await s.close();
  });
});

interface RegistryCase {
  name: string;
  make(): {
    registry: TransceiverRegistry;
    announce(hb: TransceiverHeartbeat): Promise<void>;
    withdraw(id: number): Promise<void>;
  };
}
const beat = (id: number, backbone: string, clusterId = 4): TransceiverHeartbeat => ({
  clusterId,
  transceiverId: id,
  backbone,
  apiUrl: "http://127.0.0.1:1",
  load: 0,
  capacity: 10,
  draining: false,
  sentAt: Date.now(),
});
const registries: RegistryCase[] = [
  {
    name: "memory heartbeats",
    make() {
      const registry = new MemoryRegistry(4);
      return {
        registry,
        announce: async (hb) => registry.announce(hb),
        withdraw: async (id) => registry.withdraw(id),
      };
    },
  },
  {
    name: "redis heartbeats",
    make() {
      const registry = new RedisRegistry(connectRedis({ url: server.url }), 4);
      return {
        registry,
        announce: async (hb) => {
          await admin.set(transceiverKey(hb.clusterId, hb.transceiverId), JSON.stringify(hb), "PX", 6_000);
        },
        withdraw: async (id) => {
          await admin.del(transceiverKey(4, id));
        },
      };
    },
  },
];

describe.each(registries)("TransceiverRegistry contract: $name", ({ make }) => {
  it("learns, updates and forgets transceivers of its own cluster only, and reports changes", async () => {
    await admin.flushall();
    const { registry: r, announce, withdraw } = make();
    let changes = 0;
    r.onChange(() => changes++);
    await until(async () => {
      try {
        await r.refresh();
        return true;
      } catch {
        return false;
      }
    }, "the registry to refresh");
    expect(r.has(1)).toBe(false);
    await announce(beat(1, "127.0.0.1:6101"));
    await announce(beat(2, "127.0.0.1:6102"));
    await announce(beat(3, "127.0.0.1:6103", 5));
    await r.refresh();
    expect(r.get(1)).toBe("127.0.0.1:6101");
    expect(r.has(2)).toBe(true);
    expect(r.has(3)).toBe(false);
    expect([...r.entries().keys()].sort()).toEqual([1, 2]);
    expect(changes).toBe(1);
    await r.refresh();
    expect(changes).toBe(1);
    await announce(beat(2, "127.0.0.1:6202"));
    await withdraw(1);
    await r.refresh();
    expect(r.get(2)).toBe("127.0.0.1:6202");
    expect(r.has(1)).toBe(false);
    expect(changes).toBe(2);
    await r.close();
  });
});

describe("static registry", () => {
  it("parses RELAY_TRANSCEIVERS and names the variable in errors", () => {
    expect([...parseStaticRegistry("1=127.0.0.1:6101, 2=[::1]:6102", "RELAY_TRANSCEIVERS")]).toEqual([
      [1, "127.0.0.1:6101"],
      [2, "[::1]:6102"],
    ]);
    expect(() => parseStaticRegistry("1=localhost:1", "RELAY_TRANSCEIVERS")).toThrow(
      /RELAY_TRANSCEIVERS\[0\]/,
    );
    expect(() => parseStaticRegistry("1=127.0.0.1:1,1=127.0.0.1:2", "RELAY_TRANSCEIVERS")).toThrow(
      /repeated/,
    );
    expect(() => parseStaticRegistry("0=127.0.0.1:1", "RELAY_TRANSCEIVERS")).toThrow(/1-65535/);
    const r = new MemoryRegistry(1, parseStaticRegistry("7=127.0.0.1:6107", "X"));
    expect(r.get(7)).toBe("127.0.0.1:6107");
  });
});
