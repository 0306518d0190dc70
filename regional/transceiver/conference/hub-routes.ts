import {
  type AudioFrameHeader,
  newAudioFrameHeader,
  OWNER_SLOT,
  type ParticipantLeftReason,
} from "../backend-protocol.ts";
import { Mixer } from "../shell/mixer.ts";
import type { LegBinding } from "./addr.ts";
import type { ConferenceLink } from "./link.ts";
import { mediaIn } from "./media-in.ts";
import type { ConferenceMetrics } from "./metrics.ts";

/** What the hub needs of the owner's call. */
export interface HubCall {
  readonly callId: string;
  readonly media: { codec: number; opusFec: boolean };
  sendToBackend(h: AudioFrameHeader, payload: Uint8Array): void;
  /** `source` 1: the mixer's output (the call keeps its outbound stream continuous across it). */
  playToClient(h: AudioFrameHeader, payload: Uint8Array, source?: number): void;
  /** A text event for the backend (a joiner's, tagged). */
  sendEventToBackend(text: string): void;
  /** participant.joined / participant.left to the backend and the owner's `oai-events`. */
  announce(
    type: "joined" | "left",
    participantId: string,
    slot: number,
    reason?: ParticipantLeftReason,
  ): void;
}

const MIXER_SOURCE = 1;

export interface Joiner {
  readonly id: string;
  readonly slot: number;
  state: "admitted" | "connected";
  /** performance.now() at admission (the hello deadline). */
  readonly admittedAt: number;
  /** Wall clock of the hello. */
  joinedAt: number | null;
  /** The leg of its first hello: frames from any other are dropped (wrong_leg). */
  leg: LegBinding | null;
  readonly link: ConferenceLink;
  /** Its events, in order, for the backend. */
  readonly deliver: (text: string) => void;
}

export class HubRoutes {
  readonly #call: HubCall;
  readonly #m: ConferenceMetrics;
  readonly #bySlot = new Map<number, Joiner>();
  // Connected joiners, for the per-frame fan-out (no iterator over a Map per frame).
  #live: Joiner[] = [];
  #mixer: Mixer | undefined;
  readonly #in = newAudioFrameHeader();

  constructor(call: HubCall, m: ConferenceMetrics) {
    this.#call = call;
    this.#m = m;
  }

  /** Connected joiners (read only: replaced, never changed in place). */
  get live(): readonly Joiner[] {
    return this.#live;
  }

  bySlot(slot: number): Joiner | undefined {
    return this.#bySlot.get(slot);
  }

  /** Admitted: known by slot; the owner's client hears a mixer from now on. */
  add(j: Joiner): void {
    this.#bySlot.set(j.slot, j);
    if (this.#mixer === undefined) {
      const call = this.#call;
      this.#mixer = new Mixer({
        outCodec: call.media.codec,
        fec: call.media.opusFec,
        send: (h, payload) => call.playToClient(h, payload, MIXER_SOURCE),
      });
    }
  }

  connected(j: Joiner): void {
    if (!this.#live.includes(j)) this.#live = [...this.#live, j];
  }

  delete(j: Joiner): void {
    this.#bySlot.delete(j.slot);
    this.#live = this.#live.filter((x) => x !== j);
    this.#mixer?.remove(j.slot);
    for (const o of this.#live) o.link.forget(j.slot);
    if (this.#bySlot.size === 0) this.#closeMixer();
  }

  close(): void {
    this.#bySlot.clear();
    this.#live = [];
    this.#closeMixer();
  }

  #closeMixer(): void {
    this.#mixer?.close();
    this.#mixer = undefined;
  }

  mixerStats(): Record<string, unknown> | null {
    return this.#mixer ? { ...this.#mixer.stats() } : null;
  }

  /** The owner's client audio (it already went to the backend labelled 1). */
  fromOwner(h: AudioFrameHeader, payload: Uint8Array, now: number): void {
    const live = this.#live;
    for (let i = 0; i < live.length; i++) live[i]!.link.media(OWNER_SLOT, live[i]!.slot, h, payload, now);
  }

  /** A backend frame; false when the call has no joiner (the call plays it as ever). */
  fromBackend(h: AudioFrameHeader, payload: Uint8Array, now: number): boolean {
    const mixer = this.#mixer;
    if (mixer === undefined) return false;
    const to = h.participant ?? 0;
    if (to === 0 || to === OWNER_SLOT) mixer.push(0, h, payload);
    if (to === OWNER_SLOT) return true;
    const live = this.#live;
    for (let i = 0; i < live.length; i++) {
      const j = live[i]!;
      if (to === 0 || to === j.slot) j.link.media(0, j.slot, h, payload, now);
    }
    return true;
  }

  /** Leaf media: one audio frame at buf[20..20+len] from joiner `from`. */
  fromLeaf(from: Joiner, buf: Buffer, len: number, now: number): void {
    const a = this.#in;
    const payload = mediaIn(from.link, from.slot, buf, len, now, a, this.#m.drops.bad_media);
    if (payload === undefined) return;
    a.participant = from.slot;
    this.#call.sendToBackend(a, payload);
    const live = this.#live;
    for (let i = 0; i < live.length; i++) {
      const j = live[i]!;
      if (j !== from) j.link.media(from.slot, j.slot, a, payload, now);
    }
    this.#mixer?.push(from.slot, a, payload, from.link.repairRttMs);
  }
}
