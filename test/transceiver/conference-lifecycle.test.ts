// The participant API's limits and errors, and failure isolation, with real transceivers and
// werift clients: the 9th participant is refused (409 participant_limit), DELETE removes one (its
// leg ends "removed"), unknown ids are 404, a leg's transceiver stopping or dying removes only
// that participant while the owner's call and the other legs go on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  admit,
  backboneKeys,
  eventsOf,
  join,
  sendTone,
  startConferenceHarness,
} from "./helpers/conference.ts";
import type { Harness } from "./helpers/harness.ts";
import { startHarness, until } from "./helpers/harness.ts";

let hub: Harness;
let b: Harness;
let c: Harness;
const keys = backboneKeys();
beforeAll(async () => {
  hub = await startConferenceHarness(1, keys);
  b = await startConferenceHarness(2, keys);
  c = await startConferenceHarness(3, keys);
});
afterAll(async () => {
  await c?.close();
  await b?.close();
  await hub?.close();
});

const code = async (r: Response): Promise<string> =>
  ((await r.json()) as { error: { code: string } }).error.code;
const statusOf = async (h: Harness, id: string) =>
  (await (await h.call("GET", `/v1/calls/${id}`)).json()) as { state: string; endReason: string | null };

describe("participant limits and errors", () => {
  it("admits 7 joiners beside the owner, refuses the 9th participant, frees a place on DELETE", async () => {
    const { callId } = await hub.connectClient();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await admit(hub, callId);
      expect(r.status).toBe(201);
      const a = (await r.json()) as { participantId: string; slot: number };
      expect(a.slot).toBe(2 + i);
      ids.push(a.participantId);
    }
    const ninth = await admit(hub, callId);
    expect(ninth.status).toBe(409);
    expect(await code(ninth)).toBe("participant_limit");
    const list = (await (await hub.call("GET", `/v1/calls/${callId}/participants`)).json()) as {
      participants: { state: string }[];
    };
    expect(list.participants.map((p) => p.state)).toEqual(["connected", ...Array(7).fill("admitted")]);
    expect((await hub.call("DELETE", `/v1/calls/${callId}/participants/${ids[0]}`)).status).toBe(204);
    const again = await hub.call("DELETE", `/v1/calls/${callId}/participants/${ids[0]}`);
    expect(again.status).toBe(404);
    expect(await code(again)).toBe("participant_unknown");
    const next = await admit(hub, callId);
    expect(next.status).toBe(201);
    // Slots are never reused within a call.
    expect(((await next.json()) as { slot: number }).slot).toBe(9);
  });

  it("answers unknown and ended calls, and bad leg requests, with the catalogue's errors", async () => {
    const unknown = await admit(hub, "rtc_nosuchcall");
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    const { callId } = await hub.connectClient();
    expect((await hub.call("DELETE", `/v1/calls/${callId}`)).status).toBe(204);
    const ended = await admit(hub, callId);
    expect(ended.status).toBe(404);
    expect(await code(ended)).toBe("call_ended");
    const bad = await b.call("POST", "/v1/legs", { sdp: "v=0", conference: { callId, slot: 1 } });
    expect(bad.status).toBe(400);
    expect(await code(bad)).toBe("body_malformed");
    const unsigned = await fetch(`${b.t.httpUrl}/v1/legs`, { method: "POST", body: "{}" });
    expect(unsigned.status).toBe(401);
  });
});

describe("a transceiver without a backbone keyring", () => {
  it("lists only the owner, refuses joins and legs (503 conference_unavailable)", async () => {
    const plain = await startHarness();
    try {
      const { callId } = await plain.connectClient();
      const list = await plain.call("GET", `/v1/calls/${callId}/participants`);
      expect(
        ((await list.json()) as { participants: { participantId: string }[] }).participants,
      ).toMatchObject([{ participantId: "owner", slot: 1 }]);
      const join = await admit(plain, callId);
      expect(join.status).toBe(503);
      expect(await code(join)).toBe("conference_unavailable");
      const leg = await plain.call("POST", "/v1/legs", {});
      expect(await code(leg)).toBe("conference_unavailable");
      const other = await plain.call(
        "GET",
        "/v1/calls/rtc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/participants",
      );
      expect(other.status).toBeGreaterThanOrEqual(400);
      expect(other.status).toBeLessThan(500);
    } finally {
      await plain.close();
    }
  });
});

describe("failure isolation", () => {
  it("DELETE of a participant ends its leg (removed); the owner is told", async () => {
    const { client: owner, callId } = await hub.connectClient({ codecs: "opus" });
    const j = await join(hub, b, callId);
    await until(() => eventsOf(owner, "participant.joined").length === 1, "joined");
    const del = await hub.call("DELETE", `/v1/calls/${callId}/participants/${j.admission.participantId}`);
    expect(del.status).toBe(204);
    await until(async () => (await statusOf(b, j.legId)).state === "ended", "the leg ended");
    expect((await statusOf(b, j.legId)).endReason).toBe("removed");
    await until(() => eventsOf(owner, "participant.left").length === 1, "participant.left at the owner");
    expect(eventsOf(owner, "participant.left")[0]).toMatchObject({ slot: 2, reason: "removed" });
    await j.client.close();
    await owner.close();
  });

  it("a leg's transceiver dying removes only that participant; the owner and the other leg go on", async () => {
    const { client: owner, callId } = await hub.connectClient({ codecs: "opus" });
    const onB = await join(hub, b, callId);
    const onC = await join(hub, c, callId);
    await until(() => eventsOf(owner, "participant.joined").length === 2, "two joined");
    // Cluster 3's transceiver dies: its conference socket goes silent without a bye.
    await c.t.conferences!.socket.close();
    await until(
      () => eventsOf(owner, "participant.left").length === 1,
      "participant.left after 3 s of silence",
    );
    expect(eventsOf(owner, "participant.left")[0]).toMatchObject({
      participant_id: onC.admission.participantId,
      reason: "transceiver_failed",
    });
    const list = (await (await hub.call("GET", `/v1/calls/${callId}/participants`)).json()) as {
      participants: { participantId: string; state: string }[];
    };
    expect(list.participants.map((p) => p.participantId)).toEqual(["owner", onB.admission.participantId]);
    expect((await statusOf(hub, callId)).state).toBe("connected");
    // The leg on cluster 2 still hears the owner, and the owner's echo still comes back.
    const from = onB.client.received.length;
    const echoedFrom = owner.received.length;
    await sendTone(owner, 440, 50);
    await until(() => onB.client.received.length - from >= 25, "the other leg receiving");
    await until(() => owner.received.length - echoedFrom >= 25, "the owner's echo");
    expect((await statusOf(b, onB.legId)).state).toBe("connected");
  });

  it("a leg's transceiver stopping says bye: the hub removes it at once (transceiver_failed)", async () => {
    const { client: owner, callId } = await hub.connectClient({ codecs: "opus" });
    const onB = await join(hub, b, callId);
    await until(() => eventsOf(owner, "participant.joined").length === 1, "joined");
    await b.t.stop();
    await until(() => eventsOf(owner, "participant.left").length === 1, "participant.left");
    expect(eventsOf(owner, "participant.left")[0]).toMatchObject({
      participant_id: onB.admission.participantId,
      reason: "transceiver_failed",
    });
    expect((await statusOf(hub, callId)).state).toBe("connected");
  });
});
