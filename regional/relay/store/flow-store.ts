// The flow mirror: established flows by client address, so a restarted relay (or a sibling behind
// the same VIP) can restore a flow from its first non-STUN datagram. Two implementations share one
// contract suite (test/relay/contract-flow-store.test.ts): in memory and Redis.
import type { FlowRecord } from "../core/events.ts";

export interface FlowStore {
  /** Writes (or refreshes) a flow; `ttlMs` bounds how long it survives without a refresh. */
  put(address: string, port: number, record: FlowRecord, ttlMs: number): Promise<void>;
  /** The flow, with `ageMs` since it was created, or null. Rejects when the store is unreachable. */
  get(address: string, port: number): Promise<FlowRecord | null>;
  delete(address: string, port: number): Promise<void>;
  close(): Promise<void>;
}

export function flowKey(address: string, port: number): string {
  return `gr:flow:${address}:${port}`;
}

/** "1|cluster|transceiver|pop|createdAtMs" */
export function encodeFlowValue(r: FlowRecord, nowMs: number): string {
  return `1|${r.clusterId}|${r.transceiverId}|${r.popId}|${Math.round(nowMs - r.ageMs)}`;
}

export function decodeFlowValue(text: string, nowMs: number): FlowRecord | null {
  const m = /^1\|(\d{1,5})\|(\d{1,5})\|(\d{1,5})\|(\d{1,15})$/.exec(text);
  if (!m) return null;
  const [clusterId, transceiverId, popId, createdAt] = [
    Number(m[1]),
    Number(m[2]),
    Number(m[3]),
    Number(m[4]),
  ];
  if (clusterId < 1 || clusterId > 65535 || transceiverId > 65535 || popId > 65535) return null;
  return { clusterId, transceiverId, popId, ageMs: Math.max(0, nowMs - createdAt) };
}

/** In-process store (tests, single-machine runs). `clock` is wall time in ms. */
export class MemoryFlowStore implements FlowStore {
  readonly #items = new Map<string, { value: string; expires: number }>();
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  async put(address: string, port: number, record: FlowRecord, ttlMs: number): Promise<void> {
    const now = this.#clock();
    this.#items.set(flowKey(address, port), { value: encodeFlowValue(record, now), expires: now + ttlMs });
  }

  async get(address: string, port: number): Promise<FlowRecord | null> {
    const key = flowKey(address, port);
    const item = this.#items.get(key);
    const now = this.#clock();
    if (item === undefined) return null;
    if (item.expires <= now) {
      this.#items.delete(key);
      return null;
    }
    return decodeFlowValue(item.value, now);
  }

  async delete(address: string, port: number): Promise<void> {
    this.#items.delete(flowKey(address, port));
  }

  async close(): Promise<void> {
    this.#items.clear();
  }
}
