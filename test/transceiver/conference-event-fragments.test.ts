// Large events across the cascade (docs/wire-formats.md §8, event fragments), with real
// transceivers, real werift clients and the echo agent as the backend, through a UDP hop that
// loses 5 % of the event datagrams each way (each seq's first transmission, seeded): the
// backend's 20 KB events (the conversation items it echoes for a long user text) reach the
// joiner's data channel intact, repaired per fragment; a joiner's 5 KB event reaches the backend
// intact. A 200 KB backend event is refused at the hub and counted, the backend is not sent an
// error for it, and the next event flows. Without NACK, one fragment lost drops its whole event
// (transceiver.events_lost at the joiner) and the events after it arrive intact.
import { afterAll, describe, expect, it } from "vitest";
import { ConferenceKind } from "../../shared/conference/frame.ts";
import { seededRandom as random } from "../support/seeded-random.ts";
import type { TestClient } from "./helpers/client.ts";
import {
  backboneKeys,
  eventsOf,
  join,
  lossyForwarder,
  startConferenceHarness,
} from "./helpers/conference.ts";
import type { Harness } from "./helpers/harness.ts";
import { until } from "./helpers/harness.ts";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

type Ev = Record<string, unknown>;
const agentEvents = (h: Harness, type: string): Ev[] =>
  (h.agent.events as Ev[]).filter((e) => e.type === type);
const send = (c: TestClient, ev: Ev) => c.dc!.send(JSON.stringify(ev));

function counter(h: Harness, name: string, label: string): number {
  const re = new RegExp(`${name}\\{[^}]*${label}[^}]*\\} (\\d+)`);
  return Number(re.exec(h.t.metrics.render())?.[1] ?? 0);
}
const drops = (h: Harness, reason: string) =>
  counter(h, "gr_transceiver_conference_drops_total", `reason="${reason}"`);

/**
 * A lossy event hop: each event seq's first transmission is dropped with probability `rate`, or
 * when `force` says so (retransmissions pass: the repair's own losses are the unit tests' part).
 */
function eventLoss(rate: number, seed: number, force?: (seq: number, flags: number) => boolean) {
  const rnd = random(seed);
  const seen = new Set<number>();
  const dropped: number[] = [];
  const drop = (msg: Buffer): boolean => {
    if (msg[2] !== ConferenceKind.event) return false;
    const seq = (msg[20]! << 8) | msg[21]!;
    if (seen.has(seq)) return false;
    seen.add(seq);
    if (!(rnd() < rate || force?.(seq, msg[22]!))) return false;
    dropped.push(seq);
    return true;
  };
  return { drop, dropped, seen };
}

/** The owner's call on `hub`, a joiner on `leg` through the lossy hop; both data channels open. */
async function cascade(
  nack: boolean,
  toLeg: ReturnType<typeof eventLoss>,
  toHub: ReturnType<typeof eventLoss>,
) {
  const keys = backboneKeys();
  const fwd = await lossyForwarder(toHub.drop, toLeg.drop);
  cleanup.push(fwd.close);
  const hub = await startConferenceHarness(1, keys, { nack });
  const leg = await startConferenceHarness(2, keys, { nack, advertise: fwd.advertise });
  fwd.to(hub.t.conferences!.socket.address);
  cleanup.push(
    () => leg.close(),
    () => hub.close(),
  );
  const { client: owner, callId } = await hub.connectClient({ codecs: "opus" });
  const { client: joiner, admission: a } = await join(hub, leg, callId, {}, `127.0.0.1:${fwd.port}`);
  cleanup.push(() => joiner.close());
  await until(() => eventsOf(owner, "participant.joined").length === 1, "joined");
  await until(() => joiner.dc?.readyState === "open", "the joiner's data channel");
  await until(() => owner.dc?.readyState === "open", "the owner's data channel");
  return { hub, leg, owner, joiner, callId, admission: a };
}

/** A user message item of `n` characters, multi-byte ones among them. */
function longText(n: number, tag: string): string {
  const unit = `${tag}: Grüße aus Zürich ☀️, the weather is fine. `;
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}
const itemText = (e: Ev): string =>
  ((((e.item as Ev).content as Ev[])[0] as Ev).text as string | undefined) ?? "";

describe("large events through a lossy hop (5 %), repaired per fragment", () => {
  it("the backend's 20 KB events reach the joiner intact; the joiner's 5 KB event reaches the backend", async () => {
    // Also the first fragment of the first multi-fragment event: a start lost and repaired.
    let forced = false;
    const toLeg = eventLoss(0.05, 1, (_seq, flags) => {
      if (forced || flags !== 1) return false;
      forced = true;
      return true;
    });
    // And the joiner's event loses its second fragment once.
    let forcedUp = false;
    const toHub = eventLoss(0.05, 2, (_seq, flags) => {
      if (forcedUp || flags !== 3) return false;
      forcedUp = true;
      return true;
    });
    const { hub, owner, joiner, admission } = await cascade(true, toLeg, toHub);

    const text = longText(19_500, "owner");
    send(owner, {
      type: "conversation.item.create",
      event_id: "long",
      item: { type: "message", role: "user", content: [{ type: "input_text", text }] },
    });
    const done = await until(
      () => eventsOf(joiner, "conversation.item.done").find((e) => itemText(e) === text),
      "the 20 KB conversation.item.done at the joiner",
    );
    expect(Buffer.byteLength(JSON.stringify(done))).toBeGreaterThan(20_000); // 19 fragments
    await until(
      () =>
        eventsOf(joiner, "conversation.item.created").some((e) => itemText(e) === text) &&
        eventsOf(joiner, "conversation.item.added").some((e) => itemText(e) === text),
      "created and added too",
    );
    expect(toLeg.dropped.length).toBeGreaterThanOrEqual(1);
    expect(forced).toBe(true);

    // The joiner's own 5 KB event: to the backend intact, tagged.
    const five = longText(5_000, "joiner");
    send(joiner, {
      type: "conversation.item.create",
      event_id: "five",
      item: { type: "message", role: "user", content: [{ type: "input_text", text: five }] },
    });
    const got = await until(
      () => agentEvents(hub, "conversation.item.create").find((e) => e.event_id === "five"),
      "the joiner's 5 KB item at the backend",
    );
    expect(itemText(got)).toBe(five);
    expect(forcedUp).toBe(true);
    expect(got).toMatchObject({ participant_id: admission.participantId, slot: admission.slot });
    await until(
      () => eventsOf(joiner, "conversation.item.done").some((e) => itemText(e) === five),
      "its echo back at the joiner",
    );
    // Everything repaired: nothing given up, nothing broken.
    expect(eventsOf(joiner, "transceiver.events_lost")).toEqual([]);
    expect(eventsOf(joiner, "error")).toEqual([]);
    for (const reason of ["event_fragment", "bad_event", "event_too_large"])
      expect(drops(hub, reason)).toBe(0);
    console.log(
      `event datagrams dropped (then repaired): ${toLeg.dropped.length} of ${toLeg.seen.size} hub->leg, ` +
        `${toHub.dropped.length} of ${toHub.seen.size} leg->hub`,
    );
  });

  it("a 200 KB backend event is refused and counted; no error to the backend; the next event flows", async () => {
    const { hub, owner, joiner, callId } = await cascade(true, eventLoss(0, 3), eventLoss(0, 4));
    const errorsBefore = agentEvents(hub, "error").length;
    const huge = JSON.stringify({ type: "response.done", response: { transcript: "z".repeat(200_000) } });
    // The backend's event as the bridge hands it to the conference (the owner's client has it).
    hub.t.calls.get(callId)!.tap!.backendEvent!(huge);
    expect(drops(hub, "event_too_large")).toBe(1);
    send(owner, { type: "ping", event_id: "after_huge" });
    await until(() => eventsOf(joiner, "pong").length >= 1, "the pong at the joiner");
    expect(eventsOf(joiner, "response.done")).toEqual([]);
    expect(agentEvents(hub, "error").length).toBe(errorsBefore);
    expect(eventsOf(joiner, "transceiver.events_lost")).toEqual([]);
  });
});

describe("a fragment lost for good (CONFERENCE_NACK=0)", () => {
  it("drops its whole event: the joiner is told, the events after it arrive intact", async () => {
    // The fifth fragment of the first multi-fragment event (conversation.item.created).
    let inFirst = -1;
    const toLeg = eventLoss(0, 5, (seq, flags) => {
      if (inFirst < 0 && flags === 1) inFirst = seq;
      return inFirst >= 0 && seq === ((inFirst + 4) & 0xffff);
    });
    const { owner, joiner } = await cascade(false, toLeg, eventLoss(0, 6));
    const text = longText(19_500, "owner");
    send(owner, {
      type: "conversation.item.create",
      item: { type: "message", role: "user", content: [{ type: "input_text", text }] },
    });
    const lost = await until(
      () => eventsOf(joiner, "transceiver.events_lost")[0],
      "events_lost at the joiner",
    );
    expect(lost).toEqual({ type: "transceiver.events_lost", direction: "to_client", lost: 1 });
    await until(
      () =>
        eventsOf(joiner, "conversation.item.added").some((e) => itemText(e) === text) &&
        eventsOf(joiner, "conversation.item.done").some((e) => itemText(e) === text),
      "added and done intact",
    );
    expect(toLeg.dropped).toHaveLength(1);
    expect(eventsOf(joiner, "conversation.item.created")).toEqual([]);
  });
});
