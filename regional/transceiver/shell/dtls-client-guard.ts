// werift (pinned, see shell/werift-glue.ts) as DTLS *client*: the transceiver is one for an offer
// that says a=setup:actpass or passive (shell/peer.ts), as every browser's does.
// werift 0.25.2's client handles a retransmitted flight 4 as a new one. When a copy of it is still
// being handled as the server's flight 6 arrives (the server resent flight 4 because our flight 5
// was slow, e.g. on a busy machine), werift connects, then builds flight 5 again: it derives a
// new master secret over a transcript that now holds more messages and replaces its record keys.
// SRTP keeps the first keys, so audio flows, but no DTLS record from the peer decrypts any more
// (GCM "unable to authenticate"): SCTP never associates and the data channel stays "connecting".
// RFC 6347 §4.2.4 wants a retransmitted flight answered by resending our last flight, no more. So
// once flight 5 is built, a copy of a flight-4 message is dropped, and the copy's ServerHelloDone
// resends flight 5 (once per 200 ms) until flight 6 is heard; after that, a copy is only dropped.
// Reaches into werift's DtlsClient; each member is checked and a missing one only skips the guard
// (logged once).
import type { RTCPeerConnection } from "werift";
import type { Logger } from "../../common/log.ts";
import { armDtlsGuard } from "./dtls-guard-arm.ts";

const HELLO_VERIFY_REQUEST = 3;
const SERVER_HELLO_DONE = 14;
/** The server's flights 2 and 4: HelloVerifyRequest, ServerHello, Certificate, ServerKeyExchange, CertificateRequest, ServerHelloDone. */
const SERVER_FLIGHT = new Set([HELLO_VERIFY_REQUEST, 2, 11, 12, 13, SERVER_HELLO_DONE]);
/** werift's flight counter once its flight 5 is built (7 once flight 6 was heard). */
const FLIGHT_5 = 5;
/** A flight 4 arrives as several records: one resend of flight 5 per copy, not per record. */
const RESEND_GAP_MS = 200;

interface Handshake {
  msg_type: number;
}

/** The DtlsClient members used here. */
export interface ClientInternals {
  connected: boolean;
  dtls: { flight: number; lastMessage: unknown };
  transport: { send(buf: Buffer, addr?: unknown): unknown };
  onHandleHandshakes: (assembled: Handshake[]) => Promise<void>;
}

export interface ClientGuardCounters {
  /** Copies of the server's flight 2 or 4 messages dropped after our flight 5 was built. */
  copyIgnored: number;
  /** Times flight 5 was sent again for a copy of flight 4. */
  flight5Resent: number;
}

function internals(x: unknown): ClientInternals | null {
  const c = x as Partial<ClientInternals> | undefined;
  if (!c || typeof c.onHandleHandshakes !== "function" || typeof c.dtls?.flight !== "number") return null;
  if (typeof c.transport?.send !== "function" || typeof c.connected !== "boolean") return null;
  return c as ClientInternals;
}

/** Wraps one werift DtlsClient's handshake handler. False when werift's shape is not as expected. */
export function guardDtlsClient(client: unknown, counters: ClientGuardCounters, now = Date.now): boolean {
  const c = internals(client);
  if (!c) return false;
  const handle = c.onHandleHandshakes;
  let resentAt = Number.NEGATIVE_INFINITY;
  c.onHandleHandshakes = async (assembled) => {
    if (c.dtls.flight < FLIGHT_5 || !assembled.some((h) => SERVER_FLIGHT.has(h.msg_type))) {
      return handle(assembled);
    }
    counters.copyIgnored++;
    const last = c.dtls.lastMessage;
    if (
      !c.connected &&
      c.dtls.flight === FLIGHT_5 &&
      assembled.some((h) => h.msg_type === SERVER_HELLO_DONE) &&
      Array.isArray(last) &&
      now() - resentAt >= RESEND_GAP_MS
    ) {
      resentAt = now();
      counters.flight5Resent++;
      for (const buf of last) if (Buffer.isBuffer(buf)) c.transport.send(buf);
    }
    // Other records of the same datagram (flight 6 behind the copy) are werift's as usual.
    const rest = assembled.filter((h) => !SERVER_FLIGHT.has(h.msg_type));
    if (rest.length > 0) return handle(rest);
  };
  return true;
}

export function newClientGuardCounters(): ClientGuardCounters {
  return { copyIgnored: 0, flight5Resent: 0 };
}

/** Guards every DTLS transport of `pc` that becomes a client (armDtlsGuard). */
export function guardDtlsClientRole(
  pc: RTCPeerConnection,
  log?: Pick<Logger, "warn">,
): { counters: ClientGuardCounters; guarded: () => boolean } {
  const counters = newClientGuardCounters();
  return { counters, guarded: armDtlsGuard(pc, "client", (c) => guardDtlsClient(c, counters), log) };
}
