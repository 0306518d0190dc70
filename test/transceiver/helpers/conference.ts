// Conference tests: transceivers with a conference socket and one backbone keyring, a joiner's
// leg created the way the edge does (admit at the hub, POST /v1/legs at the leg's transceiver),
// and real Opus tones through werift clients with what each one heard measured by Goertzel.
import { randomBytes } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { nodeMac } from "../../../regional/common/hmac.ts";
import { AudioCodec } from "../../../regional/transceiver/backend-protocol.ts";
import { type ConferenceConfig, conferenceWithDefaults } from "../../../regional/transceiver/config.ts";
import { MixCodecs } from "../../../regional/transceiver/shell/opus-codecs.ts";
import {
  encodeConferenceFrame,
  newConferenceHeader,
  parseConferenceIdHex,
} from "../../../shared/conference/frame.ts";
import { KEEPALIVE_TIMING_BYTES } from "../../../shared/conference/keepalive.ts";
import { encodeHello } from "../../../shared/conference/payloads.ts";
import type { Keyring } from "../../../shared/keys.ts";
import { goertzel, toneFrame } from "../../support/tone.ts";
import { type ClientOptions, createTestClient, type TestClient } from "./client.ts";
import { type Harness, sleep, startHarness } from "./harness.ts";

export function backboneKeys(): Keyring {
  const k = { id: 1, secret: new Uint8Array(randomBytes(32)) };
  return { active: k, keys: [k] };
}

/** A transceiver of cluster `clusterId` that takes part in conferences under `keys`. */
export function startConferenceHarness(
  clusterId: number,
  keys: Keyring,
  over: Partial<ConferenceConfig> = {},
  o: Parameters<typeof startHarness>[1] = {},
): Promise<Harness> {
  return startHarness({ clusterId, transceiverId: 1, conference: conferenceWithDefaults(keys, over) }, o);
}

export interface Admission {
  participantId: string;
  slot: number;
  conferenceId: string;
  hub: { address: string; clusterId: number; transceiverId: number };
}

export async function admit(hub: Harness, callId: string): Promise<Response> {
  return hub.call("POST", `/v1/calls/${callId}/participants`, { client: { continent: "NA" } });
}

/**
 * The edge's join: admit at the hub, then the leg on `leg`'s transceiver; the client connected.
 * `hubAddress` replaces the hub's conference address the leg is given (a lossy forwarder's).
 */
export async function join(
  hub: Harness,
  leg: Harness,
  callId: string,
  options: ClientOptions = {},
  hubAddress?: string,
): Promise<{ client: TestClient; legId: string; admission: Admission }> {
  const a = await admit(hub, callId);
  if (a.status !== 201) throw new Error(`admit: ${a.status} ${await a.text()}`);
  const admission = (await a.json()) as Admission;
  const client = createTestClient({ codecs: "opus", ...options });
  const offer = await client.createOffer();
  const res = await leg.call("POST", "/v1/legs", {
    sdp: offer,
    client: { continent: "NA" },
    ingress: { vip: `${leg.relay.vip.host}:${leg.relay.vip.port}`, popId: 1 },
    conference: {
      callId,
      ...admission,
      hub: hubAddress === undefined ? admission.hub : { ...admission.hub, address: hubAddress },
    },
  });
  if (res.status !== 201) throw new Error(`leg: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { legId: string; sdp: string };
  await client.setAnswer(body.sdp);
  await client.connected();
  return { client, legId: body.legId, admission };
}

/** Sends `frames` 20 ms Opus frames of a `freq` tone (real time), from sequence `seq0`. */
export async function sendTone(c: TestClient, freq: number, frames: number, seq0 = 0): Promise<void> {
  const enc = new MixCodecs(AudioCodec.opus);
  const out = new Uint8Array(1500);
  try {
    for (let i = 0; i < frames; i++) {
      const len = enc.encode(toneFrame(freq, 48000, i * 960, 960), out);
      c.sendAudio(Buffer.from(out.subarray(0, len)), (seq0 + i) & 0xffff, ((seq0 + i) * 960) >>> 0);
      await sleep(20);
    }
  } finally {
    enc.close();
  }
}

/** Levels of `freqs` in the Opus frames the client received from index `from` (the last 50 by default). */
export function heard(c: TestClient, freqs: number[], from = c.received.length - 50): Record<number, number> {
  const dec = new MixCodecs(AudioCodec.opus);
  const pkts = c.received.slice(Math.max(0, from));
  const pcm = new Int16Array(pkts.length * 960);
  const frame = new Int16Array(5760);
  let at = 0;
  try {
    for (const p of pkts) {
      const n = dec.decode(0, AudioCodec.opus, p.payload, p.payload.length, frame);
      pcm.set(frame.subarray(0, Math.min(n, 960)), at);
      at += 960;
    }
  } finally {
    dec.close();
  }
  const out: Record<number, number> = {};
  for (const f of freqs) out[f] = goertzel(pcm, f, 48000);
  return out;
}

/** The JSON events a client got on oai-events, of one type. */
export const eventsOf = (c: TestClient, type: string): Record<string, unknown>[] =>
  c.messages.map((m) => JSON.parse(m) as Record<string, unknown>).filter((e) => e.type === type);

/**
 * A UDP hop between a leg and its hub, both ways (the leg advertises its `port`, since the hub
 * takes a participant's frames only from the address its hello names): the leg's datagrams go to
 * the hub unless `drop` says otherwise, the hub's back to the leg unless `dropToLeg` does, each
 * `delayMs` late (each way: the hop's RTT is twice that). Call `to(hub)` once known.
 */
export async function lossyForwarder(
  drop: (msg: Buffer) => boolean,
  dropToLeg?: (msg: Buffer) => boolean,
  delayMs = 0,
) {
  const s: Socket = createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  let dropped = 0;
  let hub: { host: string; port: number } | undefined;
  let leg: number | undefined;
  let open = true;
  const out = (msg: Buffer, port: number, host: string) => {
    if (delayMs === 0) s.send(msg, port, host);
    else
      setTimeout(() => {
        if (open) s.send(msg, port, host);
      }, delayMs);
  };
  s.on("message", (msg, from) => {
    if (hub === undefined) return;
    if (from.port === hub.port) {
      if (dropToLeg?.(msg)) dropped++;
      else if (leg !== undefined) out(msg, leg, "127.0.0.1");
      return;
    }
    leg = from.port;
    if (drop(msg)) dropped++;
    else out(msg, hub.port, hub.host);
  });
  return {
    port: s.address().port,
    advertise: { host: "127.0.0.1", port: s.address().port, ipv6: false },
    dropped: () => dropped,
    to: (h: { host: string; port: number }) => {
      hub = h;
    },
    close: () =>
      new Promise<void>((r) => {
        open = false;
        s.close(() => r());
      }),
  };
}

/** A HubCall that records what the hub says: announcements and events for the backend. */
export function fakeHubCall() {
  const said: string[] = [];
  return {
    said,
    call: {
      callId: "rtc_test",
      media: { codec: AudioCodec.opus, opusFec: false },
      sendToBackend: () => {},
      playToClient: () => {},
      sendEventToBackend: (text: string) => said.push(`event ${text}`),
      announce: (type: "joined" | "left", id: string, slot: number, reason?: string) =>
        said.push(`${type} ${id} ${slot} ${reason ?? ""}`.trim()),
    },
  };
}

/** A MAC-valid conference frame of `a`'s conference (source its slot unless said). */
export function conferenceFrame(
  keys: Keyring,
  a: { conferenceId: string; slot: number },
  o: { kind: number; counter: number; source?: number; dest?: number },
  payload: Uint8Array = new Uint8Array(KEEPALIVE_TIMING_BYTES),
): Uint8Array {
  const h = newConferenceHeader();
  parseConferenceIdHex(a.conferenceId, h);
  h.kind = o.kind;
  h.keyId = keys.active.id;
  h.sourceSlot = o.source ?? a.slot;
  h.destinationSlot = o.dest ?? 0;
  h.counter = o.counter;
  const buf = new Uint8Array(2000);
  const end = encodeConferenceFrame(buf, 0, h, payload, nodeMac(keys));
  if (end < 0) throw new Error("conferenceFrame: encode");
  return buf.subarray(0, end);
}

/** A hello payload for `a`'s participant from a leaf at 127.0.0.1:`port`. */
export function helloPayload(
  a: { participantId: string },
  o: { port: number; legId: string; clusterId?: number; transceiverId?: number },
): Uint8Array {
  const buf = new Uint8Array(100);
  const n = encodeHello(buf, 0, {
    participantId: a.participantId,
    clusterId: o.clusterId ?? 2,
    transceiverId: o.transceiverId ?? 3,
    ipv6: false,
    port: o.port,
    ip: Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1),
    legId: o.legId,
  });
  if (n < 0) throw new Error("helloPayload: encode");
  return buf.subarray(0, n);
}
