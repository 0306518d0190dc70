// Per-hop repair on a real conference hop: a UDP forwarder between a leg and its hub (both ways:
// the leg advertises the forwarder's address, as the hub only takes a participant's frames from
// the address its hello names) drops every 20th media frame from the leg (5 %, deterministic). With NACK the hub asks for each gap and the
// leg's history sends it again, so nothing is lost; with CONFERENCE_NACK=0 at the hub the same
// 5 % stay lost. (The statistical measurement with delay is test/cascade/repair.test.ts.)
import { createSocket, type Socket } from "node:dgram";
import { afterAll, describe, expect, it } from "vitest";
import { ConferenceKind } from "../../shared/conference/frame.ts";
import { createTestClient } from "./helpers/client.ts";
import { backboneKeys, eventsOf, sendTone, startConferenceHarness } from "./helpers/conference.ts";
import type { Harness } from "./helpers/harness.ts";
import { until } from "./helpers/harness.ts";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** Forwards the leg's datagrams to the hub, dropping every `every`-th media frame, and the hub's back. */
async function lossyForwarder(every: number) {
  const s: Socket = createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  let media = 0;
  let dropped = 0;
  let hub: { host: string; port: number } | undefined;
  let leg: number | undefined;
  s.on("message", (msg, from) => {
    if (hub === undefined) return;
    if (from.port === hub.port) {
      if (leg !== undefined) s.send(msg, leg, "127.0.0.1");
      return;
    }
    leg = from.port;
    if (msg[2] === ConferenceKind.media && ++media % every === 0) {
      dropped++;
      return;
    }
    s.send(msg, hub.port, hub.host);
  });
  cleanup.push(() => new Promise((r) => s.close(() => r())));
  return {
    port: s.address().port,
    dropped: () => dropped,
    to: (h: { host: string; port: number }) => {
      hub = h;
    },
  };
}

async function run(nack: boolean) {
  const keys = backboneKeys();
  const fwd = await lossyForwarder(20);
  const hub: Harness = await startConferenceHarness(1, keys, { nack });
  const advertise = { host: "127.0.0.1", port: fwd.port, ipv6: false };
  const leg: Harness = await startConferenceHarness(2, keys, { advertise });
  fwd.to(hub.t.conferences!.socket.address);
  cleanup.push(
    () => leg.close(),
    () => hub.close(),
  );
  const { client: owner, callId } = await hub.connectClient({ codecs: "opus" });
  const a = await hub.call("POST", `/v1/calls/${callId}/participants`, {});
  const admission = (await a.json()) as { participantId: string; hub: { address: string } };
  const joiner = createTestClient({ codecs: "opus" });
  cleanup.push(() => joiner.close());
  const res = await leg.call("POST", "/v1/legs", {
    sdp: await joiner.createOffer(),
    ingress: { vip: `${leg.relay.vip.host}:${leg.relay.vip.port}`, popId: 1 },
    conference: { callId, ...admission, hub: { ...admission.hub, address: `127.0.0.1:${fwd.port}` } },
  });
  expect(res.status).toBe(201);
  await joiner.setAnswer(((await res.json()) as { sdp: string }).sdp);
  await joiner.connected();
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
