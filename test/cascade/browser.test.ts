// The cascade in real Chromium (issue 16, "Proof"): page A in Frankfurt creates a call (cluster
// fra-local), page B in New York joins it with POST /v1/realtime/calls/{id}/participants and is
// steered to its own nearest cluster (iad-local). A sends 440 Hz, B 880 Hz; each hears the
// other's tone in what it receives (and its own, echoed by the backend to it alone); the echo
// agent received both labelled streams (slot 1 and slot 2); participant.joined / participant.left
// reach both pages' oai-events. B leaving leaves A's call running; ending the call ends a joiner.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callStatus } from "../support/namespaced-system.ts";
import { ABSENT_SHARE, TONE_A_HZ, TONE_B_HZ } from "../support/tone.ts";
import { waitFor } from "../support/wait.ts";
import {
  type CascadeBrowser,
  CITIES,
  callIdOf,
  heardTone,
  openTonePage,
  startCascadeBrowser,
  type ToneState,
} from "./harness.ts";

let h: CascadeBrowser;
beforeAll(async () => {
  h = await startCascadeBrowser();
}, 180_000);
afterAll(async () => {
  await h?.close();
});

interface ParticipantEvent {
  type: string;
  participant_id?: string;
  slot?: number;
  reason?: string;
}
const eventsOf = (s: ToneState, type: string): ParticipantEvent[] =>
  s.events.map((e) => JSON.parse(e) as ParticipantEvent).filter((e) => e.type === type);

const echoStatus = async (): Promise<{ framesBySlot: Record<string, number> }> =>
  (await fetch(`http://${h.system.plan.host}:${h.system.plan.echoPort}/status`)).json() as Promise<{
    framesBySlot: Record<string, number>;
  }>;

const edgeGet = async (path: string) => {
  const r = await fetch(`${h.system.edgeUrl}${path}`, {
    headers: { authorization: `Bearer ${h.system.apiKey}` },
  });
  return { status: r.status, body: (await r.json().catch(() => ({}))) as Record<string, unknown> };
};

describe("cascade: two pages on two clusters in one call", () => {
  it("A (440 Hz, Frankfurt) and B (880 Hz, New York) hear each other; the backend gets both streams", async () => {
    const a = await openTonePage(h, CITIES.frankfurt);
    const sa = await a.connect("/v1/realtime/calls", TONE_A_HZ);
    expect(sa.error, JSON.stringify(sa)).toBeNull();
    expect(sa.cluster).toBe("fra-local");
    const callId = callIdOf(sa.location);
    // Before anyone joins, A hears only its own echo.
    const alone = await a.waitFor((s) => heardTone(s, TONE_A_HZ), "A hears its own echo");
    expect(alone.levels[TONE_B_HZ]!).toBeLessThan(ABSENT_SHARE * alone.levels[TONE_A_HZ]!);

    const b = await openTonePage(h, CITIES.newYork);
    const sb = await b.connect(`/v1/realtime/calls/${callId}/participants`, TONE_B_HZ);
    expect(sb.error, JSON.stringify(sb)).toBeNull();
    expect(sb.status).toBe(201);
    expect(sb.cluster).toBe("iad-local"); // the joiner's nearest cluster, not the owner's
    const m = new RegExp(`^/v1/realtime/calls/${callId}/participants/(prt_[A-Za-z0-9_-]{16})$`).exec(
      sb.location ?? "",
    );
    expect(m, String(sb.location)).not.toBeNull();
    const pid = m![1]!;

    // Each page hears the other's tone (and its own echo: the backend echoes each participant to it).
    const ha = await a.waitFor(
      (s) => heardTone(s, TONE_B_HZ) && heardTone(s, TONE_A_HZ),
      "A hears B's 880 Hz",
      40_000,
    );
    const hb = await b.waitFor(
      (s) => heardTone(s, TONE_A_HZ) && heardTone(s, TONE_B_HZ),
      "B hears A's 440 Hz",
      40_000,
    );
    console.log(`A hears ${JSON.stringify(ha.levels)}, B hears ${JSON.stringify(hb.levels)}`);

    // The backend received both labelled streams: slot 1 (A, the owner's client) and B's slot.
    const joined = await a.waitFor(
      (s) => eventsOf(s, "participant.joined").length > 0,
      "participant.joined at A",
    );
    const ev = eventsOf(joined, "participant.joined").find((e) => e.participant_id === pid);
    expect(ev, JSON.stringify(joined.events)).toBeDefined();
    const slot = ev!.slot!;
    expect(slot).toBeGreaterThanOrEqual(2);
    const counts = await waitFor(
      echoStatus,
      (st) => (st.framesBySlot["1"] ?? 0) > 50 && (st.framesBySlot[String(slot)] ?? 0) > 50,
      "both labelled streams at the echo agent",
    );
    expect(Object.keys(counts.framesBySlot)).toEqual(expect.arrayContaining(["1", String(slot)]));
    // B's page learns the roster too.
    await b.waitFor((s) => eventsOf(s, "participant.joined").length > 0, "participant.joined at B");

    // The roster through the edge lists B.
    const roster = await edgeGet(`/v1/realtime/calls/${callId}/participants`);
    expect(roster.status).toBe(200);
    expect(JSON.stringify(roster.body)).toContain(pid);

    // B leaves: A's call keeps running and A hears B's tone no more; A is told.
    expect(await b.request("DELETE", sb.location!)).toBe(204);
    const left = await a.waitFor(
      (s) => eventsOf(s, "participant.left").some((e) => e.participant_id === pid),
      "participant.left at A",
    );
    expect(eventsOf(left, "participant.left").find((e) => e.participant_id === pid)?.reason).toBeDefined();
    const after = await a.waitFor(
      (s) => heardTone(s, TONE_A_HZ) && s.levels[TONE_B_HZ]! < ABSENT_SHARE * s.levels[TONE_A_HZ]!,
      "A alone again: its own echo, no 880 Hz",
      30_000,
    );
    expect(after.connection).toBe("connected");
    const st = await callStatus(h, callId);
    expect([st.status, st.body.state]).toEqual([200, "connected"]);
    await b.close();

    // A second joiner; ending the call (A hangs up) ends it too.
    const c = await openTonePage(h, CITIES.newYork);
    const sc = await c.connect(`/v1/realtime/calls/${callId}/participants`, TONE_B_HZ);
    expect(sc.error, JSON.stringify(sc)).toBeNull();
    await c.waitFor((s) => heardTone(s, TONE_A_HZ), "C hears A");
    expect(await a.request("DELETE", sa.location!)).toBeLessThan(300);
    const ended = await c.waitFor(
      (s) =>
        s.events.some((e) => /call_ended|session\.ended|hub_lost/.test(e)) || s.connection !== "connected",
      "C's leg ends with the call",
      30_000,
    );
    console.log(
      `C after the call ended: connection ${ended.connection}, last events ${ended.events.slice(-3).join(" ")}`,
    );
    const gone = await edgeGet(sc.location!);
    expect(
      gone.status === 404 || gone.status === 410 || gone.body.state === "ended",
      JSON.stringify(gone),
    ).toBe(true);
    await a.close();
    await c.close();
  }, 240_000);
});
