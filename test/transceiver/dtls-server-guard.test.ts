// werift's DTLS server (the transceiver for an a=setup:active offer, the world's site end) against single lost or late datagrams that left a
// call with ICE up and DTLS never connected. A real werift DtlsClient and DtlsServer talk over an
// in-memory datagram pipe that drops (or replays) one chosen datagram; without the guard the
// handshake never completes, with it both ends connect.

import { describe, expect, it } from "vitest";
import {
  type GuardCounters,
  guardDtlsServer,
  newGuardCounters,
} from "../../regional/transceiver/shell/dtls-server-guard.ts";
import { dtlsPair, type End } from "./helpers/dtls-pair.ts";

const HANDSHAKE = 22;
const isClientHello = (b: Buffer): boolean => b[0] === HANDSHAKE && b.readUInt16BE(3) === 0 && b[13] === 1;

/** Two ends; `drop(buf, fromServer)` returning true loses the datagram. Delivery is async, in order. */
function pipe(drop: (b: Buffer, fromServer: boolean) => boolean): { client: End; server: End } {
  const client: End = { send: async () => {}, close() {} };
  const server: End = { send: async () => {}, close() {} };
  client.send = async (b) => {
    if (!drop(b, false)) setImmediate(() => server.onData?.(b));
  };
  server.send = async (b) => {
    if (!drop(b, true)) setImmediate(() => client.onData?.(b));
  };
  return { client, server };
}

async function handshake(
  drop: (b: Buffer, fromServer: boolean) => boolean,
  guard: boolean,
  waitMs: number,
  toServer?: (inject: (b: Buffer) => void) => void,
): Promise<{ client: boolean; server: boolean; counters: GuardCounters }> {
  const ends = pipe(drop);
  toServer?.((b) => ends.server.onData?.(b));
  const { client, server } = await dtlsPair(ends);
  const counters = newGuardCounters();
  if (guard) expect(guardDtlsServer(server, counters)).toBe(true);
  const state = { client: false, server: false };
  server.onConnect.subscribe(() => (state.server = true));
  client.onConnect.subscribe(() => (state.client = true));
  void client.connect().catch(() => {});
  for (let t = 0; t < waitMs && !(state.client && state.server); t += 50)
    await new Promise((r) => setTimeout(r, 50));
  server.close();
  client.close();
  return { ...state, counters };
}

/** The handshake message types of a datagram's records at `epoch` (several records per datagram). */
function messages(b: Buffer, epoch = 0): number[] {
  const out: number[] = [];
  for (let off = 0; off + 13 <= b.length; off += 13 + b.readUInt16BE(off + 11)) {
    if (b[off] === HANDSHAKE && b.readUInt16BE(off + 3) === epoch) out.push(b[off + 13]!);
  }
  return out;
}

/** Loses the first datagram from `fromServer`'s side that matches. */
function loseFirst(fromServer: boolean, match: (b: Buffer) => boolean): (b: Buffer, s: boolean) => boolean {
  let lost = false;
  return (b, s) => {
    if (lost || s !== fromServer || !match(b)) return false;
    lost = true;
    return true;
  };
}

const CERTIFICATE_REQUEST = 13;
const CERTIFICATE = 11;
/** Loses the server's first Finished (epoch 1: the end of flight 6). */
const loseFirstServerFinished = () => loseFirst(true, (b) => messages(b, 1).length > 0);
/** Loses the server's first CertificateRequest (flight 4). */
const loseCertificateRequest = () => loseFirst(true, (b) => messages(b).includes(CERTIFICATE_REQUEST));
/** Loses the client's first Certificate (flight 5). */
const loseClientCertificate = () => loseFirst(false, (b) => messages(b).includes(CERTIFICATE));
/** Loses the client's first Finished (flight 5), so the whole flight comes again. */
const loseClientFinished = () => loseFirst(false, (b) => messages(b, 1).length > 0);

/**
 * Holds the client's first ClientHello back and delivers a copy only once the server has sent
 * flight 4 (a server handshake datagram after the HelloVerifyRequest), as a late retransmission.
 */
function lateFirstHello(): (b: Buffer, fromServer: boolean) => boolean {
  let first: Buffer | null = null;
  let serverSent = 0;
  let replayed = false;
  let deliver: ((b: Buffer) => void) | null = null;
  const drop = (b: Buffer, fromServer: boolean): boolean => {
    if (!fromServer && first === null && isClientHello(b)) first = Buffer.from(b);
    if (fromServer && b[0] === HANDSHAKE && ++serverSent === 2 && first && !replayed) {
      replayed = true;
      const copy = first;
      setImmediate(() => deliver?.(copy)); // before the rest of flight 4 reaches the client
    }
    return false;
  };
  return Object.assign(drop, { bind: (d: (b: Buffer) => void) => (deliver = d) });
}

describe("werift's DTLS server, guarded", () => {
  const losses = [
    ["the server's CertificateRequest (flight 4)", loseCertificateRequest],
    ["the client's Certificate (flight 5)", loseClientCertificate],
    ["the client's Finished (flight 5, resent whole)", loseClientFinished],
  ] as const;

  for (const [what, drop] of losses) {
    it(`without the guard, losing ${what} breaks the handshake for good (werift's bug)`, async () => {
      const r = await handshake(drop(), false, 3_500);
      expect(r.client && r.server).toBe(false);
    }, 15_000);

    it(`with the guard, losing ${what} costs one retransmission and both ends connect`, async () => {
      const r = await handshake(drop(), true, 6_000);
      expect(r).toMatchObject({ client: true, server: true });
    }, 15_000);
  }

  it("with the guard, a lost flight 6 is sent again when flight 5 is, and both ends connect", async () => {
    const r = await handshake(loseFirstServerFinished(), true, 6_000);
    expect(r).toMatchObject({ client: true, server: true });
    expect(r.counters.flight6Resent).toBeGreaterThanOrEqual(1);
  }, 15_000);

  it("with the guard, a first ClientHello arriving after flight 4 does not reset the handshake", async () => {
    const r = await handshakeWithReplay(lateFirstHello(), true);
    expect(r).toMatchObject({ client: true, server: true });
    expect(r.counters.helloIgnored).toBe(1);
  }, 15_000);

  it("without the guard, that late ClientHello makes the handshake fail (werift's bug)", async () => {
    const r = await handshakeWithReplay(lateFirstHello(), false);
    expect(r.client && r.server).toBe(false);
  }, 15_000);

  it("refuses a werift whose DtlsServer lacks the members it wraps", () => {
    const counters = { flight6Resent: 0, helloIgnored: 0, earlyIgnored: 0, repeatIgnored: 0 };
    expect(guardDtlsServer({}, counters)).toBe(false);
    expect(guardDtlsServer({ onHandleHandshakes: () => {}, dtls: {} }, counters)).toBe(false);
  });
});

/** handshake() with the late ClientHello injected to the server. */
const handshakeWithReplay = (
  drop: ReturnType<typeof lateFirstHello>,
  guard: boolean,
): Promise<{ client: boolean; server: boolean; counters: GuardCounters }> =>
  handshake(drop, guard, 4_000, drop.bind);
