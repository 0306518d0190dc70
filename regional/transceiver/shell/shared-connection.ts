// One shared backend connection (backend-shared.ts): a WebSocket carrying many calls, each a
// numbered channel. What every call on it produces in one event-loop turn leaves as one message
// at the end of the turn, written into a buffer the connection keeps. The media path never waits:
// a record is dropped (and counted by its call) when the connection's unsent bytes would pass
// BACKEND_QUEUE_BYTES per call on it, the bound a connection of the call's own would have.
import type { IncomingMessage } from "node:http";
import WebSocket from "ws";
import type { BridgeErrorReason } from "../backend-link.ts";
import { AUDIO_FRAME_MAX_PAYLOAD, type AudioFrameHeader } from "../backend-protocol.ts";
import {
  SHARED_HEADER,
  SHARED_MAX_EVENT_BYTES,
  SHARED_MAX_MESSAGE_BYTES,
  SharedKind,
  SharedMessageReader,
  sharedAudioBytes,
} from "../backend-shared.ts";
import { SharedMessageWriter } from "../backend-shared-writer.ts";
import type { ChannelCarrier, SharedChannel } from "./shared-channel.ts";
import { flushAtTurnEnd, type TurnFlushed } from "./turn-flush.ts";

export interface SharedConnectionOptions {
  url: string;
  /** x-gr-cluster-id, x-gr-transceiver-id (no call id: the connection is no one call's). */
  headers: Record<string, string>;
  connectTimeoutMs: number;
  /** Unsent bytes allowed per call on the connection. */
  queueBytes: number;
  /** Upgraded: the backend agreed (true), or answered without x-gr-shared / refused the upgrade. */
  onNegotiated(c: SharedConnection, agreed: boolean, waiting: SharedChannel[]): void;
  /** The connection is gone (after its calls were told). */
  onGone(c: SharedConnection, wasOpen: boolean): void;
  /** A bad message from the backend, not any one call's. */
  onError(reason: BridgeErrorReason): void;
}

const MAX_CHANNEL = 0xffff_ffff;
const CLOSE_REASON = "session ended";

export class SharedConnection implements ChannelCarrier, TurnFlushed {
  readonly #o: SharedConnectionOptions;
  readonly #ws: WebSocket;
  #state: "connecting" | "open" | "closed" = "connecting";
  #agreed = false;
  readonly #channels = new Map<number, SharedChannel>();
  #next = 1;
  // A turn's records; a message is flushed early before it passes the writer's 64 KiB.
  readonly #out = new SharedMessageWriter({
    // ws copies the bytes while masking them, so the writer's buffer is reused at once.
    send: (m) => {
      if (this.#state === "open") this.#ws.send(m, { binary: true });
    },
    started: () => flushAtTurnEnd(this),
  });
  readonly #reader = new SharedMessageReader();

  constructor(o: SharedConnectionOptions) {
    this.#o = o;
    this.#ws = new WebSocket(o.url, {
      headers: { ...o.headers, [SHARED_HEADER]: "1" },
      handshakeTimeout: o.connectTimeoutMs,
      perMessageDeflate: false,
      maxPayload: SHARED_MAX_MESSAGE_BYTES,
    });
    const ws = this.#ws;
    ws.on("upgrade", (res: IncomingMessage) => {
      this.#agreed = res.headers[SHARED_HEADER] === "1";
    });
    // A backend that wants a call id (or any non-101 answer) refused a shared connection; it may
    // still take calls one per connection.
    ws.on("unexpected-response", (_req, res: IncomingMessage) => {
      res.resume();
      this.#refused();
      ws.terminate();
    });
    ws.on("open", () => {
      if (this.#state !== "connecting") return;
      if (!this.#agreed) {
        this.#refused();
        ws.close(1000, "shared connection not accepted");
        return;
      }
      this.#state = "open";
      this.#o.onNegotiated(this, true, []);
      for (const ch of this.#channels.values()) this.#opened(ch);
    });
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (this.#state !== "open") return;
      if (!isBinary) {
        this.#o.onError("bad_frame");
        return;
      }
      this.#onMessage(data);
    });
    ws.on("error", () => {});
    ws.on("close", (code: number, reason: Buffer) => this.#gone(code, reason.toString("utf8")));
  }

  get state(): "connecting" | "open" | "closed" {
    return this.#state;
  }
  /** Calls on the connection. */
  get calls(): number {
    return this.#channels.size;
  }
  /** No channel number left (after 2^32 - 1 calls): the connector opens another. */
  get full(): boolean {
    return this.#next > MAX_CHANNEL;
  }

  attach(ch: SharedChannel): void {
    const id = this.#next++;
    this.#channels.set(id, ch);
    ch.attached(this, id);
    if (this.#state === "open") this.#opened(ch);
  }

  /** Sends what is queued, then closes (the transceiver stops); calls still on it end. */
  end(): void {
    if (this.#state === "open") {
      this.flushBatch();
      this.#ws.close(1000, "transceiver stopped");
    } else {
      this.#ws.terminate();
    }
  }

  // ---- ChannelCarrier --------------------------------------------------------------------------

  audio(channel: number, h: AudioFrameHeader, payload: Uint8Array): boolean {
    const bytes = sharedAudioBytes(payload.length);
    if (payload.length > AUDIO_FRAME_MAX_PAYLOAD || this.#overBound(bytes)) return false;
    return this.#out.audio(channel, h, payload);
  }

  event(channel: number, text: string): "ok" | "dropped" | "too_large" {
    const n = Buffer.byteLength(text, "utf8");
    if (n > SHARED_MAX_EVENT_BYTES) return "too_large";
    if (n === 0 || this.#overBound(n)) return "dropped"; // an empty text is no JSON value
    this.#out.text(SharedKind.event, channel, text, n);
    return "ok";
  }

  close(channel: number, finalEvent: string | undefined): void {
    if (!this.#channels.delete(channel) || this.#state !== "open") return;
    if (finalEvent !== undefined) {
      const n = Buffer.byteLength(finalEvent, "utf8");
      if (n > 0 && n <= SHARED_MAX_EVENT_BYTES) this.#out.text(SharedKind.event, channel, finalEvent, n);
    }
    this.#out.close(channel, 1000, CLOSE_REASON);
  }

  forget(channel: number): void {
    this.#channels.delete(channel);
  }

  /** Sends the message being built, if any (once per turn, and early when the buffer is full). */
  flushBatch(): void {
    this.#out.flush();
  }

  // ---- inside ------------------------------------------------------------------------------------

  #opened(ch: SharedChannel): void {
    const open = JSON.stringify({ call_id: ch.call.callId });
    this.#out.text(SharedKind.open, ch.id, open, Buffer.byteLength(open, "utf8"));
    ch.opened();
  }

  #overBound(bytes: number): boolean {
    const unsent = this.#ws.bufferedAmount + this.#out.bytes + bytes;
    return unsent > this.#o.queueBytes * Math.max(1, this.#channels.size);
  }

  #onMessage(data: Buffer): void {
    const r = this.#reader;
    if (r.start(data) !== "ok") {
      this.#o.onError("bad_frame");
      return;
    }
    for (;;) {
      const s = r.next();
      if (s === "end") return;
      if (s !== "ok") {
        this.#o.onError("bad_frame");
        return;
      }
      const ch = this.#channels.get(r.channel);
      if (ch === undefined) {
        // A call that ended here may still have records on the way; a number never given out is an error.
        if (r.channel >= this.#next) this.#o.onError("bad_frame");
        continue;
      }
      if (r.kind === SharedKind.audio) {
        ch.deliverAudio(r.frame, data.subarray(r.bodyStart + 12, r.bodyEnd));
      } else if (r.kind === SharedKind.event) {
        ch.deliverEvent(data.toString("utf8", r.bodyStart, r.bodyEnd));
      } else if (r.kind === SharedKind.close) {
        this.#channels.delete(r.channel);
        ch.ended(r.code, data.toString("utf8", r.bodyStart + 2, r.bodyEnd), false);
      } else {
        this.#o.onError("bad_frame"); // backends do not open channels
      }
      if (this.#state !== "open") return;
    }
  }

  #refused(): void {
    if (this.#state !== "connecting") return;
    this.#state = "closed";
    const waiting = [...this.#channels.values()];
    this.#channels.clear();
    this.#o.onNegotiated(this, false, waiting);
    this.#o.onGone(this, false);
  }

  #gone(code: number, reason: string): void {
    const was = this.#state;
    if (was === "closed") return;
    this.#state = "closed";
    this.#out.discard();
    const channels = [...this.#channels.values()];
    this.#channels.clear();
    for (const ch of channels) ch.ended(code, reason, was === "connecting");
    this.#o.onGone(this, was === "open");
  }
}
