// The hub's deadlines on its own clock (ticks driven by hand): an admitted participant whose
// hello never comes is released at 30 s without being announced; a connected one silent 3 s is
// removed as transceiver_failed; the hello is answered with a roster keepalive that lists it.
import { createSocket, type Socket } from "node:dgram";
import { afterAll, describe, expect, it } from "vitest";
import { nodeMac } from "../../regional/common/hmac.ts";
import { HELLO_DEADLINE_MS, HubConference, SILENCE_MS } from "../../regional/transceiver/conference/hub.ts";
import { ConferenceMetrics } from "../../regional/transceiver/conference/metrics.ts";
import { ConferenceSocket } from "../../regional/transceiver/conference/socket.ts";
import { conferenceWithDefaults } from "../../regional/transceiver/config.ts";
import { TransceiverMetrics } from "../../regional/transceiver/metrics.ts";
import {
  ConferenceKind,
  decodeConferenceFrame,
  encodeConferenceFrame,
  newConferenceHeader,
  parseConferenceIdHex,
} from "../../shared/conference/frame.ts";
import { decodeRoster, encodeHello, newRosterEntries } from "../../shared/conference/payloads.ts";
import { backboneKeys, fakeHubCall } from "./helpers/conference.ts";
import { until } from "./helpers/harness.ts";

const keys = backboneKeys();
const LEG_ID = "rtc_EQACAAcBAgMEBQYHCAkKCwwNDg9c5WWlpdqsXLhQtWlKS_XQ";
const mac = nodeMac(keys);
const leaf = createSocket("udp4");
let sock: ConferenceSocket;
afterAll(async () => {
  leaf.close();
  await sock?.close();
});

function sendHello(from: Socket, a: { conferenceId: string; slot: number; participantId: string }): void {
  const port = from.address().port;
  const h = newConferenceHeader();
  parseConferenceIdHex(a.conferenceId, h);
  h.kind = ConferenceKind.hello;
  h.keyId = keys.active.id;
  h.sourceSlot = a.slot;
  h.counter = 0;
  const buf = new Uint8Array(200);
  h.payloadLength = encodeHello(buf, 20, {
    participantId: a.participantId,
    clusterId: 2,
    transceiverId: 3,
    ipv6: false,
    port,
    ip: Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1),
    legId: LEG_ID,
  });
  const end = encodeConferenceFrame(buf, 0, h, null, mac);
  from.send(buf.subarray(0, end), sock.address.port, "127.0.0.1");
}

/** The roster of a keepalive frame: [slot, participant id] pairs. */
function rosterOf(frame: Buffer): [number, string][] {
  const r = newConferenceHeader();
  expect(decodeConferenceFrame(frame, frame.length, r, mac)).toBe("ok");
  expect(r.kind).toBe(ConferenceKind.keepalive);
  const roster = newRosterEntries();
  const n = decodeRoster(frame, 20, r.payloadLength, roster);
  return roster.slice(0, n).map((e) => [e.slot, e.participantId]);
}

describe("the hub's deadlines", () => {
  it("releases an admitted participant without a hello at 30 s, silently", async () => {
    sock = await ConferenceSocket.open(
      conferenceWithDefaults(keys),
      new ConferenceMetrics(new TransceiverMetrics(1)),
    );
    const { said, call } = fakeHubCall();
    const hub = new HubConference(sock, call, { clusterId: 1, transceiverId: 1 }, () => {});
    const a = hub.admit(1000);
    hub.tick(1000 + HELLO_DEADLINE_MS - 1);
    expect(hub.list(0).map((p) => p.participantId)).toEqual(["owner", a.participantId]);
    hub.tick(1000 + HELLO_DEADLINE_MS);
    expect(hub.list(0).map((p) => p.participantId)).toEqual(["owner"]);
    expect(said).toEqual([]);
    hub.ended("hangup");
  });

  it("keeps one roster per conference: two hubs on one socket list only their own", async () => {
    const one = fakeHubCall();
    const two = fakeHubCall();
    const h1 = new HubConference(sock, one.call, { clusterId: 1, transceiverId: 1 }, () => {});
    const h2 = new HubConference(sock, two.call, { clusterId: 1, transceiverId: 1 }, () => {});
    expect(sock.register(h1) && sock.register(h2)).toBe(true);
    const a1 = h1.admit(performance.now());
    const a2 = h2.admit(performance.now());
    const l = createSocket("udp4");
    await new Promise<void>((r) => l.bind(0, "127.0.0.1", () => r()));
    const got: Buffer[] = [];
    l.on("message", (m) => got.push(m));
    // The socket's own timer ticks both hubs too: frames are told apart by conference id.
    const of = (a: { conferenceId: string }) => (f: Buffer) =>
      f.subarray(4, 12).toString("hex") === a.conferenceId;
    sendHello(l, a1);
    const k1 = await until(() => got.find(of(a1)), "h1's answer");
    sendHello(l, a2);
    const k2 = await until(() => got.find(of(a2)), "h2's answer");
    expect(rosterOf(k1)).toEqual([
      [1, "owner"],
      [2, a1.participantId],
    ]);
    expect(rosterOf(k2)).toEqual([
      [1, "owner"],
      [2, a2.participantId],
    ]);
    // h1's next keepalive, after h2 changed its own roster, still lists h1's participant.
    const before = got.length;
    h1.tick(performance.now() + 1000);
    const k = await until(() => got.slice(before).find(of(a1)), "h1's keepalive");
    expect(rosterOf(k)).toEqual([
      [1, "owner"],
      [2, a1.participantId],
    ]);
    l.close();
    for (const h of [h1, h2]) {
      h.ended("hangup");
      sock.unregister(h);
    }
  });

  it("answers a hello with a roster that lists the leaf, and removes it after 3 s of silence", async () => {
    const { said, call } = fakeHubCall();
    const hub = new HubConference(sock, call, { clusterId: 1, transceiverId: 1 }, () => {});
    expect(sock.register(hub)).toBe(true);
    const a = hub.admit(performance.now());
    await new Promise<void>((r) => leaf.bind(0, "127.0.0.1", () => r()));
    const got: Buffer[] = [];
    leaf.on("message", (m) => got.push(m));
    sendHello(leaf, a);
    await until(() => got.length > 0, "the hub's answer");
    expect(rosterOf(got[0]!)).toEqual([
      [1, "owner"],
      [a.slot, a.participantId],
    ]);
    expect(said).toEqual([`joined ${a.participantId} ${a.slot}`]);
    expect(hub.list(0)[1]).toMatchObject({
      state: "connected",
      leg: { clusterId: 2, transceiverId: 3, legId: LEG_ID },
    });
    hub.tick(performance.now() + SILENCE_MS);
    expect(said).toEqual([
      `joined ${a.participantId} ${a.slot}`,
      `left ${a.participantId} ${a.slot} transceiver_failed`,
    ]);
    expect(hub.joiners).toBe(0);
    hub.ended("hangup");
    sock.unregister(hub);
  });
});
