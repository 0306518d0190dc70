// The echo agent without sockets, for embedding (one process runs everything) and for
// benchmarks that isolate the media path: the same behaviour as agent.ts (audio echo, the
// Realtime events of realtime.ts) behind the BackendLink a session uses.
// BACKEND_URL=internal:echo (optionally ?delay_ms=N).

import type { BackendConnector, BackendLink, BridgeHandlers } from "../transceiver/backend-link.ts";
import {
  AUDIO_FRAME_HEADER_BYTES,
  type AudioFrameHeader,
  encodeAudioFrame,
  newAudioFrameHeader,
  readAudioFrameHeader,
} from "../transceiver/backend-protocol.ts";
import { EchoEvents } from "./events-shell.ts";

export function internalEchoDelay(url: string): number {
  const m = /[?&]delay_ms=(\d{1,5})/.exec(url);
  return m ? Number(m[1]) : 0;
}

export interface InProcessEchoConnector extends BackendConnector {
  /** Frames echoed per participant slot (byte 3) over every link, index = slot. */
  readonly framesBySlot: Uint32Array;
}

/** The connector main.ts injects for BACKEND_URL=internal:echo. */
export function inProcessEchoBackend(url: string): InProcessEchoConnector {
  const delayMs = internalEchoDelay(url);
  const framesBySlot = new Uint32Array(256);
  return { framesBySlot, open: (_call, h) => new InProcessEcho(delayMs, h, framesBySlot) };
}

export class InProcessEcho implements BackendLink {
  readonly #h: BridgeHandlers;
  readonly #delayMs: number;
  readonly #out = newAudioFrameHeader();
  readonly #queue: { at: number; frame: Buffer }[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #events: EchoEvents;
  state: "connecting" | "open" | "closed" = "open";
  droppedToBackend = 0;
  framesToBackend = 0;
  framesFromBackend = 0;
  /** Frames echoed per participant slot (byte 3), index = slot (shared by a connector's links). */
  readonly framesBySlot: Uint32Array;

  constructor(delayMs: number, h: BridgeHandlers, framesBySlot = new Uint32Array(256)) {
    this.framesBySlot = framesBySlot;
    this.#delayMs = delayMs;
    this.#h = h;
    // Events go out on a microtask: a backend over a socket never answers synchronously.
    this.#events = new EchoEvents((text) => queueMicrotask(() => this.state === "open" && h.onEvent(text)));
  }

  sendAudio(h: AudioFrameHeader, payload: Uint8Array): void {
    if (this.state !== "open") return;
    this.framesToBackend++;
    this.#events.audio(h.codec, h.flags, payload);
    if (this.#delayMs === 0) {
      this.#deliver(h, payload);
      return;
    }
    // Same bytes the WebSocket agent would hold: header + payload, copied (werift reuses nothing, but be safe).
    this.#queue.push({ at: performance.now() + this.#delayMs, frame: encodeAudioFrame(h, payload) });
    if (this.#timer === undefined) this.#timer = setTimeout(this.#flush, this.#delayMs);
  }

  // The echo keeps the frame's slot, so each participant hears its own echo only.
  #deliver(h: AudioFrameHeader, payload: Uint8Array): void {
    this.framesFromBackend++;
    const slot = (h.participant ?? 0) & 0xff;
    this.framesBySlot[slot] = this.framesBySlot[slot]! + 1;
    this.#h.onAudio(h, payload as Buffer);
  }

  readonly #flush = (): void => {
    this.#timer = undefined;
    const now = performance.now();
    while (this.#queue.length > 0 && this.#queue[0]!.at <= now) {
      const { frame } = this.#queue.shift()!;
      if (this.state !== "open") return;
      if (readAudioFrameHeader(frame, this.#out) === "ok") {
        this.#deliver(this.#out, frame.subarray(AUDIO_FRAME_HEADER_BYTES));
      }
    }
    if (this.#queue.length > 0) this.#timer = setTimeout(this.#flush, Math.max(0, this.#queue[0]!.at - now));
  };

  sendEvent(text: string): void {
    if (this.state === "open") this.#events.event(text);
  }

  close(): void {
    this.state = "closed";
    this.#events.close();
    if (this.#timer) clearTimeout(this.#timer);
    this.#queue.length = 0;
  }
}
