// A conference across two transceivers of two clusters, with real werift clients: the owner's
// call on cluster 1 (the hub), a joiner's leg on cluster 2. Each client sends an Opus tone; the
// backend (the echo agent) gets both streams labelled by slot; each client hears the other's
// tone; the participant events reach both clients and the backend.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestClient } from "./helpers/client.ts";
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

let hub: Harness;
let legSide: Harness;
beforeAll(async () => {
  const keys = backboneKeys();
  hub = await startConferenceHarness(1, keys);
  legSide = await startConferenceHarness(2, keys);
});
afterAll(async () => {
  await legSide?.close();
  await hub?.close();
});

const getJson = async (h: Harness, path: string): Promise<Record<string, unknown>> => {
  const r = await h.call("GET", path);
  expect(r.status).toBe(200);
  return (await r.json()) as Record<string, unknown>;
};

describe("a conference across two clusters", () => {
  let owner: TestClient;
  let callId: string;
  let joiner: TestClient;
  let legId: string;
  let participantId: string;

  it("admits a joiner at the hub and connects its leg on the other cluster", async () => {
    ({ client: owner, callId } = await hub.connectClient({ codecs: "opus" }));
    const j = await join(hub, legSide, callId);
    joiner = j.client;
    legId = j.legId;
    participantId = j.admission.participantId;
    expect(j.admission).toMatchObject({ slot: 2, hub: { clusterId: 1, transceiverId: 1 } });
    expect(j.admission.conferenceId).toMatch(/^[0-9a-f]{16}$/);
    expect(participantId).toMatch(/^prt_[A-Za-z0-9_-]{16}$/);
    const list = await until(async () => {
      const l = (await getJson(hub, `/v1/calls/${callId}/participants`)).participants as {
        participantId: string;
        state: string;
        leg: unknown;
      }[];
      return l.find((p) => p.participantId === participantId)?.state === "connected" ? l : undefined;
    }, "the leg's hello at the hub");
    expect(list.map((p) => p.participantId)).toEqual(["owner", participantId]);
    expect(list[1]!.leg).toEqual({ clusterId: 2, transceiverId: 1, legId });
    const legStatus = await getJson(legSide, `/v1/calls/${legId}`);
    expect(legStatus.conference).toMatchObject({ role: "leg", callId, participantId, slot: 2 });
    const hubStatus = await getJson(hub, `/v1/calls/${callId}`);
    expect(hubStatus.conference).toMatchObject({ role: "hub", participants: 2 });
  });

  it("tells the owner, the joiner and the backend who joined", async () => {
    await until(() => eventsOf(owner, "participant.joined").length > 0, "participant.joined at the owner");
    expect(eventsOf(owner, "participant.joined")).toEqual([
      { type: "participant.joined", call_id: callId, participant_id: participantId, slot: 2 },
    ]);
    await until(() => eventsOf(joiner, "participant.joined").length > 0, "participant.joined at the joiner");
    expect(eventsOf(joiner, "participant.joined")).toEqual([
      { type: "participant.joined", call_id: callId, participant_id: "owner", slot: 1 },
    ]);
    await until(
      () => hub.agent.events.some((e) => (e as { type?: string }).type === "participant.joined"),
      "participant.joined at the backend",
    );
  });

  it("the backend gets both streams labelled; each client hears the other while the other speaks", async () => {
    const before = hub.agent.framesBySlot();
    const freqs = [440, 880, 1320];
    // The joiner alone: the owner hears 880 Hz (its own echo is silence).
    let ownerFrom = owner.received.length;
    await sendTone(joiner, 880, 100, 5000);
    await until(() => owner.received.length - ownerFrom >= 60, "the owner receiving");
    const ownerHeard = heard(owner, freqs, ownerFrom + 20);
    // The owner alone: the joiner hears 440 Hz.
    const joinerFrom = joiner.received.length;
    await sendTone(owner, 440, 100, 100);
    await until(() => joiner.received.length - joinerFrom >= 60, "the joiner receiving");
    const joinerHeard = heard(joiner, freqs, joinerFrom + 20);
    // Both at once: each hears the other and its own echo.
    ownerFrom = owner.received.length;
    await Promise.all([sendTone(owner, 440, 75, 200), sendTone(joiner, 880, 75, 5100)]);
    const both = heard(owner, freqs, ownerFrom + 20);
    expect(ownerHeard[880]).toBeGreaterThan(1000);
    expect(ownerHeard[880]).toBeGreaterThan(10 * ownerHeard[440]!);
    expect(joinerHeard[440]).toBeGreaterThan(1000);
    expect(joinerHeard[440]).toBeGreaterThan(10 * joinerHeard[880]!);
    // Both tones at once share the mix (and a loaded machine conceals some frames): each well
    // above the off-tone reference rather than a fixed level.
    expect(both[440]).toBeGreaterThan(300);
    expect(both[880]).toBeGreaterThan(300);
    expect(both[1320]).toBeLessThan(both[440]! / 10);
    expect(both[1320]).toBeLessThan(both[880]! / 10);
    const after = await until(() => {
      const s = hub.agent.framesBySlot();
      return (s[1] ?? 0) - (before[1] ?? 0) >= 150 && (s[2] ?? 0) - (before[2] ?? 0) >= 150 ? s : undefined;
    }, "both labelled streams at the backend");
    expect(Object.keys(after).sort()).toEqual(["1", "2"]);
    const m = await (await fetch(`${hub.t.httpUrl}/metrics`)).text();
    expect(m).toMatch(/gr_transceiver_conference_frames_total\{cluster="1",direction="in"\} [1-9]\d*/);
  });

  it("hanging up the owner's call ends the leg (call_ended)", async () => {
    expect((await hub.call("DELETE", `/v1/calls/${callId}`)).status).toBe(204);
    const st = await until(async () => {
      const s = await getJson(legSide, `/v1/calls/${legId}`);
      return s.state === "ended" ? s : undefined;
    }, "the leg ended");
    expect(st.endReason).toBe("call_ended");
    const again = await hub.call("POST", `/v1/calls/${callId}/participants`, {});
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("call_ended");
  });
});
