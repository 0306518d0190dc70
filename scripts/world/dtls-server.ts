// The world's site clients are werift offerers, and the transceiver answers a=setup:active, so the
// site end is werift's DTLS *server* (in production that end is a browser's). werift 0.25.2's
// server breaks two rules of RFC 6347 that only matter when datagrams are lost or late:
// - §4.2.4: the last flight (6: ChangeCipherSpec, Finished) is sent once and, once the server
//   counts itself connected, a retransmitted flight 5 is ignored. When flight 6 is lost the server
//   is done, the client retransmits flight 5 for ~30 s and never connects: the transceiver drops
//   the call's media while the site thinks the call is up.
// - §4.2.1: a ClientHello without a cookie is answered with a HelloVerifyRequest statelessly; werift
//   instead redraws its random and key pair for it (flight 2). A retransmitted first ClientHello
//   that arrives after flight 4 (late, under load) so replaces the keys flight 4 announced, the
//   client's flight 5 can never verify, and neither end connects. Likewise a retransmitted
//   ClientHello after the handshake makes werift renegotiate, dropping the connection's keys.
// So, for each DTLS server transport of a site's peer connection: once flight 4 is out, a cookieless
// ClientHello is ignored (the client already has the cookie); once connected, a ClientHello is
// ignored and a retransmitted flight 5 gets flight 6 again. Reaches into werift's DtlsSocket; a
// missing member only skips the guard (reported by guardSiteDtls).
import type { RTCPeerConnection } from "werift";

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

/**
 * Guards every DTLS transport of `pc` that becomes a server. werift creates the DtlsServer
 * synchronously right after the transport's state turns "connecting", before any datagram can
 * reach it, so a microtask after that state change is in time.
 */
export function guardSiteDtls(pc: RTCPeerConnection): { counters: GuardCounters; guarded: () => boolean } {
  const counters: GuardCounters = { flight6Resent: 0, helloIgnored: 0, earlyIgnored: 0, repeatIgnored: 0 };
  let guarded = false;
  for (const t of pc.dtlsTransports) {
    t.onStateChange.subscribe((state) => {
      if (state !== "connecting" || t.role !== "server") return;
      queueMicrotask(() => {
        guarded = guardDtlsServer((t as unknown as { dtls?: unknown }).dtls, counters) || guarded;
      });
    });
  }
  return { counters, guarded: () => guarded };
}
