// Per-hop repair on a real conference hop: a UDP forwarder between a leg and its hub (both ways:
// the leg advertises the forwarder's address, as the hub only takes a participant's frames from
// the address its hello names) drops every 20th media frame from the leg (5 %, deterministic). With NACK the hub asks for each gap and the
// leg's history sends it again, so nothing is lost; with CONFERENCE_NACK=0 at the hub the same
// 5 % stay lost. (The statistical measurement with delay is test/cascade/repair.test.ts.)
import { afterAll, describe, expect, it } from "vitest";
import { ConferenceKind } from "../../shared/conference/frame.ts";
import {
  backboneKeys,
  eventsOf,
  join,
  lossyForwarder,
  sendTone,
  startConferenceHarness,
} from "./helpers/conference.ts";
import type { Harness } from "./helpers/harness.ts";
import { until } from "./helpers/harness.ts";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function run(nack: boolean) {
  const keys = backboneKeys();
  let media = 0;
  const fwd = await lossyForwarder((msg) => msg[2] === ConferenceKind.media && ++media % 20 === 0);
  cleanup.push(fwd.close);
  const hub: Harness = await startConferenceHarness(1, keys, { nack });
  const leg: Harness = await startConferenceHarness(2, keys, { advertise: fwd.advertise });
  fwd.to(hub.t.conferences!.socket.address);
  cleanup.push(
    () => leg.close(),
    () => hub.close(),
  );
  const { client: owner, callId } = await hub.connectClient({ codecs: "opus" });
  const { client: joiner } = await join(hub, leg, callId, {}, `127.0.0.1:${fwd.port}`);
  cleanup.push(() => joiner.close());
  await until(() => eventsOf(owner, "participant.joined").length === 1, "joined");
  await sendTone(joiner, 880, 200);
  const stats = await until(async () => {
    const l = (await (await hub.call("GET", `/v1/calls/${callId}/participants`)).json()) as {
      participants: { repair?: Record<string, { received: number; lost: number; repaired: number }> }[];
    };
    const r = l.participants[1]?.repair?.["2"];
    // Settled: every frame accounted for (received or given up) after the give-up time.
    return r && r.received + r.lost >= 199 ? r : undefined;
  }, "the joiner's stream accounted for at the hub");
  return { stats, dropped: fwd.dropped() };
}

describe("repair on the hop between a leg and its hub", () => {
  it("with NACK, every dropped frame is sent again and none is lost", async () => {
    const { stats, dropped } = await run(true);
    expect(dropped).toBeGreaterThanOrEqual(9);
    expect(stats.repaired).toBeGreaterThanOrEqual(dropped - 1);
    expect(stats.lost).toBe(0);
  });

  it("without NACK (CONFERENCE_NACK=0 at the hub), the 5 % stay lost", async () => {
    const { stats, dropped } = await run(false);
    expect(dropped).toBeGreaterThanOrEqual(9);
    expect(stats.repaired).toBe(0);
    expect(stats.lost).toBeGreaterThanOrEqual(dropped - 1);
  });
});
