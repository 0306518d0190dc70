// What an engine asks of its shell besides sending: flow mirror writes and lookups. Per flow, never
// per packet; the shell drains `engine.events` after each call that may have produced some.

/** A flow as the mirror (Redis) stores it. */
export interface FlowRecord {
  clusterId: number;
  transceiverId: number;
  popId: number;
  /** Age of the flow when written or read, ms. */
  ageMs: number;
}

export type EngineEvent =
  /** Look `address:port` up in the flow store, then call `restoreResult(now, id, record|null|"error")`. */
  | { type: "lookup"; id: number; address: string; port: number }
  /** Write (or refresh the TTL of) an established flow. */
  | { type: "mirror"; address: string; port: number; record: FlowRecord }
  /** The session ended (flow-close): remove the mirrored flow. */
  | { type: "forget"; address: string; port: number };

/** A queued send produced outside the per-datagram path (restored flows' held datagrams). */
export interface QueuedTransmit {
  peerKind: number;
  peerId: number;
  /** 28-byte header to put in front of `buf[0..len]`. */
  header: Uint8Array;
  buf: Uint8Array;
  len: number;
}
