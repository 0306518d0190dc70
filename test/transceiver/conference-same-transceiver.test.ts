// A joiner whose leg lands on the hub's own transceiver (its nearest cluster is the owner's, and
// the gateway chose the transceiver that holds the call, as it must in a one-transceiver cluster).
// The conference address this transceiver gives out (TRANSCEIVER_CONFERENCE_ADDR) is one other
// transceivers reach but this host may not: here 192.0.2.1 (TEST-NET-1, routed nowhere), as a
// NAT's outside address or a tunnel's alias would be. The hub and the leg still hear each other,
// since frames to the socket's own address stay in the process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backboneKeys, heard, join, sendTone, startConferenceHarness } from "./helpers/conference.ts";
import type { Harness } from "./helpers/harness.ts";
import { until } from "./helpers/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startConferenceHarness(1, backboneKeys(), {
    advertise: { host: "192.0.2.1", port: 40_999, ipv6: false },
  });
});
afterAll(async () => {
  await h?.close();
});

describe("a conference whose hub and leg share one transceiver", () => {
  it("connects the leg and carries each participant's tone to the other", async () => {
    const { client: owner, callId } = await h.connectClient({ codecs: "opus" });
    const j = await join(h, h, callId);
    expect(j.admission.hub).toEqual({ address: "192.0.2.1:40999", clusterId: 1, transceiverId: 1 });
    await until(async () => {
      const r = await h.call("GET", `/v1/calls/${callId}/participants`);
      const l = ((await r.json()) as { participants: { participantId: string; state: string }[] })
        .participants;
      return l.find((p) => p.participantId === j.admission.participantId)?.state === "connected";
    }, "the leg's hello at the hub");

    const freqs = [440, 880, 1320];
    const ownerFrom = owner.received.length;
    await sendTone(j.client, 880, 100, 5000);
    await until(() => owner.received.length - ownerFrom >= 60, "the owner receiving");
    const ownerHeard = heard(owner, freqs, ownerFrom + 20);
    const joinerFrom = j.client.received.length;
    await sendTone(owner, 440, 100, 100);
    await until(() => j.client.received.length - joinerFrom >= 60, "the joiner receiving");
    const joinerHeard = heard(j.client, freqs, joinerFrom + 20);
    expect(ownerHeard[880]).toBeGreaterThan(1000);
    expect(ownerHeard[880]).toBeGreaterThan(10 * ownerHeard[440]!);
    expect(joinerHeard[440]).toBeGreaterThan(1000);
    expect(joinerHeard[440]).toBeGreaterThan(10 * joinerHeard[880]!);
    // Nothing went to the unreachable address: no send error was counted.
    const m = await (await fetch(`${h.t.httpUrl}/metrics`)).text();
    expect(m).not.toMatch(/gr_transceiver_conference_drops_total\{[^}]*reason="no_route"[^}]*\} [1-9]/);
    expect(m).toMatch(/gr_transceiver_conference_frames_total\{cluster="1",direction="in"\} [1-9]\d*/);
    await owner.close();
    await j.client.close();
  }, 60_000);
});
