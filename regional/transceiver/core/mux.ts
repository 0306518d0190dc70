// Demultiplexes backbone frames to sessions. A STUN Binding request is routed by the server ufrag
// (USERNAME before ':'), screened by the session (a replayed transaction id is dropped before any
// HMAC), and must carry a valid MESSAGE-INTEGRITY under that session's ice-pwd; the session then
// decides whether its client address (from the frame header) may be bound (`bindPath`): it caps
// paths and validates each new address with a check of its own (core/paths.ts). Everything else
// is routed by client address alone. Replies leave through the relay the client's last datagram
// came from, with the frame header fields echoed. No sockets here: the socket shell passes
// datagrams in and a send function out, so this runs under tests without the network.
import { formatClientIp, readIpv4 } from "../../../shared/backbone/address.ts";
import {
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  type FrameHeader,
  FrameType,
  newFrameHeader,
} from "../../../shared/backbone/frame.ts";
import { classifyDatagram, DatagramKind } from "../../../shared/stun/classify.ts";
import { type HmacSha1, verifyMessageIntegrity } from "../../../shared/stun/integrity.ts";
import {
  isBindingRequest,
  newStunView,
  readStun,
  StunClass,
  type StunView,
} from "../../../shared/stun/reader.ts";
import type { DropReason } from "./drops.ts";

/** A client address as werift names it: [host, port]. */
export type Address = [string, number];

/** A coarse clock the owner advances (milliseconds); reading it costs nothing. */
export interface CoarseClock {
  now: number;
}

/** One client address as seen through one relay. */
export class ClientPath {
  readonly key: number | string;
  readonly ip: string;
  readonly port: number;
  readonly ipv6: boolean;
  /** The client reached its POP over ICE-TCP: frames along this path carry the TCP-borne flag. */
  readonly tcp: boolean;
  /** The tuple werift sees as the remote address. */
  readonly addr: Address;
  relayHost = "";
  relayPort = 0;
  /** How datagrams reach the relay (a connected socket when the shell provides one). */
  peer: { send(header: Buffer, payload: Uint8Array): void } | undefined;
  popId = 0;
  /** Frame header for datagrams to this client (type data, fields echoed). */
  readonly header = Buffer.alloc(FRAME_HEADER_BYTES);
  lastSeen = 0;
  session: MuxCall | undefined;
  /** The session's own check to this address was answered (set by the session). */
  validated = false;

  constructor(key: number | string, h: FrameHeader) {
    this.key = key;
    this.ipv6 = h.clientIpv6;
    this.tcp = h.clientTcp;
    this.ip = formatClientIp(h.clientIp, h.clientIpv6);
    this.port = h.clientPort;
    this.addr = [this.ip, this.port];
  }

  /** Points the path at the relay a frame came from (first frame, or relay failover). */
  setRelay(h: FrameHeader, host: string, port: number): void {
    this.relayHost = host;
    this.relayPort = port;
    this.popId = h.popId;
    const saved = h.type;
    h.type = FrameType.data;
    encodeFrameHeader(this.header, 0, h);
    h.type = saved;
  }

  get address(): string {
    return this.ipv6 ? `[${this.ip}]:${this.port}` : `${this.ip}:${this.port}`;
  }
}

/**
 * The mux's key for a client address: ip*65536+port (IPv4) or "ip|port" (IPv6); a TCP-borne
 * address is another path (2^48 added, or "|tcp" appended), since TCP and UDP ports are apart.
 */
export type PathKey = number | string;

/** What the mux needs from a session. */
export interface MuxCall {
  /** Before MESSAGE-INTEGRITY is checked: true drops the request as a replay (`stun_replay`). */
  isReplay(payload: Buffer, view: StunView, key: PathKey): boolean;
  /**
   * An authenticated Binding request from `key`. The session calls `mux.bindPath(key, this)`
   * (synchronously, inside this call) if it accepts the address, and counts its own drops.
   */
  onCheck(payload: Buffer, view: StunView, key: PathKey): void;
  /** Any other datagram from a path bound to this session. */
  onDatagram(payload: Buffer, path: ClientPath, kind: DatagramKind, view: StunView | null): void;
  /** The path was taken by another session (its address now belongs to someone else). */
  onPathLost(path: ClientPath): void;
}

export type SendFrame = (header: Buffer, payload: Uint8Array, port: number, host: string) => void;

/** Optional: a per-relay sender (connected socket) for a relay address. */
export type PeerFor = (host: string, port: number) => { send(header: Buffer, payload: Uint8Array): void };

export interface MuxCounters {
  drop(reason: DropReason): void;
}

const EMPTY = new Uint8Array(0);
/** Added to an IPv4 key for a TCP-borne path (above every ip*65536+port; exact in a double). */
const TCP_KEY = 2 ** 48;

export class Mux {
  readonly #byUfrag = new Map<string, { session: MuxCall; pwd: Uint8Array }>();
  readonly #paths = new Map<number | string, ClientPath>();
  readonly #view = newStunView();
  readonly #send: SendFrame;
  readonly #hmac: HmacSha1;
  readonly #counters: MuxCounters;
  readonly clock: CoarseClock;
  readonly #peerFor: PeerFor | undefined;
  /** The frame being handled (valid inside onCheck, for bindPath). */
  #frame: FrameHeader | undefined;
  #frameHost = "";
  #framePort = 0;

  constructor(send: SendFrame, hmac: HmacSha1, counters: MuxCounters, clock: CoarseClock, peerFor?: PeerFor) {
    this.#send = send;
    this.#peerFor = peerFor;
    this.#hmac = hmac;
    this.#counters = counters;
    this.clock = clock;
  }

  get ufragCount(): number {
    return this.#byUfrag.size;
  }
  get pathCount(): number {
    return this.#paths.size;
  }

  /** Routes checks for `ufrag` to `s`, authenticated with `pwd` (the server ice-pwd as bytes). */
  addUfrag(ufrag: string, pwd: Uint8Array, s: MuxCall): void {
    this.#byUfrag.set(ufrag, { session: s, pwd });
  }
  removeUfrag(ufrag: string, s: MuxCall): void {
    if (this.#byUfrag.get(ufrag)?.session === s) this.#byUfrag.delete(ufrag);
  }
  removePath(path: ClientPath): void {
    if (this.#paths.get(path.key) === path) this.#paths.delete(path.key);
    path.session = undefined;
  }

  /** Handles the payload of a decoded data frame that came from relay host:port. */
  handle(payload: Buffer, h: FrameHeader, relayHost: string, relayPort: number): void {
    const len = payload.length;
    const key: number | string = h.clientIpv6
      ? `${formatClientIp(h.clientIp, true)}|${h.clientPort}${h.clientTcp ? "|tcp" : ""}`
      : readIpv4(h.clientIp) * 65536 + h.clientPort + (h.clientTcp ? TCP_KEY : 0);
    const kind = classifyDatagram(payload, len);
    let view: StunView | null = null;
    if (kind === DatagramKind.stun) {
      view = this.#view;
      if (readStun(payload, len, view) !== "ok") {
        this.#counters.drop("bad_stun");
        return;
      }
      if (isBindingRequest(view)) {
        this.#check(payload, view, key, h, relayHost, relayPort);
        return;
      }
    }
    // Everything but a Binding request is routed by the client address a check bound earlier.
    const path = this.#paths.get(key);
    if (path === undefined || path.session === undefined) {
      this.#counters.drop("unknown_address");
      return;
    }
    this.#touch(path, h, relayHost, relayPort);
    path.session.onDatagram(payload, path, kind, view);
  }

  #touch(path: ClientPath, h: FrameHeader, relayHost: string, relayPort: number): void {
    path.lastSeen = this.clock.now;
    if (path.relayPort !== relayPort || path.popId !== h.popId || path.relayHost !== relayHost) {
      path.setRelay(h, relayHost, relayPort);
      path.peer = this.#peerFor?.(relayHost, relayPort);
      // The client's traffic moved to another relay (POP failover, second candidate): that
      // relay's flow for the address starts half-open; the address was already proven.
      if (path.validated) this.sendPathValidated(path);
    }
  }

  #check(
    payload: Buffer,
    view: StunView,
    key: number | string,
    h: FrameHeader,
    relayHost: string,
    relayPort: number,
  ): void {
    if (view.usernameOffset < 0 || view.colonOffset < 0) {
      this.#counters.drop("bad_username");
      return;
    }
    const ufrag = payload.toString("latin1", view.usernameOffset, view.colonOffset);
    const entry = this.#byUfrag.get(ufrag);
    if (entry === undefined) {
      this.#counters.drop("unknown_ufrag");
      return;
    }
    const session = entry.session;
    if (session.isReplay(payload, view, key)) {
      this.#counters.drop("stun_replay");
      return;
    }
    if (!verifyMessageIntegrity(payload, view, entry.pwd, this.#hmac)) {
      this.#counters.drop("bad_integrity");
      return;
    }
    this.#frame = h;
    this.#frameHost = relayHost;
    this.#framePort = relayPort;
    try {
      session.onCheck(payload, view, key);
    } finally {
      this.#frame = undefined;
    }
  }

  /**
   * Binds `key` to `session` (creating its path, or taking it from another session) for the
   * frame being handled, and points it at that frame's relay. Only inside `onCheck`.
   */
  bindPath(key: PathKey, session: MuxCall): ClientPath {
    const h = this.#frame;
    if (h === undefined) throw new Error("bindPath outside onCheck");
    let path = this.#paths.get(key);
    if (path === undefined) {
      path = new ClientPath(key, h);
      this.#paths.set(key, path);
      path.setRelay(h, this.#frameHost, this.#framePort);
      path.peer = this.#peerFor?.(this.#frameHost, this.#framePort);
    }
    if (path.session !== session) {
      const previous = path.session;
      path.session = session;
      path.validated = false;
      previous?.onPathLost(path);
    }
    this.#touch(path, h, this.#frameHost, this.#framePort);
    return path;
  }

  /** The path bound to `key`, if any. */
  pathOf(key: PathKey): ClientPath | undefined {
    return this.#paths.get(key);
  }

  /** Sends a client datagram along a path. */
  send(path: ClientPath, data: Uint8Array): void {
    const peer = path.peer;
    if (peer !== undefined) {
      peer.send(path.header, data);
      return;
    }
    this.#send(path.header, data, path.relayPort, path.relayHost);
  }

  /** Tells the relays along `path` that the flow is over. */
  sendFlowClose(path: ClientPath, reason: number): void {
    this.#control(path, FrameType.flowClose, Uint8Array.of(reason));
  }

  /** Tells the relays along `path` that our own check to the client's address succeeded. */
  sendPathValidated(path: ClientPath): void {
    this.#control(path, FrameType.pathValidated, EMPTY);
  }

  #control(path: ClientPath, type: number, payload: Uint8Array): void {
    const header = Buffer.from(path.header);
    header[1] = (header[1]! & 0xf0) | type;
    const peer = path.peer;
    // The same socket as the path's datagrams, so the relays see it before what follows it.
    if (peer !== undefined) peer.send(header, payload);
    else this.#send(header, payload, path.relayPort, path.relayHost);
  }
}

/** True for a STUN success response (RFC 8489 class 0b10). */
export function isSuccessResponse(view: StunView): boolean {
  return view.messageClass === StunClass.success;
}

export { newFrameHeader };
