// werift's DTLS client (the transceiver for every browser's a=setup:actpass offer) against a copy of
// the server's flight 4 handled as flight 6 arrives: seen with Firefox over ICE-TCP on a busy
// machine (Firefox resent flight 4 while werift was still building flight 5). werift connected,
// then built flight 5 again with new record keys: audio flowed (SRTP keeps the first keys) and the
// data channel never opened, since no record from the browser decrypted any more. A real werift
// DtlsClient and DtlsServer talk over an in-memory datagram pipe that delivers copies of flight 4
// and then flight 6 in one turn, as a batched read does.

import { describe, expect, it } from "vitest";
import {
  type ClientGuardCounters,
  guardDtlsClient,
  newClientGuardCounters,
} from "../../regional/transceiver/shell/dtls-client-guard.ts";
import { dtlsPair, type End } from "./helpers/dtls-pair.ts";

const HANDSHAKE = 22;
const CHANGE_CIPHER_SPEC = 20;
const epochOf = (b: Buffer): number => b.readUInt16BE(3);

/**
 * The server's datagrams reach the client one per turn, in order, except flight 6: its
 * ChangeCipherSpec is held, and with its Finished the client gets, in one turn, a copy of every
 * flight-4 datagram, then the ChangeCipherSpec and the Finished.
 */
function pipe(): { client: End; server: End } {
  const client: End = { send: async () => {}, close() {} };
  const server: End = { send: async () => {}, close() {} };
  const flight4: Buffer[] = [];
  let ccs: Buffer | null = null;
  client.send = async (b) => {
    setImmediate(() => server.onData?.(b));
  };
  server.send = async (b) => {
    if (b[0] === HANDSHAKE && epochOf(b) === 0 && b[13] !== 3) flight4.push(Buffer.from(b));
    if (b[0] === CHANGE_CIPHER_SPEC && ccs === null) {
      ccs = Buffer.from(b);
      return;
    }
    if (b[0] === HANDSHAKE && epochOf(b) === 1 && ccs !== null) {
      const batch = [...flight4, ccs, Buffer.from(b)];
      setImmediate(() => {
        for (const d of batch) client.onData?.(d);
      });
      return;
    }
    setImmediate(() => client.onData?.(b));
  };
  return { client, server };
}

interface Outcome {
  connected: boolean;
  /** Application data from the server that the client decrypted, and the other way. */
  toClient: string[];
  toServer: string[];
  counters: ClientGuardCounters;
}

async function handshake(guard: boolean): Promise<Outcome> {
  const { client, server } = await dtlsPair(pipe());
  const counters = newClientGuardCounters();
  if (guard) expect(guardDtlsClient(client, counters)).toBe(true);
  const out: Outcome = { connected: false, toClient: [], toServer: [], counters };
  const state = { client: false, server: false };
  server.onConnect.subscribe(() => (state.server = true));
  client.onConnect.subscribe(() => (state.client = true));
  client.onData.subscribe((b: Buffer) => out.toClient.push(b.toString()));
  server.onData.subscribe((b: Buffer) => out.toServer.push(b.toString()));
  void client.connect().catch(() => {});
  for (let t = 0; t < 4_000 && !(state.client && state.server); t += 50)
    await new Promise((r) => setTimeout(r, 50));
  out.connected = state.client && state.server;
  // Let the client's handling of the copies settle before data flows (werift's own waits poll).
  await new Promise((r) => setTimeout(r, 400));
  if (out.connected) {
    await server.send(Buffer.from("from the server"));
    await client.send(Buffer.from("from the client"));
    await new Promise((r) => setTimeout(r, 100));
  }
  server.close();
  client.close();
  return out;
}

describe("werift's DTLS client, guarded", () => {
  it("without the guard, a copy of flight 4 handled with flight 6 replaces the record keys (werift's bug)", async () => {
    const r = await handshake(false);
    expect(r.connected).toBe(true);
    expect(r.toClient).toEqual([]);
    expect(r.toServer).toEqual([]);
  }, 15_000);

  it("with the guard, the copy is dropped and records decrypt both ways", async () => {
    const r = await handshake(true);
    expect(r.connected).toBe(true);
    expect(r.toClient).toEqual(["from the server"]);
    expect(r.toServer).toEqual(["from the client"]);
    expect(r.counters.copyIgnored).toBeGreaterThanOrEqual(5);
  }, 15_000);

  it("refuses a werift whose DtlsClient lacks the members it wraps", () => {
    const counters = newClientGuardCounters();
    expect(guardDtlsClient({}, counters)).toBe(false);
    expect(guardDtlsClient({ onHandleHandshakes: () => {}, dtls: {} }, counters)).toBe(false);
  });
});
