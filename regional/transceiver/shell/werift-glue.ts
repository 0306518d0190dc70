// The one place that reaches into werift's private members, so that many peer connections share
// one UDP socket (the backbone socket). werift is pinned exactly (package.json); every member
// used here is listed in GLUE_MEMBERS and checked by assertGlueCompatible(), which the
// transceiver runs at start-up and test/transceiver/werift-glue.test.ts runs in CI, so an upgrade
// that moves them fails loudly instead of silently opening sockets. Facts: docs/werift.md.

import type { RTCPeerConnection } from "werift";
import { Candidate, Connection, candidateFoundation, candidatePriority, StunProtocol } from "werift";
import type { Address } from "../core/mux.ts";
import { assertMediaCompatible, leanEvent } from "./werift-media.ts";

/** werift's address tuple: [host, port]. */
export type { Address };

export const PINNED_WERIFT_VERSION = "0.25.2";

/** The private surface of werift's ICE Connection this module relies on. */
interface ConnectionInternals {
  localUsername: string;
  localPassword: string;
  remotePassword: string;
  userHistory: Record<string, string>;
  stunServer: unknown;
  generation: number;
  protocols: unknown[];
  ensureProtocol(protocol: unknown): void;
  resetNominatedPair(): void;
  nominated?: {
    rtt?: number;
    remoteCandidate: { host: string; port: number };
  };
  state: string;
  onData: unknown;
}

interface ProtocolInternals {
  transport: unknown;
  onDataReceived: unknown;
  localCandidate?: Candidate;
  localIp?: string;
  datagramReceived(data: Buffer, addr: Address): void;
  close(): Promise<void>;
}

interface IceTransportInternals {
  connection: ConnectionInternals;
  state: string;
  start(): Promise<void>;
}

/** Members this module touches, by owner; checked at start-up. */
export const GLUE_MEMBERS = {
  "Connection.prototype": ["ensureProtocol", "resetNominatedPair", "restart", "close", "connect"],
  "Connection instance": [
    "protocols",
    "userHistory",
    "localUsername",
    "localPassword",
    "remotePassword",
    "stunServer",
    "generation",
  ],
  "StunProtocol.prototype": ["datagramReceived", "close", "request", "sendStun", "sendData"],
  "RTCPeerConnection instance": ["iceTransports"],
} as const;

export class GlueError extends Error {
  override readonly name = "GlueError";
}

/**
 * Throws a GlueError naming every missing private member. Cheap (no sockets): builds one bare
 * ICE Connection (and, for the media members of werift-media.ts, a bare receiver and sender).
 */
export function assertGlueCompatible(): void {
  assertMediaCompatible();
  const missing: string[] = [];
  const cproto = Connection.prototype as unknown as Record<string, unknown>;
  for (const m of GLUE_MEMBERS["Connection.prototype"]) {
    if (typeof cproto[m] !== "function") missing.push(`Connection.prototype.${m}`);
  }
  const sproto = StunProtocol.prototype as unknown as Record<string, unknown>;
  for (const m of GLUE_MEMBERS["StunProtocol.prototype"]) {
    if (typeof sproto[m] !== "function") missing.push(`StunProtocol.prototype.${m}`);
  }
  const conn = new Connection(false, { useIpv4: false, useIpv6: false }) as unknown as Record<
    string,
    unknown
  >;
  for (const m of GLUE_MEMBERS["Connection instance"]) {
    if (!(m in conn)) missing.push(`Connection#${m}`);
  }
  if (!Array.isArray(conn.protocols)) missing.push("Connection#protocols (array)");
  if (typeof conn.userHistory !== "object" || conn.userHistory === null)
    missing.push("Connection#userHistory (object)");
  void (conn as unknown as ConnectionInternals).resetNominatedPair;
  if (missing.length > 0) {
    throw new GlueError(
      `werift private members changed (pinned ${PINNED_WERIFT_VERSION}); missing: ${missing.join(", ")}`,
    );
  }
}

function iceTransportOf(pc: RTCPeerConnection): IceTransportInternals {
  const transports = (pc as unknown as { iceTransports: IceTransportInternals[] }).iceTransports;
  if (!Array.isArray(transports)) throw new GlueError("RTCPeerConnection#iceTransports is not an array");
  if (transports.length !== 1) {
    throw new GlueError(`expected exactly one ICE transport (BUNDLE), found ${transports.length}`);
  }
  return transports[0]!;
}

/** Number of live ICE transports (1 when every m-line is bundled). */
export function iceTransportCount(pc: RTCPeerConnection): number {
  return (pc as unknown as { iceTransports: unknown[] }).iceTransports.length;
}

/**
 * A full ICE agent falls back to a public STUN server when none is configured; with no host
 * addresses it never queries it, but clear it anyway so no code path can reach the Internet.
 * Call after setRemoteDescription / addTransceiver (when the transports exist).
 */
export function disableStunFallback(pc: RTCPeerConnection): void {
  for (const t of (pc as unknown as { iceTransports: IceTransportInternals[] }).iceTransports) {
    t.connection.stunServer = undefined;
  }
}

/**
 * Runs ICE checks again after an ICE restart was negotiated. werift's connect() returns early when
 * DTLS is already up, so without this the agent stays "completed" with no selected pair.
 */
export async function restartIceChecks(pc: RTCPeerConnection): Promise<void> {
  const t = iceTransportOf(pc);
  if (t.state !== "closed") await t.start();
}

const SENT: Promise<void> = Promise.resolve();

/** Marks the shared socket's transports: a send on one is synchronous and cannot fail (rtp-out.ts). */
const SHARED_TRANSPORT = Symbol("shared socket transport");

/** True when a pair's transport is the shared socket's (attachSharedSocket), not werift's own. */
export function isSharedTransport<T extends object>(t: T | undefined): t is T {
  // A property read, not a WeakSet lookup: rtp-out.ts asks for every packet it sends.
  return (t as { [SHARED_TRANSPORT]?: true } | undefined)?.[SHARED_TRANSPORT] === true;
}

/** What the shared socket offers a session: send one datagram to a client address. */
export type SharedSend = (data: Buffer, addr: Address) => void;

export interface IceAttachment {
  /** Hands a datagram to werift as if it arrived on this session's own socket. */
  deliver(data: Buffer, addr: Address): void;
  /** Sets the local ufrag/pwd (before createAnswer, and again after an ICE restart). */
  setLocalCredentials(ufrag: string, pwd: string): void;
  /** The selected pair's remote address, if ICE has nominated one. */
  selectedAddress(): Address | undefined;
  /** Moves the selected pair to a new remote address in place (client NAT rebinding). */
  moveSelectedPair(host: string, port: number): boolean;
  /** Forgets the selected pair so the next nominating check selects a new one. */
  resetSelectedPair(): void;
  /** Latest STUN round-trip time on the selected pair, in seconds. */
  selectedRtt(): number | undefined;
  /** The remote ice-pwd (to authenticate the client's consent responses). */
  remotePassword(): string;
  /** After answering an ICE restart: run checks again so ICE leaves "completed". */
  restartChecks(): Promise<void>;
  /** True once the attachment's protocol was closed (peer connection closed). */
  readonly closed: boolean;
}

export interface AttachOptions {
  ufrag: string;
  pwd: string;
  /** The candidate advertised in the answer (the Global Relay VIP). */
  candidateHost: string;
  candidatePort: number;
  send: SharedSend;
  /** Called once when werift closes the protocol (peer connection closed). */
  onClose(): void;
}

/**
 * Replaces werift's per-session sockets with the shared socket. Call after
 * setRemoteDescription(offer) and before createAnswer(). The peer connection must have been
 * created with iceUseIpv4/iceUseIpv6 false so it binds nothing itself.
 */
export function attachSharedSocket(pc: RTCPeerConnection, o: AttachOptions): IceAttachment {
  const ice = iceTransportOf(pc);
  const conn = ice.connection;
  conn.stunServer = undefined;
  let closed = false;
  const transport = {
    [SHARED_TRANSPORT]: true as const,
    type: "udp",
    closed: false,
    address: { address: o.candidateHost, port: o.candidatePort, family: "IPv4" },
    onData: (_d: Buffer, _a: Address) => {},
    // Synchronous: werift awaits the result, so a settled promise costs it no new one per packet.
    send: (data: Buffer, addr?: Address): Promise<void> => {
      if (addr !== undefined && !closed) o.send(data, addr);
      return SENT;
    },
    close: async (): Promise<void> => {
      if (closed) return;
      closed = true;
      transport.closed = true;
      o.onClose();
    },
  };
  const protocol = new StunProtocol() as unknown as ProtocolInternals;
  protocol.transport = transport;
  protocol.localIp = o.candidateHost;
  protocol.localCandidate = new Candidate(
    candidateFoundation("host", "udp", o.candidateHost),
    1,
    "udp",
    candidatePriority("host"),
    o.candidateHost,
    o.candidatePort,
    "host",
    undefined,
    undefined,
    undefined,
    conn.generation,
    o.ufrag,
  );
  const setLocalCredentials = (ufrag: string, pwd: string): void => {
    conn.localUsername = ufrag;
    conn.localPassword = pwd;
    conn.userHistory[ufrag] = pwd;
    if (protocol.localCandidate) protocol.localCandidate.ufrag = ufrag;
  };
  setLocalCredentials(o.ufrag, o.pwd);
  conn.ensureProtocol(protocol);
  conn.protocols.push(protocol);
  // Every datagram passes these two events (werift-media.ts).
  leanEvent(protocol.onDataReceived);
  leanEvent(conn.onData);

  return {
    deliver(data, addr) {
      protocol.datagramReceived(data, addr);
    },
    setLocalCredentials,
    selectedAddress() {
      const n = conn.nominated;
      return n ? [n.remoteCandidate.host, n.remoteCandidate.port] : undefined;
    },
    moveSelectedPair(host, port) {
      const n = conn.nominated;
      if (!n) return false;
      n.remoteCandidate.host = host;
      n.remoteCandidate.port = port;
      return true;
    },
    resetSelectedPair() {
      conn.resetNominatedPair();
    },
    selectedRtt() {
      return conn.nominated?.rtt;
    },
    remotePassword() {
      return conn.remotePassword;
    },
    restartChecks: () => restartIceChecks(pc),
    get closed() {
      return closed;
    },
  };
}
