// One call on a shared backend connection (backend-shared.ts): the call's BackendLink. While the
// connection connects, the call's frames and events wait here, bounded as on a connection of its
// own; if the backend turns out not to take shared connections, they are handed, in order, to a
// connection of the call's own (the fallback) and the call never notices.
import type { BackendCall, BackendLink, BridgeHandlers } from "../backend-link.ts";
import {
  AUDIO_FRAME_HEADER_BYTES,
  AUDIO_FRAME_MAX_PAYLOAD,
  type AudioFrameHeader,
  encodeAudioFrame,
  newAudioFrameHeader,
  readAudioFrameHeader,
} from "../backend-protocol.ts";
import { SHARED_MAX_EVENT_BYTES } from "../backend-shared.ts";

/** What a channel needs from its connection (shared-connection.ts). */
export interface ChannelCarrier {
  /** false: dropped (the connection's unsent bytes are over the bound, or the payload too large). */
  audio(channel: number, h: AudioFrameHeader, payload: Uint8Array): boolean;
  event(channel: number, text: string): "ok" | "dropped" | "too_large";
  /** The call ended on our side: its last event, a close record, and the channel is forgotten. */
  close(channel: number, finalEvent: string | undefined): void;
  /** The call ended before the connection opened: forget it. */
  forget(channel: number): void;
}

export class SharedChannel implements BackendLink {
  readonly call: BackendCall;
  readonly handlers: BridgeHandlers;
  /** Its number on the connection (set when attached). */
  id = 0;
  #carrier: ChannelCarrier | undefined;
  #fallback: BackendLink | undefined;
  #state: "connecting" | "open" | "closed" = "connecting";
  #pending: (Buffer | string)[] = [];
  #pendingBytes = 0;
  readonly #limit: number;
  #dropped = 0;
  #toBackend = 0;
  #fromBackend = 0;

  constructor(call: BackendCall, handlers: BridgeHandlers, queueBytes: number) {
    this.call = call;
    this.handlers = handlers;
    this.#limit = queueBytes;
  }

  get state(): "connecting" | "open" | "closed" {
    return this.#fallback?.state ?? this.#state;
  }
  get droppedToBackend(): number {
    return this.#dropped + (this.#fallback?.droppedToBackend ?? 0);
  }
  get framesToBackend(): number {
    return this.#toBackend + (this.#fallback?.framesToBackend ?? 0);
  }
  get framesFromBackend(): number {
    return this.#fromBackend + (this.#fallback?.framesFromBackend ?? 0);
  }
  attached(carrier: ChannelCarrier, id: number): void {
    this.#carrier = carrier;
    this.id = id;
  }

  sendAudio(h: AudioFrameHeader, payload: Uint8Array): void {
    if (this.#fallback) {
      this.#fallback.sendAudio(h, payload);
      return;
    }
    this.#toBackend++;
    if (this.#state === "open") {
      if (!this.#carrier!.audio(this.id, h, payload)) this.#drop("audio");
      return;
    }
    const bytes = AUDIO_FRAME_HEADER_BYTES + payload.length;
    // A frame the protocol does not carry is dropped now, counted, as it would be once open.
    if (payload.length > AUDIO_FRAME_MAX_PAYLOAD || !this.#canWait(bytes)) {
      this.#drop("audio");
      return;
    }
    this.#wait(encodeAudioFrame(h, payload), bytes);
  }

  /** `text` must be one JSON value; it is not parsed. */
  sendEvent(text: string): void {
    if (this.#fallback) {
      this.#fallback.sendEvent(text);
      return;
    }
    if (text.length > SHARED_MAX_EVENT_BYTES) {
      this.handlers.onError("event_too_large");
      return;
    }
    if (this.#state === "open") {
      const s = this.#carrier!.event(this.id, text);
      if (s === "dropped") this.#drop("event");
      else if (s === "too_large") this.handlers.onError("event_too_large");
      return;
    }
    if (!this.#canWait(text.length)) {
      this.#drop("event");
      return;
    }
    this.#wait(text, text.length);
  }

  /** Sends `finalEvent` if open, then ends the channel. Idempotent; onClose is not called for it. */
  close(finalEvent?: string): void {
    if (this.#fallback) {
      this.#fallback.close(finalEvent);
      return;
    }
    const was = this.#state;
    this.#state = "closed";
    this.#pending = [];
    if (was === "open") this.#carrier!.close(this.id, finalEvent);
    else if (was === "connecting") this.#carrier?.forget(this.id);
  }

  // ---- called by the connection ----------------------------------------------------------------

  /** The connection is open and has sent this channel's open record: what waited goes now. */
  opened(): void {
    if (this.#state !== "connecting") return;
    this.#state = "open";
    const carrier = this.#carrier!;
    this.#replay(
      (text) => {
        if (carrier.event(this.id, text) !== "ok") this.#drop("event");
      },
      (h, payload) => {
        if (!carrier.audio(this.id, h, payload)) this.#drop("audio");
      },
    );
  }

  deliverAudio(h: AudioFrameHeader, payload: Buffer): void {
    if (this.#state !== "open") return;
    this.#fromBackend++;
    this.handlers.onAudio(h, payload);
  }

  deliverEvent(text: string): void {
    if (this.#state !== "open") return;
    this.handlers.onEvent(text);
  }

  /** The backend ended the call, or the connection is gone (`connectFailed`: it never opened). */
  ended(code: number, reason: string, connectFailed: boolean): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#pending = [];
    if (connectFailed) this.handlers.onError("connect_failed");
    this.handlers.onClose(code, reason);
  }

  /** The backend takes no shared connections: the call moves, with what waited, to `link`. */
  fallBack(link: BackendLink): void {
    if (this.#state !== "connecting") {
      link.close();
      return;
    }
    this.#fallback = link;
    this.#replay(
      (text) => link.sendEvent(text),
      (h, payload) => {
        this.#toBackend--; // counted again by the link
        link.sendAudio(h, payload);
      },
    );
  }

  /** Hands what waited, in order, to `event` / `audio`; stops if the channel closes meanwhile. */
  #replay(event: (text: string) => void, audio: (h: AudioFrameHeader, payload: Buffer) => void): void {
    const pending = this.#pending;
    this.#pending = [];
    this.#pendingBytes = 0;
    const h = newAudioFrameHeader();
    for (const m of pending) {
      if (typeof m === "string") event(m);
      else if (readAudioFrameHeader(m, h) === "ok") audio(h, m.subarray(AUDIO_FRAME_HEADER_BYTES));
      if (this.#state === "closed") return;
    }
  }

  #canWait(bytes: number): boolean {
    return this.#state === "connecting" && this.#pendingBytes + bytes <= this.#limit;
  }

  #wait(m: Buffer | string, bytes: number): void {
    this.#pending.push(m);
    this.#pendingBytes += bytes;
  }

  #drop(kind: "audio" | "event"): void {
    this.#dropped++;
    this.handlers.onDrop(kind);
  }
}
