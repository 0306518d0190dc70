// The cascade in real Chromium (issue 16, "Proof"). First the harness itself on today's
// single-client calls: two pages in two cities land on two clusters; the page sending 440 Hz
// hears its own echo (440 present, 880 absent), the page sending 880 Hz the reverse. Then page
// A in Frankfurt creates a call (cluster fra-local), page B in New York joins it with POST
// /v1/realtime/calls/{id}/participants and is steered to its own nearest cluster (iad-local).
// A sends 440 Hz, B 880 Hz; each hears the other's tone in what it receives (and its own,
// echoed by the backend to it alone); the echo agent received both labelled streams (slot 1
// and B's slot); participant.joined / .left reach both pages' oai-events (a third page joins
// and leaves). B leaving leaves A's call running, and A hears itself alone again; ending the
// call ends a joiner. One system for the file; the cascade's steps share one call, in order.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callStatus } from "../support/namespaced-system.ts";
import { ABSENT_SHARE, HEARD, TONE_A_HZ, TONE_B_HZ } from "../support/tone.ts";
import { waitFor } from "../support/wait.ts";
import {
  type CascadeBrowser,
  CITIES,
  callIdOf,
  heardTone,
  openTonePage,
  startCascadeBrowser,
  type TonePage,
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

const echoSlots = async (): Promise<Record<string, number>> => {
  const r = await fetch(`http://${h.system.plan.host}:${h.system.plan.echoPort}/status`);
  return ((await r.json()) as { framesBySlot: Record<string, number> }).framesBySlot;
};

const edge = async (method: string, path: string) => {
  const r = await fetch(`${h.system.edgeUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${h.system.apiKey}` },
  });
  return { status: r.status, body: (await r.json().catch(() => ({}))) as Record<string, unknown> };
};

/** On failure, the call's status at its transceiver joins the message (packets, backend, conference). */
async function explained<T>(callId: string, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    const st = await callStatus(h, callId).catch(() => null);
    (e as Error).message += `\n--- call status ---\n${JSON.stringify(st?.body)}`;
    throw e;
  }
}

/** A hears `freq` and not the other tone. */
const onlyTone = (s: ToneState, freq: number, other: number) =>
  heardTone(s, freq) && s.levels[other]! < ABSENT_SHARE * s.levels[freq]!;

describe("the harness on single-client calls", () => {
  it("two pages in two cities, two clusters, each hears only its own tone echoed", async () => {
    const a = await openTonePage(h, CITIES.frankfurt);
    const b = await openTonePage(h, CITIES.newYork);
    const [sa, sb] = await Promise.all([
      a.connect("/v1/realtime/calls", TONE_A_HZ),
      b.connect("/v1/realtime/calls", TONE_B_HZ),
    ]);
    expect(sa.error, JSON.stringify(sa)).toBeNull();
    expect(sb.error, JSON.stringify(sb)).toBeNull();
    expect(sa.cluster).toBe("fra-local");
    expect(sb.cluster).toBe("iad-local");

    const ea = await a.waitFor((s) => heardTone(s, TONE_A_HZ), "page A hears 440 Hz", 40_000);
    const eb = await b.waitFor((s) => heardTone(s, TONE_B_HZ), "page B hears 880 Hz", 40_000);
    expect(ea.levels[TONE_A_HZ]!).toBeGreaterThanOrEqual(HEARD);
    expect(ea.levels[TONE_B_HZ]!).toBeLessThan(ABSENT_SHARE * ea.levels[TONE_A_HZ]!);
    expect(eb.levels[TONE_A_HZ]!).toBeLessThan(ABSENT_SHARE * eb.levels[TONE_B_HZ]!);

    // The call status agrees on where each call lives.
    const [ca, cb] = await Promise.all([
      callStatus(h, callIdOf(sa.location)),
      callStatus(h, callIdOf(sb.location)),
    ]);
    expect([ca.status, ca.body.clusterId, ca.body.state]).toEqual([200, 1, "connected"]);
    expect([cb.status, cb.body.clusterId, cb.body.state]).toEqual([200, 2, "connected"]);

    expect(await a.request("DELETE", sa.location!)).toBeLessThan(300);
    expect(await b.request("DELETE", sb.location!)).toBeLessThan(300);
    await a.close();
    await b.close();
  }, 120_000);
});

describe("cascade: two pages on two clusters in one call", () => {
  let a: TonePage;
  let b: TonePage;
  let sa: ToneState;
  let sb: ToneState;
  let callId: string;
  let pid: string;

  it("A (440 Hz, Frankfurt) and B (880 Hz, New York) hear each other; the backend gets both streams", async () => {
    const base = await echoSlots(); // the single-client calls above counted slot 1 too
    a = await openTonePage(h, CITIES.frankfurt);
    sa = await a.connect("/v1/realtime/calls", TONE_A_HZ);
    expect(sa.error, JSON.stringify(sa)).toBeNull();
    expect(sa.cluster).toBe("fra-local");
    callId = callIdOf(sa.location);
    // Before anyone joins, A hears only its own echo.
    await a.waitFor((s) => onlyTone(s, TONE_A_HZ, TONE_B_HZ), "A alone hears its own echo only");

    b = await openTonePage(h, CITIES.newYork);
    sb = await b.connect(`/v1/realtime/calls/${callId}/participants`, TONE_B_HZ);
    expect(sb.error, JSON.stringify(sb)).toBeNull();
    expect(sb.status).toBe(201);
    expect(sb.cluster).toBe("iad-local"); // the joiner's nearest cluster, not the owner's
    const m = new RegExp(`^/v1/realtime/calls/${callId}/participants/(prt_[A-Za-z0-9_-]{16})$`).exec(
      sb.location ?? "",
    );
    expect(m, String(sb.location)).not.toBeNull();
    pid = m![1]!;

    // Each hears the other's tone, and its own echo (the backend echoes each participant to it).
    const ha = await a.waitFor(
      (s) => heardTone(s, TONE_B_HZ) && heardTone(s, TONE_A_HZ),
      "A hears B",
      40_000,
    );
    const hb = await b.waitFor(
      (s) => heardTone(s, TONE_A_HZ) && heardTone(s, TONE_B_HZ),
      "B hears A",
      40_000,
    );
    console.log(`A hears ${JSON.stringify(ha.levels)}, B hears ${JSON.stringify(hb.levels)}`);

    // The events name B; the backend received both labelled streams, slot 1 (A) and B's.
    const joined = await a.waitFor(
      (s) => eventsOf(s, "participant.joined").some((e) => e.participant_id === pid),
      "participant.joined for B at A",
    );
    const slot = eventsOf(joined, "participant.joined").find((e) => e.participant_id === pid)!.slot!;
    expect(slot).toBeGreaterThanOrEqual(2);
    await b.waitFor((s) => eventsOf(s, "participant.joined").length > 0, "participant.joined at B");
    const slots = await waitFor(
      echoSlots,
      (st) =>
        (st["1"] ?? 0) - (base["1"] ?? 0) > 50 && (st[String(slot)] ?? 0) - (base[String(slot)] ?? 0) > 50,
      "both labelled streams at the echo agent",
    );
    expect(Object.keys(slots).sort()).toEqual(["1", String(slot)].sort());
    const roster = await edge("GET", `/v1/realtime/calls/${callId}/participants`);
    expect(roster.status).toBe(200);
    expect(JSON.stringify(roster.body)).toContain(pid);
  }, 120_000);

  it("a third participant's leave reaches both pages' oai-events", async () => {
    const c = await openTonePage(h, CITIES.newYork);
    const sc = await c.connect(`/v1/realtime/calls/${callId}/participants`, TONE_B_HZ);
    expect(sc.error, JSON.stringify(sc)).toBeNull();
    const cid = /participants\/(prt_[A-Za-z0-9_-]{16})$/.exec(sc.location ?? "")![1]!;
    const joinedBoth = (s: ToneState) =>
      eventsOf(s, "participant.joined").some((e) => e.participant_id === cid);
    await a.waitFor(joinedBoth, "C's participant.joined at A");
    await b.waitFor(joinedBoth, "C's participant.joined at B");
    expect(await c.request("DELETE", sc.location!)).toBe(204);
    const leftBoth = (s: ToneState) => eventsOf(s, "participant.left").some((e) => e.participant_id === cid);
    await a.waitFor(leftBoth, "C's participant.left at A");
    await b.waitFor(leftBoth, "C's participant.left at B");
    await c.close();
  }, 60_000);

  it("B leaving (DELETE) leaves A's call running; A is told", async () => {
    expect(await b.request("DELETE", sb.location!)).toBe(204);
    const left = await a.waitFor(
      (s) => eventsOf(s, "participant.left").some((e) => e.participant_id === pid),
      "participant.left for B at A",
    );
    expect(eventsOf(left, "participant.left").find((e) => e.participant_id === pid)!.reason).toBeTruthy();
    const st = await callStatus(h, callId);
    expect([st.status, st.body.state]).toEqual([200, "connected"]);
    // A's media keeps flowing both ways.
    const now = await a.state();
    const later = await explained(
      callId,
      a.waitFor(
        (s) => s.packetsReceived > now.packetsReceived + 50 && s.packetsSent > now.packetsSent + 50,
        "A's media after B left",
      ),
    );
    expect(later.connection).toBe("connected");
    await b.close();
  }, 60_000);

  it("after B left, A hears its own echo again and B's tone no more", async () => {
    await explained(
      callId,
      a.waitFor((s) => onlyTone(s, TONE_A_HZ, TONE_B_HZ), "A alone again: its own echo only", 30_000),
    );
  }, 60_000);

  it("ending the call ends a joiner", async () => {
    const c = await openTonePage(h, CITIES.newYork);
    const sc = await c.connect(`/v1/realtime/calls/${callId}/participants`, TONE_B_HZ);
    expect(sc.error, JSON.stringify(sc)).toBeNull();
    await c.waitFor((s) => heardTone(s, TONE_B_HZ), "C connected and hearing its own echo", 40_000);
    expect((await edge("DELETE", `/v1/realtime/calls/${callId}`)).status).toBe(204);
    const ended = await waitFor(
      () => edge("GET", sc.location!),
      (r) => r.status === 404 || r.status === 410 || r.body.state === "ended",
      "C's participant gone with the call",
    );
    console.log(`C's participant after the call ended: ${JSON.stringify(ended)}`);
    // C's page stops receiving: its leg ended.
    const quiet = await c.waitFor(
      (s) => s.connection !== "connected" || s.rms === 0,
      "C's leg ended (no more audio)",
      30_000,
    );
    console.log(
      `C after the end: connection ${quiet.connection}, events ${quiet.events.slice(-2).join(" ")}`,
    );
    await a.close();
    await c.close();
  }, 120_000);
});
