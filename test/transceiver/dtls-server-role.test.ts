// The transceiver as DTLS server (the offer says a=setup:active) on a path that loses one chosen
// handshake datagram on its way to the client. werift's own server never recovers from these
// (docs/werift.md "werift as DTLS server"); with shell/dtls-server-guard.ts the loss costs one
// retransmission and the call connects.
import { describe, expect, it } from "vitest";
import { createTestClient, type TestClient } from "./helpers/client.ts";
import { type Harness, startHarness, until } from "./helpers/harness.ts";

const HANDSHAKE = 22;
const CERTIFICATE = 11;
const CERTIFICATE_REQUEST = 13;

/** The handshake message types of a datagram's records at `epoch` (a datagram may hold several). */
function messages(b: Buffer, epoch: number): number[] {
  const out: number[] = [];
  for (let off = 0; off + 13 <= b.length; off += 13 + b.readUInt16BE(off + 11)) {
    if (b[off] === HANDSHAKE && b.readUInt16BE(off + 3) === epoch) out.push(b[off + 13]!);
  }
  return out;
}

/** Drops the first datagram to the client that matches, and counts it. */
function loseFirst(match: (b: Buffer) => boolean): { drop: (b: Buffer) => boolean; lost: () => number } {
  let lost = 0;
  return {
    drop: (b) => {
      if (lost > 0 || !match(b)) return false;
      lost++;
      return true;
    },
    lost: () => lost,
  };
}

/** A werift client whose offer says a=setup:active, so the transceiver answers as DTLS server. */
async function offerActive(h: Harness): Promise<{ client: TestClient; answer: string }> {
  const client = createTestClient();
  const offer = (await client.createOffer()).replaceAll("a=setup:actpass", "a=setup:active");
  const res = await h.call("POST", "/v1/calls", {
    sdp: offer,
    client: { region: "test", continent: "EU" },
    ingress: { vip: `${h.relay.vip.host}:${h.relay.vip.port}`, popId: 1 },
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
  const j = (await res.json()) as { sdp: string };
  await client.setAnswer(j.sdp);
  return { client, answer: j.sdp };
}

describe("the transceiver as DTLS server on a lossy path", () => {
  // werift alone never connects after the first two; it does recover from the third (it answers a
  // repeated Finished with flight 6), which stays to show the guard's own resend does no harm.
  const losses = [
    [
      "the transceiver's CertificateRequest (flight 4)",
      "toClient",
      (b: Buffer) => messages(b, 0).includes(CERTIFICATE_REQUEST),
    ],
    [
      "the client's Certificate (flight 5)",
      "fromClient",
      (b: Buffer) => messages(b, 0).includes(CERTIFICATE),
    ],
    ["the transceiver's Finished (flight 6)", "toClient", (b: Buffer) => messages(b, 1).length > 0],
  ] as const;

  for (const [what, way, match] of losses) {
    it(`connects when ${what} is lost`, async () => {
      const h = await startHarness();
      let client: TestClient | undefined;
      try {
        const loss = loseFirst(match);
        if (way === "toClient") h.relay.onToClient = loss.drop;
        else h.relay.onFromClient = loss.drop;
        const c = await offerActive(h);
        client = c.client;
        expect(c.answer).toMatch(/^a=setup:passive\r?$/m);
        await client.connected(20_000);
        expect(loss.lost()).toBe(1);
        expect(client.pc.dtlsTransports[0]!.state).toBe("connected");
        const dc = client.dc!;
        await until(() => dc.readyState === "open", "data channel open over the DTLS it set up");
      } finally {
        await client?.close().catch(() => {});
        await h.close();
      }
    }, 30_000);
  }
});
