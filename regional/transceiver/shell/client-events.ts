// Events for the client: the `oai-events` data channel (queued until it opens, bounded) and any
// signalling WebSocket listening to the session. Backend events and transceiver notices go out
// through here; nothing here parses them.
import type { RTCDataChannel } from "werift";
import { ClientNotice } from "../backend-protocol.ts";
import type { EndReason } from "../call-types.ts";

/** Event sinks (WebSocket signalling) get backend events and the end. */
export interface CallListener {
  event(text: string): void;
  ended(reason: EndReason): void;
}

/** Events held until the data channel opens. */
export const EVENT_QUEUE_MAX = 64;

export class ClientEvents {
  readonly #maxBuffered: number;
  readonly #onDrop: () => void;
  readonly #listeners = new Set<CallListener>();
  #dc: RTCDataChannel | undefined;
  #pending: string[] = [];
  #lastNoticeAt = 0;
  dropped = 0;

  /** `maxBuffered`: data-channel bytes not yet sent beyond which events are dropped. */
  constructor(maxBuffered: number, onDrop: () => void) {
    this.#maxBuffered = maxBuffered;
    this.#onDrop = onDrop;
  }

  /** Adopts the client's `oai-events` channel (the first one); false for any other. */
  adopt(dc: RTCDataChannel): boolean {
    if (dc.label !== "oai-events" || this.#dc !== undefined) return false;
    this.#dc = dc;
    dc.stateChanged.subscribe((st) => {
      if (st === "open") this.#flush();
    });
    if (dc.readyState === "open") this.#flush();
    return true;
  }

  send(text: string): void {
    for (const l of this.#listeners) l.event(text);
    const dc = this.#dc;
    if (dc === undefined || dc.readyState !== "open") {
      if (this.#pending.length >= EVENT_QUEUE_MAX) this.#drop();
      else this.#pending.push(text);
      return;
    }
    if (dc.bufferedAmount > this.#maxBuffered) this.#drop();
    else dc.send(text);
  }

  /** Tells the client, at most once a second, that frames for the backend are being dropped. */
  noticeDropped(now: number, dropped: number): void {
    if (now - this.#lastNoticeAt < 1000) return;
    this.#lastNoticeAt = now;
    if (this.#dc?.readyState === "open") {
      this.#dc.send(JSON.stringify({ type: ClientNotice.backendDropped, direction: "to_backend", dropped }));
    }
  }

  addListener(l: CallListener): void {
    this.#listeners.add(l);
  }
  removeListener(l: CallListener): void {
    this.#listeners.delete(l);
  }

  /** Tells the listeners the session ended and forgets them. */
  ended(reason: EndReason): void {
    for (const l of this.#listeners) l.ended(reason);
    this.#listeners.clear();
  }

  #drop(): void {
    this.dropped++;
    this.#onDrop();
  }

  #flush(): void {
    const q = this.#pending;
    this.#pending = [];
    for (const t of q) this.#dc?.send(t);
  }
}
