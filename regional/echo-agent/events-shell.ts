// The shell around RealtimeEcho for one backend connection: random ids, the clock, and one timer
// that runs only while the caller is speaking (under DTX the frames stop, so silence must be
// noticed by time). Used by the WebSocket agent and the in-process echo alike. With a KeptCalls
// store (the WebSocket agent), a call whose connection drops without a normal end is kept for
// its resume.
import { randomBytes } from "node:crypto";
import { type KeptCalls, keptAfterEnd } from "./kept-calls.ts";
import { type EchoConversationState, RealtimeEcho } from "./realtime.ts";

export interface KeepDeps {
  calls: KeptCalls<EchoConversationState>;
  /** Milliseconds, monotonic (the store's ages). */
  now(): number;
}

const TICK_MS = 100;

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}

export class EchoEvents {
  readonly engine: RealtimeEcho;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #keep: KeepDeps | undefined;

  constructor(send: (text: string) => void, keep?: KeepDeps) {
    this.#keep = keep;
    const hooks = keep && {
      attach: (callId: string, resumed: boolean) =>
        keep.calls.attach(this.engine, callId, resumed, keep.now()),
      ended: (callId: string, reason: string) => {
        if (!keptAfterEnd(reason)) keep.calls.end(this.engine, callId);
      },
    };
    this.engine = new RealtimeEcho({ send, id: newId, ...hooks }, Math.floor(Date.now() / 1000));
  }

  event(text: string): void {
    if (!this.#closed) this.engine.event(text);
  }

  audio(codec: number, flags: number, payload: Uint8Array): void {
    if (this.#closed) return;
    this.engine.audio(codec, flags, payload, performance.now());
    if (this.engine.speaking && this.#timer === undefined) {
      this.#timer = setInterval(this.#tick, TICK_MS);
      this.#timer.unref();
    }
  }

  readonly #tick = (): void => {
    this.engine.tick(performance.now());
    if (!this.engine.speaking || this.#closed) this.#stopTimer();
  };

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The connection is gone; a call that did not end normally is kept (if there is a store). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopTimer();
    const callId = this.engine.callId;
    if (this.#keep && callId !== undefined) this.#keep.calls.close(this.engine, callId, this.#keep.now());
  }
}
