// The last joiner leaves while the backend still has its audio on the way (the echo agent 400 ms
// behind): the hub's mixer is gone, so those frames, labelled with the joiner's slot, reached the
// owner's call, which played them between its own echo. Two numberings in one stream: the owner's
// RTP jumped back by thousands of sequence numbers and Chromium dropped every packet after it as
// an SRTP replay ("Failed to unprotect SRTP packet, err=10") until the numbering caught up
// (test/cascade/browser.test.ts, "B leaving", failed so about once in ten runs under load). They are
// dropped and counted; checked on what a werift owner receives.
import { afterAll, describe, expect, it } from "vitest";
import { backboneKeys, eventsOf, join, sendTone, startConferenceHarness } from "./helpers/conference.ts";
import type { Harness } from "./helpers/harness.ts";
import { sleep, until } from "./helpers/harness.ts";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

const ECHO_DELAY_MS = 400;

describe("the owner's RTP when the last joiner leaves with its echo in flight", () => {
  it("stays one numbering: the joiner's late echo is not played to the owner", async () => {
    const keys = backboneKeys();
    const hub: Harness = await startConferenceHarness(1, keys, {}, { agentDelayMs: ECHO_DELAY_MS });
    const leg: Harness = await startConferenceHarness(2, keys);
    cleanup.push(
      () => leg.close(),
      () => hub.close(),
    );
    const { client: owner, callId } = await hub.connectClient({ codecs: "opus" });
    const j = await join(hub, leg, callId);
    cleanup.push(() => j.client.close());
    await until(() => eventsOf(owner, "participant.joined").length === 1, "joined");
    // Both talk on, each in its own numbering (far apart), while the joiner is removed halfway.
    const talk = Promise.all([sendTone(owner, 440, 150, 1000), sendTone(j.client, 880, 150, 40_000)]);
    await sleep(1500);
    const del = await hub.call("DELETE", `/v1/calls/${callId}/participants/${j.admission.participantId}`);
    expect(del.status).toBe(204);
    await talk;
    await until(() => eventsOf(owner, "participant.left").length === 1, "left");
    await sleep(ECHO_DELAY_MS + 200);

    const r = owner.received;
    expect(r.length).toBeGreaterThan(100);
    const jumps: string[] = [];
    for (let i = 1; i < r.length; i++) {
      const ds = (r[i]!.header.sequenceNumber - r[i - 1]!.header.sequenceNumber) & 0xffff;
      if (ds < 1 || ds > 16)
        jumps.push(`#${i}: ${r[i - 1]!.header.sequenceNumber} -> ${r[i]!.header.sequenceNumber}`);
    }
    expect(jumps).toEqual([]);
    // The joiner's late frames were there, and were counted as dropped.
    const m = await (await fetch(`${hub.t.httpUrl}/metrics`)).text();
    expect(m).toMatch(/gr_transceiver_backend_errors_total\{[^}]*reason="unknown_participant"[^}]*\} [1-9]/);
  }, 60_000);
});
