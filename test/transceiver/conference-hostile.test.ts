// Hostile datagrams at a hub's conference socket, during a live conference of real werift
// clients: garbage, a forged MAC, an unknown key, an unknown conference, an unknown participant,
// a MAC-valid frame of the joined participant from elsewhere than its leg (a replayed counter
// among them) and a second leg's hello for it, a hello naming an address outside the backbone.
// Each is dropped and counted by reason; the call and its leg go on. Then the hub dies: the leg
// ends (hub_lost).

import { randomBytes } from "node:crypto";
import { createSocket } from "node:dgram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeMac } from "../../regional/common/hmac.ts";
import {
  ConferenceKind,
  encodeConferenceFrame,
  newConferenceHeader,
  parseConferenceIdHex,
} from "../../shared/conference/frame.ts";
import { KEEPALIVE_TIMING_BYTES } from "../../shared/conference/keepalive.ts";
import { encodeHello } from "../../shared/conference/payloads.ts";
import { parseCidr } from "../../shared/topology/address.ts";
import type { TestClient } from "./helpers/client.ts";
import {
  type Admission,
  admit,
  backboneKeys,
  eventsOf,
  join,
  sendTone,
  startConferenceHarness,
} from "./helpers/conference.ts";
import type { Harness } from "./helpers/harness.ts";
import { until } from "./helpers/harness.ts";

const keys = backboneKeys();
let hub: Harness;
let legSide: Harness;
let owner: TestClient;
let callId: string;
let j: Awaited<ReturnType<typeof join>>;
const sock = createSocket("udp4");

beforeAll(async () => {
  const cidr = parseCidr("127.0.0.0/8");
  if (typeof cidr === "string") throw new Error(cidr);
  hub = await startConferenceHarness(1, keys, { cidrs: [cidr] });
  legSide = await startConferenceHarness(2, keys);
  ({ client: owner, callId } = await hub.connectClient({ codecs: "opus" }));
  j = await join(hub, legSide, callId);
  await until(() => eventsOf(owner, "participant.joined").length === 1, "joined");
});
afterAll(async () => {
  sock.close();
  await legSide?.close();
  await hub?.close();
});

function frame(
  a: Admission,
  o: { kind?: number; slot?: number; counter?: number; conf?: string },
  payload: Uint8Array = new Uint8Array(KEEPALIVE_TIMING_BYTES), // a keepalive's timing block (no echo)
  ring = keys,
) {
  const h = newConferenceHeader();
  parseConferenceIdHex(o.conf ?? a.conferenceId, h);
  h.kind = o.kind ?? ConferenceKind.keepalive;
  h.keyId = ring.active.id;
  h.sourceSlot = o.slot ?? a.slot;
  h.destinationSlot = 0;
  h.counter = o.counter ?? 1;
  const buf = new Uint8Array(2000);
  const end = encodeConferenceFrame(buf, 0, h, payload, nodeMac(ring));
  if (end < 0) throw new Error("encode");
  return buf.subarray(0, end);
}

const send = (b: Uint8Array) => {
  const at = hub.t.conferences!.socket.address;
  sock.send(b, at.port, at.host);
};

function drops(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of hub.t.metrics
    .render()
    .matchAll(/gr_transceiver_conference_drops_total\{cluster="1",reason="(\w+)"\} (\d+)/g))
    out[m[1]!] = Number(m[2]);
  return out;
}

describe("hostile conference datagrams", () => {
  it("drops each and counts it by reason; the conference goes on", async () => {
    const a = j.admission;
    const forger = backboneKeys();
    send(randomBytes(5));
    const junk = randomBytes(200);
    junk[0] = 0; // not a frame's first byte (0x47 would make it a malformed frame, counted apart)
    send(junk);
    send(frame(a, {}, undefined, forger)); // same key id, another secret
    const otherKey = frame(a, {});
    otherKey[3] = 7; // a key id the ring does not hold
    send(otherKey);
    send(frame(a, { conf: "0123456789abcdef" }));
    send(frame(a, { slot: 77 }));
    send(frame(a, { counter: 0 })); // not from the leg's address (and a replay of its hello's counter)
    const hello = new Uint8Array(100);
    const helloOf = (participantId: string) =>
      hello.subarray(
        0,
        encodeHello(hello, 0, {
          participantId,
          clusterId: 9,
          transceiverId: 9,
          ipv6: false,
          port: 9,
          ip: Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1),
          legId: j.legId,
        }),
      );
    send(frame(a, { kind: ConferenceKind.hello, counter: 1_000_000 }, helloOf(a.participantId))); // a second leg
    // An admitted participant whose (first) hello names an address outside the backbone.
    const other = (await (await admit(hub, callId)).json()) as Admission;
    send(frame(other, { kind: ConferenceKind.hello, counter: 0 }, helloOf(other.participantId)));
    const want = [
      "bad_mac",
      "unknown_key",
      "unknown_conference",
      "unknown_participant",
      "wrong_leg",
      "bad_address",
    ];
    const d = await until(
      () => {
        const x = drops();
        return want.every((r) => (x[r] ?? 0) >= 1) && (x.truncated ?? 0) + (x.bad_magic ?? 0) >= 2
          ? x
          : undefined;
      },
      () => `every drop reason; have ${JSON.stringify(drops())}`,
    );
    expect(want.filter((r) => !((d[r] ?? 0) >= 1))).toEqual([]);
    expect(d.wrong_leg).toBe(2);
    expect(d.replay ?? 0).toBe(0); // a frame from elsewhere never reaches the leg's replay window
    // Untouched: the leg stays where its own hello said, and both directions still carry audio.
    const list = (await (await hub.call("GET", `/v1/calls/${callId}/participants`)).json()) as {
      participants: { state: string; address: string | null; leg: unknown }[];
    };
    expect(list.participants[1]).toMatchObject({
      state: "connected",
      leg: { clusterId: 2, transceiverId: 1, legId: j.legId },
    });
    expect(list.participants[2]).toMatchObject({ state: "admitted", leg: null });
    expect(list.participants[1]!.address).toBe(`127.0.0.1:${legSide.t.conferences!.socket.address.port}`);
    const from = j.client.received.length;
    await sendTone(owner, 440, 40);
    await until(() => j.client.received.length - from >= 20, "the leg still hears the owner");
  });

  it("the hub dying ends the leg (hub_lost) after 3 s of silence", async () => {
    await hub.t.conferences!.socket.close();
    await until(async () => {
      const s = (await (await legSide.call("GET", `/v1/calls/${j.legId}`)).json()) as { state: string };
      return s.state === "ended";
    }, "the leg ended");
    const s = (await (await legSide.call("GET", `/v1/calls/${j.legId}`)).json()) as { endReason: string };
    expect(s.endReason).toBe("hub_lost");
  });
});
