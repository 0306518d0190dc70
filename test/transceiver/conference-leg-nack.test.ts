// A joiner's client that negotiated NACK asks its leg for a packet again: what comes back is
// that packet, not whatever the leg's mixer (one reused output buffer) holds now. werift's
// sender keeps each packet it sent (no copy) to answer NACKs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenericNack, RtcpTransportLayerFeedback, type RtpPacket } from "werift";
import { backboneKeys, join, sendTone, startConferenceHarness } from "./helpers/conference.ts";
import type { Harness } from "./helpers/harness.ts";
import { until } from "./helpers/harness.ts";

let hub: Harness;
let leg: Harness;
beforeAll(async () => {
  const keys = backboneKeys();
  hub = await startConferenceHarness(1, keys);
  leg = await startConferenceHarness(2, keys);
});
afterAll(async () => {
  await leg?.close();
  await hub?.close();
});

describe("a leg answering its client's NACK", () => {
  it("sends again the packet asked for, with its own payload", async () => {
    const { callId } = await hub.connectClient({ codecs: "opus" });
    const j = await join(hub, leg, callId, { nack: true });
    const raw: RtpPacket[] = [];
    j.client.transceiver.dtlsTransport!.onRtp.subscribe((rtp) => raw.push(rtp));
    // The joiner talks; the echo comes back through the hub and the leg's mixer.
    await sendTone(j.client, 440, 60);
    await until(() => raw.length >= 30, "the leg's mixer output at the joiner");
    const want = raw[raw.length - 20]!;
    const seq = want.header.sequenceNumber;
    const count = () => raw.filter((p) => p.header.sequenceNumber === seq).length;
    const before = count();
    const nack = new GenericNack({
      senderSsrc: j.client.transceiver.receiver.rtcpSsrc,
      mediaSourceSsrc: want.header.ssrc,
      lost: [seq],
    });
    await j.client.transceiver.dtlsTransport!.sendRtcp([new RtcpTransportLayerFeedback({ feedback: nack })]);
    await until(() => count() > before, "the retransmission");
    const again = raw.filter((p) => p.header.sequenceNumber === seq).at(-1)!;
    expect(again.payload.toString("hex")).toBe(want.payload.toString("hex"));
  });
});
