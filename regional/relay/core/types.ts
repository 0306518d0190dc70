// Values shared by the relay engines and their shells. The engines are sans-IO: a shell hands them
// datagrams with `now` (ms, monotonic) and performs what they return.

/** What the shell must do with the datagram it just passed in. */
export const Action = {
  /** Nothing to send (dropped and counted, or consumed). */
  drop: 0,
  /** Send `out.header` (28 bytes) followed by the datagram to the upstream peer `out.peerKind/peerId`. */
  forwardWrapped: 1,
  /** Send the datagram unchanged to the upstream peer `out.peerKind/peerId`. */
  forwardFrame: 2,
  /** Send datagram[28..len] to the client `out.address:out.port` (from the VIP). */
  toClient: 3,
  /** Send the datagram unchanged to `out.address:out.port` (a backbone peer: POP return path or pong). */
  toBackbone: 4,
  /** Kept by the engine until a flow lookup finishes; the shell must not reuse the buffer. */
  held: 5,
} as const;
export type Action = (typeof Action)[keyof typeof Action];

/** Kinds of upstream peer a shell holds a connected socket for. */
export const PeerKind = { cluster: 1, transceiver: 2 } as const;
export type PeerKind = (typeof PeerKind)[keyof typeof PeerKind];

/** Reused output record: valid until the next call into the engine. */
export interface Output {
  peerKind: number;
  peerId: number;
  /**
   * 28-byte backbone header written by the engine (Action.forwardWrapped). A shell whose send was
   * queued by the kernel (buffer still referenced) swaps in a fresh array before the next call.
   */
  header: Uint8Array;
  address: string;
  port: number;
  /** Flow slot of the datagram (POP engine): how the TCP shell finds a connection without a lookup. */
  slot: number;
}

export function newOutput(): Output {
  return { peerKind: 0, peerId: 0, header: new Uint8Array(28), address: "", port: 0, slot: -1 };
}

export const Direction = { upstream: 0, downstream: 1 } as const;
export const DIRECTION_NAMES = ["upstream", "downstream"] as const;

/** Drop reasons: the bounded label set of gr_relay_drops_total{reason}. */
export const Drop = {
  malformed: 0,
  noFlow: 1,
  badHint: 2,
  unknownCluster: 3,
  unknownTransceiver: 4,
  sourceNotAllowed: 5,
  tableFull: 6,
  rateLimited: 7,
  amplification: 8,
  draining: 9,
  flowMismatch: 10,
  sendFailed: 11,
  /** Hint verifier results, one reason each (key rotation shows up as unknown_key). */
  unknownKey: 12,
  badMac: 13,
  unsupportedVersion: 14,
  /** A half-open flow reached its datagram budget toward the client. */
  halfOpenLimit: 15,
} as const;
export type Drop = (typeof Drop)[keyof typeof Drop];
export const DROP_NAMES = [
  "malformed",
  "no_flow",
  "bad_hint",
  "unknown_cluster",
  "unknown_transceiver",
  "source_not_allowed",
  "table_full",
  "rate_limited",
  "amplification",
  "draining",
  "flow_mismatch",
  "send_failed",
  "unknown_key",
  "bad_mac",
  "unsupported_version",
  "half_open_limit",
] as const;

/** half-open until the transceiver validated the client address (pathValidated frame). */
export const FlowState = { free: 0, halfOpen: 1, validated: 2 } as const;
export type FlowState = (typeof FlowState)[keyof typeof FlowState];

/** Why a flow left the table (gr_relay_flows_expired_total{state} / closed_total). */
export const FlowEnd = {
  halfOpenTimeout: 0,
  idleTimeout: 1,
  maxLifetime: 2,
  closed: 3,
  replaced: 4,
} as const;
export type FlowEnd = (typeof FlowEnd)[keyof typeof FlowEnd];
