// The transceiver never repeats a DTLS record sequence number within an epoch (RFC 6347 §4.1): a
// browser's replay window drops a repeated one without a word. werift alone repeats its Finished's
// number in its N-th application record after the handshake; when that record was the hangup's
// close_notify, Chromium stayed `connected` after the call ended.
import { describe, expect, it } from "vitest";
import { startHarness, until } from "./helpers/harness.ts";

const RECORD_HEADER = 13;

describe("DTLS record sequence numbers", () => {
  it("are unique per epoch through the handshake, the data channel and the close_notify", async () => {
    const h = await startHarness({ consentTimeoutMs: 60_000 });
    try {
      const seen = new Map<string, number>();
      const repeats: string[] = [];
      let appRecords = 0;
      let closeNotify = "";
      h.relay.onToClient = (p) => {
        if (p.length < RECORD_HEADER || p[0]! < 20 || p[0]! > 63) return;
        for (let off = 0; off + RECORD_HEADER <= p.length; off += RECORD_HEADER + p.readUInt16BE(off + 11)) {
          const type = p[off]!;
          const key = `epoch ${p.readUInt16BE(off + 3)} seq ${p.readUIntBE(off + 5, 6)}`;
          const before = seen.get(key);
          if (before !== undefined) repeats.push(`${key}: type ${type} after type ${before}`);
          seen.set(key, type);
          if (type === 23) appRecords++;
          if (type === 21) closeNotify = key;
        }
      };
      const { client, callId } = await h.connectClient();
      const dc = client.dc!;
      await until(() => dc.readyState === "open", "data channel open");
      // Past the Finished's number: the transceiver's SCTP answers what the client sends.
      await until(
        () => {
          dc.send("ping");
          return appRecords >= 12;
        },
        () => `12 application records from the transceiver (saw ${appRecords})`,
      );
      const del = await h.call("DELETE", `/v1/calls/${callId}`);
      expect(del.status).toBe(204);
      await until(() => closeNotify !== "", "the close_notify record");
      expect(repeats).toEqual([]);
      await until(() => client.pc.dtlsTransports[0]!.state === "closed", "client DTLS closed");
    } finally {
      await h.close();
    }
  });
});
