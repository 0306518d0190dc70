// The hub: the conference of an owner's call, on the call's own transceiver (docs/cascade.md).
// It holds the participant table (admitted at the API, connected by a MAC-valid hello, bounded
// by CONFERENCE_MAX_PARTICIPANTS), routes audio between the owner's call, the backend and every
// leaf (hub-routes.ts), switches the owner's client to a mixer while joiners exist, tells the
// backend and the owner's client who joined and left, and ends every leg when the call ends.
// A participant is bound to the leg of its first hello (addr.ts LegBinding); the backend's
// events go to every leaf and each joiner's events to the backend, tagged (kind 6).
import { randomBytes } from "node:crypto";
import type { RemoteInfo } from "node:dgram";
import { type ConferenceHeader, ConferenceKind, conferenceIdHex } from "../../../shared/conference/frame.ts";
import {
  ByeReason,
  decodeBye,
  decodeHello,
  encodeBye,
  encodeRoster,
  newHello,
  newRosterEntries,
  OWNER_PARTICIPANT_ID,
} from "../../../shared/conference/payloads.ts";
import { MAX_PARTICIPANT_SLOT, OWNER_SLOT, type ParticipantLeftReason } from "../backend-protocol.ts";
import type { EndReason } from "../call-types.ts";
import { ApiError } from "../errors.ts";
import type { CallTap } from "../shell/call-tap.ts";
import { allowed, hostPortText, ipText, LegBinding } from "./addr.ts";
import { untagOwnerEvent } from "./events.ts";
import { HubEvents } from "./hub-events.ts";
import { type HubCall, HubRoutes, type Joiner } from "./hub-routes.ts";
import { ConferenceLink } from "./link.ts";
import { participantRecords } from "./participant-record.ts";
import type { ConferenceEndpoint, ConferenceSocket } from "./socket.ts";

export type { HubCall } from "./hub-routes.ts";

/** An admitted participant that sends no hello within this is released. */
export const HELLO_DEADLINE_MS = 30_000;
/** A peer silent this long is gone. */
export const SILENCE_MS = 3000;
export const KEEPALIVE_MS = 1000;

export interface Admission {
  participantId: string;
  slot: number;
  conferenceId: string;
  hub: { address: string; clusterId: number; transceiverId: number };
}

const newParticipantId = (): string => `prt_${randomBytes(12).toString("base64url")}`;
// Scratch for the hello being read (receive is synchronous and never re-entered).
const hello = newHello();

export class HubConference implements ConferenceEndpoint, CallTap {
  readonly hi: number;
  readonly lo: number;
  readonly idHex: string;
  readonly slot = 0;
  readonly #sock: ConferenceSocket;
  readonly #call: HubCall;
  readonly #ids: { clusterId: number; transceiverId: number };
  readonly #routes: HubRoutes;
  readonly #events: HubEvents;
  readonly #byId = new Map<string, Joiner>();
  readonly #onEnd: (c: HubConference) => void;
  // This conference's roster (owner first, then connected joiners), rebuilt when it changes.
  readonly #roster = newRosterEntries();
  #nextSlot = OWNER_SLOT + 1;
  #rosterN = 1;
  #lastKeepaliveAt = 0;
  #ended = false;

  constructor(
    sock: ConferenceSocket,
    call: HubCall,
    ids: { clusterId: number; transceiverId: number },
    onEnd: (c: HubConference) => void,
  ) {
    const { hi, lo } = sock.newConferenceId();
    this.hi = hi;
    this.lo = lo;
    this.idHex = conferenceIdHex({ conferenceHi: hi, conferenceLo: lo });
    this.#sock = sock;
    this.#call = call;
    this.#ids = ids;
    this.#onEnd = onEnd;
    this.#routes = new HubRoutes(call, sock.metrics);
    this.#events = new HubEvents(call, sock.metrics, this.#routes);
    this.#roster[0]!.slot = OWNER_SLOT;
    this.#roster[0]!.participantId = OWNER_PARTICIPANT_ID;
  }

  get joiners(): number {
    return this.#byId.size;
  }

  /** A new participant (API): a slot and an id; it joins when its leg's hello arrives. */
  admit(now: number): Admission {
    const max = this.#sock.config.maxParticipants;
    if (this.#ended) throw new ApiError("call_ended", "the call has ended");
    if (this.#byId.size + 1 >= max)
      throw new ApiError("participant_limit", `the call has ${max} participants, the most it may have`);
    if (this.#nextSlot > MAX_PARTICIPANT_SLOT)
      throw new ApiError(
        "participant_limit",
        `the call has used all ${MAX_PARTICIPANT_SLOT - 1} joiner slots`,
      );
    const slot = this.#nextSlot++;
    const j: Joiner = {
      id: newParticipantId(),
      slot,
      state: "admitted",
      admittedAt: now,
      joinedAt: null,
      leg: null,
      link: new ConferenceLink(this.#sock, this, 0, slot, now),
      deliver: (text) => this.#events.deliver(j, text),
    };
    this.#byId.set(j.id, j);
    this.#routes.add(j);
    this.#sock.metrics.participants.inc();
    return {
      participantId: j.id,
      slot,
      conferenceId: this.idHex,
      hub: { address: hostPortText(this.#sock.address), ...this.#ids },
    };
  }

  /** GET .../participants: the owner first, then every joiner (participant-record.ts). */
  list(createdAt: number): Record<string, unknown>[] {
    return participantRecords(createdAt, this.#byId.values(), hostPortText);
  }

  /** DELETE of a participant: bye(4) to its leg. */
  remove(participantId: string, now: number): void {
    const j = this.#byId.get(participantId);
    if (j === undefined) throw new ApiError("participant_unknown", "no such participant in this call");
    this.#drop(j, "removed", ByeReason.removed, now);
  }

  receive(h: ConferenceHeader, buf: Buffer, now: number, from: RemoteInfo): void {
    const m = this.#sock.metrics;
    if (h.destinationSlot !== 0) {
      m.drops.wrong_destination.inc();
      return;
    }
    const j = this.#routes.bySlot(h.sourceSlot);
    if (j === undefined) {
      m.drops.unknown_participant.inc();
      return;
    }
    // Checked before the counter counts: a bad hello, or any frame of a second leg, must not
    // move the window of the leg the participant is bound to.
    const isHello = h.kind === ConferenceKind.hello;
    if (isHello) {
      if (!this.#helloOk(j, buf, h.payloadLength)) return;
    } else if (j.leg === null || !j.leg.isFrom(from.address, from.port)) {
      (j.leg === null ? m.drops.not_admitted : m.drops.wrong_leg).inc();
      return;
    }
    if (!j.link.window.accept(h.counter)) {
      m.drops.replay.inc();
      return;
    }
    if (isHello) {
      this.#hello(j, now);
      return;
    }
    j.link.lastHeardAt = now;
    const len = h.payloadLength;
    if (h.kind === ConferenceKind.media) this.#routes.fromLeaf(j, buf, len, now);
    else if (h.kind === ConferenceKind.nack) j.link.onNack(buf, len, now);
    else if (h.kind === ConferenceKind.keepalive) j.link.onKeepalive(buf, len, now);
    else if (h.kind === ConferenceKind.event) this.#events.fromLeaf(j, buf, len, now);
    else if (h.kind === ConferenceKind.bye) {
      const r = decodeBye(buf, 20, len);
      this.#drop(j, r === ByeReason.left ? "left" : "transceiver_failed", 0, now);
    }
  }

  #helloOk(j: Joiner, buf: Buffer, len: number): boolean {
    const m = this.#sock.metrics;
    if (!decodeHello(buf, 20, len, hello) || hello.participantId !== j.id) {
      m.drops.unknown_participant.inc();
      return false;
    }
    // A second leg for this participant (an edge that failed over after a timeout): not this one.
    if (j.leg !== null && !j.leg.sameHello(hello)) {
      m.drops.wrong_leg.inc();
      return false;
    }
    // Only the address inside a MAC-valid hello, and only inside the backbone: never the source's.
    if (!allowed(this.#sock.config.cidrs, hello.ipv6, hello.ip)) {
      m.drops.bad_address.inc();
      return false;
    }
    return true;
  }

  /** The hello `#helloOk` just read. */
  #hello(j: Joiner, now: number): void {
    j.link.lastHeardAt = now;
    if (j.state === "admitted") {
      j.link.to = { host: ipText(hello.ipv6, hello.ip), port: hello.port, ipv6: hello.ipv6 };
      j.state = "connected";
      j.joinedAt = Date.now();
      j.leg = new LegBinding(hello);
      this.#routes.connected(j);
      this.#rebuildRoster();
      this.#call.announce("joined", j.id, j.slot);
    }
    this.#keepalive(j, now); // the acknowledgement
  }

  #rebuildRoster(): void {
    let n = 1;
    for (const j of this.#byId.values())
      if (j.state === "connected" && n < this.#roster.length)
        Object.assign(this.#roster[n++]!, { slot: j.slot, participantId: j.id });
    this.#rosterN = n;
  }

  #keepalive(j: Joiner, now: number): void {
    const n = this.#rosterN;
    j.link.keepalive(now, (b, off) => encodeRoster(b, off, this.#roster, n));
  }

  /** Removes a participant; `bye` (a reason, or 0 for none) goes to its leg. */
  #drop(j: Joiner, reason: ParticipantLeftReason, bye: number, now: number): void {
    if (this.#byId.get(j.id) !== j) return;
    this.#byId.delete(j.id);
    if (bye !== 0) j.link.control(ConferenceKind.bye, now, (b, off) => encodeBye(b, off, bye));
    const wasConnected = j.state === "connected";
    this.#routes.delete(j);
    this.#rebuildRoster();
    if (wasConnected) this.#call.announce("left", j.id, j.slot, reason);
    this.#sock.metrics.participants.dec();
  }

  tick(now: number): void {
    if (this.#ended) return;
    const keepalive = now - this.#lastKeepaliveAt >= KEEPALIVE_MS;
    if (keepalive) this.#lastKeepaliveAt = now;
    // Deleting the current entry while iterating a Map is safe (and allocates nothing).
    for (const j of this.#byId.values()) {
      if (j.state === "admitted") {
        if (now - j.admittedAt >= HELLO_DEADLINE_MS) this.#drop(j, "hello_timeout", 0, now);
        continue;
      }
      if (now - j.link.lastHeardAt >= SILENCE_MS) {
        this.#drop(j, "transceiver_failed", 0, now);
        continue;
      }
      j.link.nacks(now);
      this.#events.lost(j, j.link.events.tick(now, j.deliver), now);
      if (keepalive) this.#keepalive(j, now);
    }
  }

  // ---- CallTap: the owner's call -------------------------------------------------------------

  clientAudio(h: Parameters<HubRoutes["fromOwner"]>[0], payload: Uint8Array): void {
    this.#routes.fromOwner(h, payload, performance.now());
  }

  backendAudio(h: Parameters<HubRoutes["fromBackend"]>[0], payload: Uint8Array): boolean {
    return this.#routes.fromBackend(h, payload, performance.now());
  }

  /** The owner's client's event: it may not pose as a joiner while there are any. */
  clientEvent = (text: string): string => (this.#byId.size === 0 ? text : untagOwnerEvent(text));

  /** A backend event (the owner's client has it): to every leaf. */
  backendEvent(text: string): void {
    this.#events.fromBackend(text, performance.now());
  }

  /** The owner's call ended: bye(2) to every leg (each ends call_ended). */
  ended(_reason: EndReason): void {
    if (this.#ended) return;
    this.#ended = true;
    const now = performance.now();
    for (const j of this.#byId.values()) {
      j.link.control(ConferenceKind.bye, now, (b, off) => encodeBye(b, off, ByeReason.callEnded));
      this.#routes.delete(j);
    }
    this.#sock.metrics.participants.dec(this.#byId.size);
    this.#byId.clear();
    this.#routes.close();
    this.#onEnd(this);
  }

  status(): Record<string, unknown> {
    const { idHex: conferenceId, joiners } = this;
    const { maxParticipants } = this.#sock.config;
    const mixer = this.#routes.mixerStats();
    return { role: "hub", conferenceId, participants: joiners + 1, maxParticipants, mixer };
  }
}
