// Who may speak for a participant, and to whom the hub speaks (docs/wire-formats.md §8): the
// first MAC-valid hello binds the participant to its leg (cluster, transceiver, leg id, address);
// a second leg's hello and any frame from another address are dropped as wrong_leg before they
// touch the bound leg's replay window. The hub addresses every frame to one leaf, with one
// counter per leaf from 0; a leg drops a frame for another slot (wrong_destination).
import { createSocket, type Socket } from "node:dgram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeMac } from "../../regional/common/hmac.ts";
import { LegBinding } from "../../regional/transceiver/conference/addr.ts";
import { HubConference } from "../../regional/transceiver/conference/hub.ts";
import { LegUplink } from "../../regional/transceiver/conference/leg.ts";
import { ConferenceMetrics } from "../../regional/transceiver/conference/metrics.ts";
import { ConferenceSocket } from "../../regional/transceiver/conference/socket.ts";
import { conferenceWithDefaults } from "../../regional/transceiver/config.ts";
import { TransceiverMetrics } from "../../regional/transceiver/metrics.ts";
import {
  ConferenceKind,
  decodeConferenceFrame,
  newConferenceHeader,
  parseConferenceIdHex,
} from "../../shared/conference/frame.ts";
import { KEEPALIVE_TIMING_BYTES } from "../../shared/conference/keepalive.ts";
import { encodeRoster, newRosterEntries } from "../../shared/conference/payloads.ts";
import { backboneKeys, conferenceFrame, fakeHubCall, helloPayload } from "./helpers/conference.ts";
import { until } from "./helpers/harness.ts";

const keys = backboneKeys();
const mac = nodeMac(keys);
const LEG_A = "rtc_EQACAAcBAgMEBQYHCAkKCwwNDg9c5WWlpdqsXLhQtWlKS_XQ";
const LEG_B = "rtc_EQACAAcBAgMEBQYHCAkKCwwNDg9c5WWlpdqsXLhQtWlKS_XA";
let sock: ConferenceSocket;
const sockets: Socket[] = [];

async function leaf(): Promise<{ s: Socket; port: number; got: Buffer[] }> {
  const s = createSocket("udp4");
  sockets.push(s);
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  const got: Buffer[] = [];
  s.on("message", (m) => got.push(m));
  return { s, port: s.address().port, got };
}
const sendFrom = (l: { s: Socket }, b: Uint8Array) => l.s.send(b, sock.address.port, "127.0.0.1");

beforeAll(async () => {
  sock = await ConferenceSocket.open(
    conferenceWithDefaults(keys),
    new ConferenceMetrics(new TransceiverMetrics(1)),
  );
});
afterAll(async () => {
  for (const s of sockets) s.close();
  await sock.close();
});

describe("a participant bound to the leg of its first hello", () => {
  it("drops a second leg's hello and frames from elsewhere as wrong_leg; the bound leg goes on", async () => {
    const { call } = fakeHubCall();
    const hub = new HubConference(sock, call, { clusterId: 1, transceiverId: 1 }, () => {});
    expect(sock.register(hub)).toBe(true);
    const a = hub.admit(performance.now());
    const legA = await leaf();
    const legB = await leaf();
    const d = sock.metrics.drops;
    const hello = (l: { port: number }, legId: string, counter: number) =>
      conferenceFrame(
        keys,
        a,
        { kind: ConferenceKind.hello, counter },
        helloPayload(a, { port: l.port, legId }),
      );
    sendFrom(legA, hello(legA, LEG_A, 0));
    await until(() => legA.got.length > 0, "the hub's answer to leg A");
    // Leg B (the edge failed over after a timeout): its hello, with a counter far ahead.
    sendFrom(legB, hello(legB, LEG_B, 1000));
    // Leg B's keepalive, and leg A's hello re-sent from B's address (a copy from elsewhere).
    sendFrom(legB, conferenceFrame(keys, a, { kind: ConferenceKind.keepalive, counter: 1001 }));
    await until(() => d.wrong_leg.value >= 2, "leg B dropped");
    expect(hub.list(0)[1]).toMatchObject({
      state: "connected",
      leg: { clusterId: 2, transceiverId: 3, legId: LEG_A },
      address: `127.0.0.1:${legA.port}`,
    });
    // Leg A's next frames (counter 1, 2) are not replays: B's counters never reached its window.
    const replays = d.replay.value;
    sendFrom(legA, conferenceFrame(keys, a, { kind: ConferenceKind.keepalive, counter: 1 }));
    sendFrom(legA, hello(legA, LEG_A, 2));
    await until(() => legA.got.length >= 2, "the hub's second answer to leg A");
    expect(d.replay.value).toBe(replays);
    expect(d.wrong_leg.value).toBe(2);
    // Nothing was ever sent to leg B.
    expect(legB.got).toHaveLength(0);
    hub.ended("hangup");
    sock.unregister(hub);
  });

  it("addresses each leaf's frames to its slot, with a counter per leaf from 0", async () => {
    const { call } = fakeHubCall();
    const hub = new HubConference(sock, call, { clusterId: 1, transceiverId: 1 }, () => {});
    expect(sock.register(hub)).toBe(true);
    const leaves = [await leaf(), await leaf()];
    const adm = leaves.map(() => hub.admit(performance.now()));
    for (const [i, l] of leaves.entries()) {
      const legId = i === 0 ? LEG_A : LEG_B;
      const hello = helloPayload(adm[i]!, { port: l.port, legId });
      sendFrom(l, conferenceFrame(keys, adm[i]!, { kind: ConferenceKind.hello, counter: 0 }, hello));
    }
    await until(() => leaves.every((l) => l.got.length > 0), "both answered");
    const now = performance.now();
    for (let k = 1; k <= 2; k++) hub.tick(now + 1000 * k); // within the 3 s of silence
    hub.backendEvent('{"type":"response.done"}');
    await until(() => leaves.every((l) => l.got.length >= 4), "keepalives and the event at both");
    for (const [i, l] of leaves.entries()) {
      const h = newConferenceHeader();
      const counters = l.got.map((f) => {
        expect(decodeConferenceFrame(f, f.length, h, mac)).toBe("ok");
        expect(h.destinationSlot).toBe(adm[i]!.slot); // never 0 = "everyone"
        return h.counter;
      });
      expect(counters).toEqual(counters.map((_, k) => k));
    }
    hub.ended("hangup");
    sock.unregister(hub);
  });
});

describe("LegBinding.isFrom", () => {
  const ip4 = Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 1, 2, 3);
  const h = { clusterId: 2, transceiverId: 3, legId: LEG_A, ipv6: false, port: 4000 };
  it("matches the bound address and port only (an IPv4-mapped source too)", () => {
    const b = new LegBinding({ ...h, ip: ip4 });
    expect(b.isFrom("10.1.2.3", 4000)).toBe(true);
    expect(b.isFrom("10.1.2.3", 4001)).toBe(false);
    expect(b.isFrom("10.1.2.4", 4000)).toBe(false);
    expect(b.isFrom("::ffff:10.1.2.3", 4000)).toBe(true);
    expect(b.isFrom("::ffff:10.1.2.4", 4000)).toBe(false);
    expect(b.isFrom("not an address", 4000)).toBe(false);
  });
  it("a wildcard hello address (a leg bound to 0.0.0.0 without an advertised address) matches by port", () => {
    const b = new LegBinding({ ...h, ip: new Uint8Array(16) });
    expect(b.isFrom("127.0.0.1", 4000)).toBe(true);
    expect(b.isFrom("127.0.0.1", 4001)).toBe(false);
  });
});

describe("a leg", () => {
  it("drops a frame addressed to another slot (wrong_destination) without moving its window", async () => {
    const hubSide = await leaf();
    const conferenceId = "0102030405060708";
    const h = newConferenceHeader();
    parseConferenceIdHex(conferenceId, h);
    const events: string[] = [];
    const leg = new LegUplink(
      sock,
      {
        callId: "rtc_owner",
        participantId: "prt_AAECAwQFBgcICQoL",
        slot: 2,
        hi: h.conferenceHi,
        lo: h.conferenceLo,
        hub: {
          address: { host: "127.0.0.1", port: hubSide.port, ipv6: false },
          clusterId: 1,
          transceiverId: 1,
        },
      },
      { callId: LEG_A, clusterId: 2, transceiverId: 3 },
      {
        onAudio: () => {},
        onEvent: (t) => events.push(t),
        onDrop: () => {},
        onError: () => {},
        onClose: () => {},
      },
      performance.now(),
    );
    await until(() => hubSide.got.length > 0, "the leg's hello");
    const roster = newRosterEntries();
    Object.assign(roster[0]!, { slot: 1, participantId: "owner" });
    Object.assign(roster[1]!, { slot: 2, participantId: "prt_AAECAwQFBgcICQoL" });
    const payload = new Uint8Array(KEEPALIVE_TIMING_BYTES + 1 + 36);
    encodeRoster(payload, KEEPALIVE_TIMING_BYTES, roster, 2);
    const deliver = (dest: number, counter: number) => {
      const f = Buffer.from(
        conferenceFrame(
          keys,
          { conferenceId, slot: 0 },
          { kind: ConferenceKind.keepalive, counter, dest },
          payload,
        ),
      );
      const r = newConferenceHeader();
      expect(decodeConferenceFrame(f, f.length, r, mac)).toBe("ok");
      leg.receive(r, f, performance.now());
    };
    const before = sock.metrics.drops.wrong_destination.value;
    deliver(3, 5); // the hub's frame for leaf 3, replayed at leaf 2
    expect(sock.metrics.drops.wrong_destination.value).toBe(before + 1);
    expect(leg.state).toBe("connecting");
    deliver(2, 5); // the same counter, addressed here: accepted
    expect(leg.state).toBe("open");
    leg.close();
  });
});
