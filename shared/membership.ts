// Transceiver heartbeats (cluster membership). Each transceiver announces itself every
// HEARTBEAT_INTERVAL_MS; an announcement lives HEARTBEAT_TTL_MS. In production the record is a
// Redis string at `transceiverKey(cluster, id)` with that TTL (SET ... PX); embedded, an in-memory
// map holds the same records. The cluster relay's registry and the signalling entry read it.

import { parseHostPort } from "./topology/address.ts";

export const HEARTBEAT_INTERVAL_MS = 2_000;
export const HEARTBEAT_TTL_MS = 6_000;

export interface TransceiverHeartbeat {
  clusterId: number;
  transceiverId: number;
  /** UDP address of the transceiver's one shared socket (backbone frames), "ip:port". */
  backbone: string;
  /** Internal signalling API base URL of this transceiver process. */
  apiUrl: string;
  /** Active sessions. */
  load: number;
  capacity: number;
  draining: boolean;
  /** Sender's clock, ms since epoch. */
  sentAt: number;
}

export function transceiverKey(clusterId: number, transceiverId: number): string {
  return `gr:transceiver:${clusterId}:${transceiverId}`;
}
export function transceiverKeyPattern(clusterId: number): string {
  return `gr:transceiver:${clusterId}:*`;
}

/** Validates a heartbeat read from Redis or the wire; returns null on any problem. */
export function parseHeartbeat(text: string): TransceiverHeartbeat | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  const int16 = (x: unknown): boolean => Number.isInteger(x) && (x as number) >= 1 && (x as number) <= 65535;
  const nonNeg = (x: unknown): boolean => typeof x === "number" && Number.isFinite(x) && x >= 0;
  if (!int16(o.clusterId) || !int16(o.transceiverId)) return null;
  // Relays send client datagrams to this address: it must be a literal IP and a real port.
  if (typeof o.backbone !== "string" || typeof parseHostPort(o.backbone) === "string") return null;
  if (typeof o.apiUrl !== "string" || !/^https?:\/\//.test(o.apiUrl)) return null;
  if (!nonNeg(o.load) || !nonNeg(o.capacity) || typeof o.draining !== "boolean" || !nonNeg(o.sentAt))
    return null;
  return o as unknown as TransceiverHeartbeat;
}
