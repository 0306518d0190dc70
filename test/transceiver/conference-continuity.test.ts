// The owner's client hears the backend alone, then a mixer while a joiner is in the call, then
// the backend alone again (a second joiner comes and goes in between, the mixer running on):
// sources with their own sequence numbers and timestamps. Its RTP
// must stay one continuous stream across the switches (core/rtp-continuity.ts): a jump made
// Chromium drop the echo after the last joiner left. Checked on what a werift owner receives.
import { afterAll, describe, expect, it } from "vitest";
import {
  backboneKeys,
  eventsOf,
  heard,
  join,
  sendTone,
  startConferenceHarness,
} from "./helpers/conference.ts";
import type { Harness } from "./helpers/harness.ts";
import { until } from "./helpers/harness.ts";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe("the owner's RTP across a joiner's arrival and departure", () => {
  it("keeps sequence numbers and timestamps continuous, and the echo audible after the leave", async () => {
    const keys = backboneKeys();
    const hub: Harness = await startConferenceHarness(1, keys);
    const leg: Harness = await startConferenceHarness(2, keys);
    cleanup.push(
      () => leg.close(),
      () => hub.close(),
    );
    const { client: owner, callId } = await hub.connectClient({ codecs: "opus" });
    await sendTone(owner, 440, 40, 0);
    const j = await join(hub, leg, callId);
    cleanup.push(() => j.client.close());
    await until(() => eventsOf(owner, "participant.joined").length === 1, "joined");
    await Promise.all([sendTone(owner, 440, 40, 40), sendTone(j.client, 880, 40, 0)]);
    // A second joiner comes and goes while the first stays (the mixer keeps running).
    const k = await join(hub, leg, callId);
    cleanup.push(() => k.client.close());
    await until(() => eventsOf(owner, "participant.joined").length === 2, "second joined");
    await Promise.all([sendTone(owner, 440, 20, 80), sendTone(k.client, 660, 20, 0)]);
    const delK = await hub.call("DELETE", `/v1/calls/${callId}/participants/${k.admission.participantId}`);
    expect(delK.status).toBe(204);
    await until(() => eventsOf(owner, "participant.left").length === 1, "second left");
    await sendTone(owner, 440, 20, 100);
    const del = await hub.call("DELETE", `/v1/calls/${callId}/participants/${j.admission.participantId}`);
    expect(del.status).toBe(204);
    await until(() => eventsOf(owner, "participant.left").length === 2, "left");
    const from = owner.received.length;
    await sendTone(owner, 440, 40, 120);
    await until(() => owner.received.length - from >= 30, "the owner's echo after the leave");

    const r = owner.received;
    expect(r.length).toBeGreaterThan(100);
    const jumps: string[] = [];
    for (let i = 1; i < r.length; i++) {
      const ds = (r[i]!.header.sequenceNumber - r[i - 1]!.header.sequenceNumber) & 0xffff;
      const dt = (r[i]!.header.timestamp - r[i - 1]!.header.timestamp) | 0;
      // Forward by a few packets at most (loss, or a mixer tick skipped), time forward by < 10 s.
      if (ds < 1 || ds > 16 || dt <= 0 || dt > 480_000) jumps.push(`#${i}: seq +${ds}, ts ${dt}`);
    }
    expect(jumps).toEqual([]);
    expect(new Set(r.map((p) => p.header.ssrc)).size).toBe(1);
    const after = heard(owner, [440, 880], from + 10);
    expect(after[440]).toBeGreaterThan(10 * after[880]!);
  }, 60_000);
});
