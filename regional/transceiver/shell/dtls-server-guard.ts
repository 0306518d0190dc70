// werift (pinned, see shell/werift-glue.ts) as DTLS *server*: the transceiver is one when an offer
// says a=setup:active (shell/peer.ts), the world's site clients are one against the transceiver.
// werift 0.25.2's server breaks for good on one lost or late handshake datagram (RFC 6347 expects
// loss to cost one retransmission), in these ways:
// - flight 4 leaves as five datagrams: a lost CertificateRequest makes the client send flight 5
//   without its certificate, and resend that same flight forever;
// - flight 5's messages are handled as they arrive: a CertificateVerify before the Certificate
//   fails the transport, a ClientKeyExchange before it derives the master secret from a transcript
//   without it; a retransmitted ClientKeyExchange re-derives it over a transcript that by then
//   holds the CertificateVerify, so the client's Finished never decrypts;
// - a late first (cookieless) ClientHello is answered by redrawing the random and key pair flight 4
//   announced (§4.2.1 wants it answered statelessly), so flight 5 never verifies; after the
//   handshake a ClientHello makes werift renegotiate and drop the connection's keys;
// - once connected, a repeated flight 5 is answered (flight 6 again, §4.2.4) only when its
//   Finished gets through; its other records are dropped.
// So flights leave as one datagram, flight 5's messages are taken in order and once, a cookieless
// ClientHello after flight 4 (any after connecting) is ignored, and a repeated flight 5 gets
// flight 6 again, whichever of its records comes first (once per 200 ms). Reaches into werift's
// DtlsServer; each member is checked and a missing one only skips the guard (logged once).
import type { RTCPeerConnection } from "werift";
import type { Logger } from "../../common/log.ts";
import { armDtlsGuard } from "./dtls-guard-arm.ts";

const CLIENT_HELLO = 1;
const CERTIFICATE = 11;
const CERTIFICATE_VERIFY = 15;
const CLIENT_KEY_EXCHANGE = 16;
const FINISHED = 20;
/** Flight 5's order: what must have arrived before each message. */
const NEEDS: Record<number, number[]> = {
  [CLIENT_KEY_EXCHANGE]: [CERTIFICATE],
  [CERTIFICATE_VERIFY]: [CERTIFICATE, CLIENT_KEY_EXCHANGE],
  [FINISHED]: [CERTIFICATE, CLIENT_KEY_EXCHANGE, CERTIFICATE_VERIFY],
};
/** Record content types of the handshake (change_cipher_spec, alert, handshake), not data (23). */
const HANDSHAKE_RECORD = new Set([20, 21, 22]);
/** Flight 5 arrives as several records: one resend of flight 6 per flight, not per record. */
const RESEND_GAP_MS = 200;

interface Handshake {
  msg_type: number;
  fragment: Buffer;
}

/** The DtlsServer members used here. */
export interface ServerInternals {
  connected: boolean;
  dtls: {
    flight: number;
    lastMessage: unknown;
    /** Received and sent handshake messages by flight number. */
    handshakeCache: Record<number, { data: { msg_type: number }[] } | undefined>;
  };
  transport: { send(buf: Buffer, addr?: unknown): unknown };
  onHandleHandshakes: (assembled: Handshake[]) => Promise<void>;
}

export interface GuardCounters {
  flight6Resent: number;
  helloIgnored: number;
  /** A CertificateVerify or Finished that came before the records it depends on. */
  earlyIgnored: number;
  /** A retransmitted copy of a flight-5 message already taken. */
  repeatIgnored: number;
}

function internals(x: unknown): ServerInternals | null {
  const s = x as Partial<ServerInternals> | undefined;
  if (!s || typeof s.onHandleHandshakes !== "function" || typeof s.dtls?.flight !== "number") return null;
  if (typeof s.transport?.send !== "function" || typeof s.dtls.handshakeCache !== "object") return null;
  if (typeof s.connected !== "boolean") return null;
  return s as ServerInternals;
}

/** A ClientHello's cookie is empty: version(2) random(32) session_id<1> cookie<1>. */
function cookieless(fragment: Buffer): boolean {
  const sid = fragment[34];
  if (sid === undefined) return false;
  return fragment[35 + sid] === 0;
}

/** Wraps one werift DtlsServer's handshake handler. False when werift's shape is not as expected. */
export function guardDtlsServer(server: unknown, counters: GuardCounters, now = Date.now): boolean {
  const s = internals(server);
  if (!s) return false;
  const handle = s.onHandleHandshakes;
  coalesceFlights(s);
  let resentAt = Number.NEGATIVE_INFINITY;
  // What the client's flight 5 delivered so far (the whole cache also holds our own Certificate).
  const has = (types: number[]): boolean => {
    const got = s.dtls.handshakeCache[5]?.data ?? [];
    return types.every((t) => got.some((h) => h.msg_type === t));
  };
  s.onHandleHandshakes = async (assembled) => {
    const hello = assembled.find((h) => h.msg_type === CLIENT_HELLO);
    if (hello && (s.connected || (s.dtls.flight >= 4 && cookieless(hello.fragment)))) {
      counters.helloIgnored++;
      return;
    }
    if (s.connected) {
      const flight5 = assembled.some((h) => h.msg_type === CLIENT_KEY_EXCHANGE || h.msg_type === FINISHED);
      const last = s.dtls.lastMessage;
      if (flight5 && s.dtls.flight === 6 && Array.isArray(last) && now() - resentAt >= RESEND_GAP_MS) {
        resentAt = now();
        counters.flight6Resent++;
        for (const buf of last) if (Buffer.isBuffer(buf)) s.transport.send(buf);
      }
      return;
    }
    // Flight 5 is Certificate, ClientKeyExchange, CertificateVerify, ChangeCipherSpec, Finished,
    // each its own datagram, resent whole until flight 6 is heard. werift handles each on arrival:
    // a ClientKeyExchange before the Certificate derives the (extended) master secret from a
    // transcript without it, for good; a CertificateVerify before it fails the transport; a
    // Finished waits ~4.5 s for the rest, then fails it. So each is taken only once the ones
    // before it arrived, and otherwise left to the next copy of the flight.
    const early = assembled.some((h) => {
      const before = NEEDS[h.msg_type];
      return before !== undefined && !has(before);
    });
    if (early) {
      counters.earlyIgnored++;
      return;
    }
    // A copy of a message already taken is dropped: werift would handle it again, and a second
    // ClientKeyExchange re-derives the master secret over a transcript that by then also holds the
    // CertificateVerify, so the client's Finished never decrypts. (Finished itself is let through:
    // werift answers a repeated one with flight 6 again.)
    if (
      assembled.some(
        (h) => h.msg_type !== FINISHED && NEEDS[h.msg_type] !== undefined && has([h.msg_type]),
      ) ||
      assembled.some((h) => h.msg_type === CERTIFICATE && has([CERTIFICATE]))
    ) {
      counters.repeatIgnored++;
      return;
    }
    return handle(assembled);
  };
  return true;
}

/**
 * werift sends each handshake message of a flight as its own datagram, so losing one of flight 4's
 * five datagrams breaks the handshake for good (a lost CertificateRequest makes the client send a
 * flight 5 without its certificate, and resend that same flight forever). The records a flight
 * sends in one turn of the event loop leave as one datagram (RFC 6347 §4.1.1 allows several
 * records per datagram; flight 4 is ~700 bytes): a flight then arrives whole or not at all.
 */
function coalesceFlights(s: ServerInternals): void {
  const send = s.transport.send.bind(s.transport);
  let queued: Buffer[] = [];
  let to: unknown;
  s.transport.send = (buf: Buffer, addr?: unknown) => {
    if (!HANDSHAKE_RECORD.has(buf[0] ?? 0)) return send(buf, addr);
    if (queued.length === 0) {
      to = addr;
      queueMicrotask(() => {
        const flight = Buffer.concat(queued);
        queued = [];
        send(flight, to);
      });
    }
    queued.push(buf);
    return Promise.resolve();
  };
}

export function newGuardCounters(): GuardCounters {
  return { flight6Resent: 0, helloIgnored: 0, earlyIgnored: 0, repeatIgnored: 0 };
}

/** Guards every DTLS transport of `pc` that becomes a server (armDtlsGuard). */
export function guardDtlsServerRole(
  pc: RTCPeerConnection,
  log?: Pick<Logger, "warn">,
): { counters: GuardCounters; guarded: () => boolean } {
  const counters = newGuardCounters();
  return { counters, guarded: armDtlsGuard(pc, "server", (s) => guardDtlsServer(s, counters), log) };
}
