// The shell around RealtimeEcho for one backend connection: random ids, the clock, and one timer
// that runs only while the caller is speaking (under DTX the frames stop, so silence must be
// noticed by time). Used by the WebSocket agent and the in-process echo alike.
import { randomBytes } from "node:crypto";
import { RealtimeEcho } from "./realtime.ts";

const TICK_MS = 100;

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}

export class EchoEvents {
  readonly engine: RealtimeEcho;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(send: (text: string) => void) {
    this.engine = new RealtimeEcho({ send, id: newId }, Math.floor(Date.now() / 1000));
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

  close(): void {
    this.#closed = true;
    this.#stopTimer();
  }
}
