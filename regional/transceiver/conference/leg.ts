// A leg: a joiner's call on its own transceiver, whose backend link is this uplink to the hub
// (docs/cascade.md, "Leg"). The client's audio goes to the hub as media (source = its slot); the
// hub's media for it (the backend's, the owner's, the other joiners') goes through a mixer to
// the client. Hello every second until the hub answers, then keepalives; the hub's roster
// becomes participant.joined / participant.left on the client's `oai-events`. The leg ends when
// the hub says bye or goes silent for 3 s. The client's events go to the hub (for the backend),
// the backend's come back (kind 6, in order, repaired); keepalives echo timing both ways (RTT).
import { EVENT_MAX_BYTES, eventSeq, eventUtf8 } from "../../../shared/conference/event.ts";
import {
  CONFERENCE_HEADER_BYTES,
  type ConferenceHeader,
  ConferenceKind,
} from "../../../shared/conference/frame.ts";
import {
  ByeReason,
  decodeBye,
  decodeRoster,
  encodeBye,
  encodeHello,
  newRosterEntries,
} from "../../../shared/conference/payloads.ts";
import type { HostPort } from "../../../shared/topology/address.ts";
import type { BackendCall, BackendLink, BridgeHandlers, LinkEndReason } from "../backend-link.ts";
import {
  AudioCodec,
  type AudioFrameHeader,
  BridgeEvent,
  MAX_PARTICIPANT_SLOT,
  newAudioFrameHeader,
  participantEvent,
} from "../backend-protocol.ts";
import type { EndReason } from "../call-types.ts";
import type { CallTap } from "../shell/call-tap.ts";
import { Mixer } from "../shell/mixer.ts";
import { hostPortText, ipBytes } from "./addr.ts";
import { eventsLostEvent, eventTooLargeError } from "./events.ts";
import { KEEPALIVE_MS, SILENCE_MS } from "./hub.ts";
import { ConferenceLink } from "./link.ts";
import { mediaIn } from "./media-in.ts";
import type { ConferenceEndpoint, ConferenceSocket } from "./socket.ts";

/** What POST /v1/legs says about the conference (leg-request.ts validates it). */
export interface LegSpec {
  /** The owner's call id: the conference's name in events. */
  callId: string;
  participantId: string;
  slot: number;
  hi: number;
  lo: number;
  hub: { address: HostPort; clusterId: number; transceiverId: number };
}

/** A hub that never answers the hellos within this is lost. */
export const HELLO_ANSWER_MS = 5000;

const rosterIn = newRosterEntries();
const STARTED = `{"type":"${BridgeEvent.started}"`;

export class LegUplink implements BackendLink, ConferenceEndpoint, CallTap {
  readonly hi: number;
  readonly lo: number;
  readonly slot: number;
  readonly spec: LegSpec;
  state: "connecting" | "open" | "closed" = "connecting";
  droppedToBackend = 0;
  framesToBackend = 0;
  framesFromBackend = 0;
  readonly #sock: ConferenceSocket;
  readonly #h: BridgeHandlers;
  readonly #link: ConferenceLink;
  readonly #mixer: Mixer;
  // This leg's transceiver and its call id (the leg id), as its hello names them.
  readonly #ids: { clusterId: number; transceiverId: number; legId: string };
  readonly #in = newAudioFrameHeader();
  readonly #openedAt: number;
  #lastHelloAt = Number.NEGATIVE_INFINITY;
  #lastKeepaliveAt = 0;
  readonly #deliver = (text: string): void => {
    this.#sock.metrics.events.in.inc();
    this.#h.onEvent(text);
  };
  #roster = new Map<number, string>();
  #endedBy: LinkEndReason | undefined;

  constructor(sock: ConferenceSocket, spec: LegSpec, call: BackendCall, h: BridgeHandlers, now: number) {
    this.#sock = sock;
    this.spec = spec;
    this.hi = spec.hi;
    this.lo = spec.lo;
    this.slot = spec.slot;
    this.#h = h;
    this.#ids = { clusterId: call.clusterId, transceiverId: call.transceiverId, legId: call.callId };
    this.#openedAt = now;
    this.#link = new ConferenceLink(sock, spec, spec.slot, 0, now);
    this.#link.to = spec.hub.address;
    this.#mixer = new Mixer({
      outCodec: call.codec || AudioCodec.opus,
      fec: call.opusFec === true,
      send: (a, payload) => {
        this.framesFromBackend++;
        h.onAudio(a, payload as Buffer);
      },
    });
    if (!sock.register(this)) {
      // The conference is already on this process (a second leg of it here) or the table is full.
      queueMicrotask(() => this.#end("hub_lost"));
      return;
    }
    this.#hello(now);
  }

  #hello(now: number): void {
    this.#lastHelloAt = now;
    const self = this.#sock.address;
    const ip = ipBytes(self);
    if (ip === undefined) return;
    const hello = {
      participantId: this.spec.participantId,
      ...this.#ids,
      ipv6: self.ipv6,
      port: self.port,
      ip,
    };
    this.#link.control(ConferenceKind.hello, now, (b, off) => encodeHello(b, off, hello));
  }

  // ---- BackendLink: the leg's call ------------------------------------------------------------

  sendAudio(h: AudioFrameHeader, payload: Uint8Array): void {
    if (this.state !== "open") return;
    this.framesToBackend++;
    this.#link.media(this.spec.slot, 0, h, payload, performance.now());
  }

  /** The client's event, for the hub's backend (tagged there). Not the leg's own session.started. */
  sendEvent(text: string): void {
    if (this.state === "closed" || text.startsWith(STARTED)) return;
    const bytes = eventUtf8(text);
    if (bytes.length > EVENT_MAX_BYTES) {
      this.#sock.metrics.drops.event_too_large.inc();
      this.#h.onEvent(eventTooLargeError(text, bytes.length)); // its own: the client is told
      return;
    }
    if (this.#link.event(this.spec.slot, 0, bytes, performance.now())) this.#sock.metrics.events.out.inc();
  }

  close(finalEvent?: string): void {
    if (this.state === "closed") return;
    this.state = "closed";
    if (this.#endedBy === undefined) {
      // The leg ended here: its client left, or this transceiver stops (then the hub reads "failed").
      const reason = /"reason":"(shutdown|drain|error)"/.test(finalEvent ?? "")
        ? ByeReason.failed
        : ByeReason.left;
      this.#link.control(ConferenceKind.bye, performance.now(), (b, off) => encodeBye(b, off, reason));
    }
    this.#sock.unregister(this);
    this.#mixer.close();
  }

  #end(reason: LinkEndReason): void {
    if (this.state === "closed" || this.#endedBy !== undefined) return;
    this.#endedBy = reason;
    this.#h.onClose(1000, reason);
  }

  // ---- ConferenceEndpoint: frames from the hub ------------------------------------------------

  receive(h: ConferenceHeader, buf: Buffer, now: number): void {
    if (this.state === "closed") return;
    const m = this.#sock.metrics;
    // Only frames addressed to this leg: the hub sends each leaf its own, under its own counter.
    if (h.destinationSlot !== this.slot || h.sourceSlot > MAX_PARTICIPANT_SLOT) {
      m.drops.wrong_destination.inc();
      return;
    }
    if (!this.#link.window.accept(h.counter)) {
      m.drops.replay.inc();
      return;
    }
    this.#link.lastHeardAt = now;
    const len = h.payloadLength;
    switch (h.kind) {
      case ConferenceKind.media:
        this.#media(h.sourceSlot, buf, len, now);
        return;
      case ConferenceKind.keepalive:
        this.#link.onKeepalive(buf, len, now);
        this.#rosterFrom(buf, len);
        return;
      case ConferenceKind.event:
        this.#event(buf, len, now);
        return;
      case ConferenceKind.nack:
        this.#link.onNack(buf, len, now);
        return;
      case ConferenceKind.bye: {
        const r = decodeBye(buf, CONFERENCE_HEADER_BYTES, len);
        this.#end(
          r === ByeReason.callEnded ? "call_ended" : r === ByeReason.removed ? "removed" : "hub_lost",
        );
        return;
      }
      default:
        m.drops.no_route.inc();
    }
  }

  #media(source: number, buf: Buffer, len: number, now: number): void {
    const a = this.#in;
    const audio = mediaIn(this.#link, source, buf, len, now, a, this.#sock.metrics.drops.bad_media);
    if (audio !== undefined) this.#mixer.push(source, a, audio, this.#link.repairRttMs);
  }

  /** The hub's event (the backend's, or a notice): to the client, in order. */
  #event(buf: Buffer, len: number, now: number): void {
    const seq = eventSeq(buf, CONFERENCE_HEADER_BYTES);
    if (this.#link.onEvent(0, seq, now))
      this.#lost(this.#link.events.push(seq, buf, CONFERENCE_HEADER_BYTES, len, now, this.#deliver));
  }

  #lost(n: number): void {
    if (n === 0) return;
    this.#sock.metrics.eventsLost.inc(n);
    this.#h.onEvent(eventsLostEvent("to_client", n));
  }

  /** The hub's roster: differences from the last one become events for the client. */
  #rosterFrom(buf: Buffer, len: number): void {
    const n = decodeRoster(buf, CONFERENCE_HEADER_BYTES, len, rosterIn);
    if (n < 0) return;
    // Acknowledged (docs/wire-formats.md §8): a roster that lists this leg's slot.
    if (this.state === "connecting")
      for (let i = 0; i < n; i++) if (rosterIn[i]!.slot === this.spec.slot) this.state = "open";
    const prev = this.#roster;
    let same = n === prev.size;
    for (let i = 0; same && i < n; i++) same = prev.get(rosterIn[i]!.slot) === rosterIn[i]!.participantId;
    if (same) return;
    const next = new Map<number, string>();
    for (let i = 0; i < n; i++) next.set(rosterIn[i]!.slot, rosterIn[i]!.participantId);
    const callId = this.spec.callId;
    for (const [slot, id] of next)
      if (slot !== this.spec.slot && prev.get(slot) !== id)
        this.#h.onEvent(participantEvent("joined", callId, id, slot));
    for (const [slot, id] of prev)
      if (next.get(slot) !== id) {
        this.#mixer.remove(slot);
        this.#link.forget(slot);
        if (slot !== this.spec.slot) this.#h.onEvent(participantEvent("left", callId, id, slot, "left"));
      }
    this.#roster = next;
  }

  tick(now: number): void {
    if (this.state === "closed") return;
    const link = this.#link;
    if (this.state === "connecting") {
      if (now - this.#openedAt >= HELLO_ANSWER_MS) this.#end("hub_lost");
      else if (now - this.#lastHelloAt >= KEEPALIVE_MS) this.#hello(now);
      return;
    }
    if (now - link.lastHeardAt >= SILENCE_MS) {
      this.#end("hub_lost");
      return;
    }
    link.nacks(now);
    this.#lost(link.events.tick(now, this.#deliver));
    // Every second even while media flows: the keepalive carries the timing echo (RTT).
    if (now - this.#lastKeepaliveAt >= KEEPALIVE_MS) {
      this.#lastKeepaliveAt = now;
      link.keepalive(now);
    }
  }

  // ---- CallTap: the leg call's status ---------------------------------------------------------

  ended(_reason: EndReason): void {}

  status(): Record<string, unknown> {
    const s = this.spec;
    return {
      role: "leg",
      callId: s.callId,
      participantId: s.participantId,
      slot: s.slot,
      rttMs: this.#link.rttMs,
      hub: { ...s.hub, address: hostPortText(s.hub.address) },
      state: this.state,
      participants: this.#roster.size,
      repair: this.#link.repairStats(),
      mixer: { ...this.#mixer.stats() },
    };
  }
}
