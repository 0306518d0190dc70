// Bounds of the POP's ICE-TCP listener (docs/relay.md, "ICE-TCP listener"), read from the
// environment by the relay's config. Plain data: it crosses into worker threads.
export interface TcpLimits {
  /** Open connections per worker, in total (RELAY_TCP_MAX_CONNECTIONS). */
  maxConnections: number;
  /** Open connections per worker from one source address (RELAY_TCP_MAX_PER_SOURCE). */
  maxPerSource: number;
  /** A connection must deliver a routable STUN Binding request within this (RELAY_TCP_FIRST_PACKET_MS). */
  firstPacketMs: number;
  /** Largest RFC 4571 packet accepted from a client; a longer length ends the connection (RELAY_TCP_MAX_PACKET). */
  maxPacket: number;
  /** Bytes queued toward one client beyond which its packets are dropped (RELAY_TCP_WRITE_BUFFER). */
  writeBufferBytes: number;
  /** A client that leaves its queue full this long is disconnected (RELAY_TCP_STALL_MS). */
  stallMs: number;
}

export const DEFAULT_TCP_LIMITS: TcpLimits = {
  maxConnections: 16_384,
  maxPerSource: 16,
  firstPacketMs: 5_000,
  maxPacket: 2_048,
  writeBufferBytes: 64 * 1024,
  stallMs: 10_000,
};

/** Reads an integer variable (default, min, max), recording any problem under its name. */
export type IntVar = (name: string, def: number, min: number, max: number) => number;

/** Reads the RELAY_TCP_* variables. */
export function readTcpLimits(int: IntVar): TcpLimits {
  const d = DEFAULT_TCP_LIMITS;
  return {
    maxConnections: int("RELAY_TCP_MAX_CONNECTIONS", d.maxConnections, 1, 1 << 24),
    maxPerSource: int("RELAY_TCP_MAX_PER_SOURCE", d.maxPerSource, 1, 1 << 20),
    firstPacketMs: int("RELAY_TCP_FIRST_PACKET_MS", d.firstPacketMs, 100, 600_000),
    // STUN, DTLS and SRTP packets of a call fit an MTU; 576 keeps room for a DTLS certificate flight.
    maxPacket: int("RELAY_TCP_MAX_PACKET", d.maxPacket, 576, 65_535),
    writeBufferBytes: int("RELAY_TCP_WRITE_BUFFER", d.writeBufferBytes, 4_096, 1 << 26),
    stallMs: int("RELAY_TCP_STALL_MS", d.stallMs, 100, 600_000),
  };
}
