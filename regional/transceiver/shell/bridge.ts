// The per-session backend bridge: one WebSocket to BACKEND_URL (docs/backend-protocol.md).
// Binary = audio frames, text = JSON events. The media path never waits on it: while the socket
// connects, frames wait in a bounded queue; once open, a frame is dropped (and counted) whenever
// the socket's unsent bytes exceed the bound, so a slow or dead backend costs drops, not stalls.
// When the backend agrees (x-gr-audio-batch), the frames a session produces in one event-loop
// turn go out as one batch message, flushed once per turn for every bridge (setImmediate, after
// the turn's datagrams); frames are written into a buffer the bridge keeps, not a new one each.
import type { IncomingMessage } from "node:http";
import WebSocket from "ws";
import type { BackendLink, BridgeHandlers } from "../backend-link.ts";
import {
  AUDIO_BATCH_HEADER,
  AUDIO_BATCH_MAX_FRAMES,
  AUDIO_BATCH_VERSION,
  AUDIO_FRAME_HEADER_BYTES,
  AUDIO_FRAME_MAX_PAYLOAD,
  AudioBatchReader,
  type AudioFrameHeader,
  appendAudioFrame,
  encodeAudioFrame,
  MAX_EVENT_BYTES,
  newAudioFrameHeader,
  readAudioFrameHeader,
  sealAudioBatch,
  writeAudioFrameHeader,
} from "../backend-protocol.ts";
import { flushAtTurnEnd } from "./turn-flush.ts";

export interface BridgeOptions {
  url: string;
  headers: Record<string, string>;
  queueBytes: number;
  connectTimeoutMs: number;
}

/** Bytes a bridge batches before it flushes early (any one frame fits). */
const BATCH_BUFFER_BYTES = 4096;

export class BackendBridge implements BackendLink {
  readonly #ws: WebSocket;
  readonly #h: BridgeHandlers;
  readonly #limit: number;
  #pending: (Buffer | string)[] = [];
  #pendingBytes = 0;
  #state: "connecting" | "open" | "closed" = "connecting";
  readonly #in = newAudioFrameHeader();
  readonly #reader = new AudioBatchReader();
  #batch = false;
  // Frame (unbatched) or batch being built; ws copies it while masking, so it is reused.
  #out: Buffer | undefined;
  #fill = 0;
  #count = 0;
  droppedToBackend = 0;
  framesToBackend = 0;
  framesFromBackend = 0;

  constructor(o: BridgeOptions, h: BridgeHandlers) {
    this.#h = h;
    this.#limit = o.queueBytes;
    this.#ws = new WebSocket(o.url, {
      headers: { ...o.headers, [AUDIO_BATCH_HEADER]: "1" },
      handshakeTimeout: o.connectTimeoutMs,
      perMessageDeflate: false,
      maxPayload: MAX_EVENT_BYTES,
    });
    const ws = this.#ws;
    ws.on("upgrade", (res: IncomingMessage) => {
      this.#batch = res.headers[AUDIO_BATCH_HEADER] === "1";
    });
    ws.on("open", () => {
      if (this.#state !== "connecting") return;
      this.#state = "open";
      const pending = this.#pending;
      this.#pending = [];
      this.#pendingBytes = 0;
      for (const m of pending) ws.send(m, { binary: typeof m !== "string" });
    });
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (this.#state !== "open") return;
      if (isBinary) {
        if (this.#batch && data[0] === AUDIO_BATCH_VERSION) {
          this.#onBatch(data);
          return;
        }
        if (readAudioFrameHeader(data, this.#in) !== "ok") {
          this.#h.onError("bad_frame");
          return;
        }
        this.framesFromBackend++;
        this.#h.onAudio(this.#in, data.subarray(12));
      } else {
        this.#h.onEvent(data.toString("utf8"));
      }
    });
    ws.on("error", () => {
      if (this.#state === "closed") return;
      this.#h.onError(this.#state === "connecting" ? "connect_failed" : "socket_error");
    });
    ws.on("close", (code: number, reason: Buffer) => {
      const was = this.#state;
      this.#state = "closed";
      this.#pending = [];
      if (was !== "closed") this.#h.onClose(code, reason.toString("utf8"));
    });
  }

  get state(): "connecting" | "open" | "closed" {
    return this.#state;
  }

  /** Whether the backend agreed to audio batches (known once open). */
  get batching(): boolean {
    return this.#batch;
  }

  #onBatch(data: Buffer): void {
    const r = this.#reader;
    if (r.start(data) !== "ok") {
      this.#h.onError("bad_frame");
      return;
    }
    for (;;) {
      const s = r.next(this.#in);
      if (s === "end") return;
      if (s !== "ok") {
        this.#h.onError("bad_frame");
        return;
      }
      this.framesFromBackend++;
      this.#h.onAudio(this.#in, data.subarray(r.payloadStart, r.payloadEnd));
      if (this.#state !== "open") return;
    }
  }

  #buffer(): Buffer {
    this.#out ??= Buffer.allocUnsafe(BATCH_BUFFER_BYTES);
    return this.#out;
  }

  /** Sends the batch being built, if any (called once per turn for every dirty bridge). */
  flushBatch(): void {
    if (this.#count === 0) return;
    const out = this.#buffer();
    sealAudioBatch(out, this.#count);
    const n = this.#fill;
    this.#fill = 0;
    this.#count = 0;
    if (this.#state === "open") this.#ws.send(out.subarray(0, n), { binary: true });
  }

  #batchAudio(h: AudioFrameHeader, payload: Uint8Array): void {
    const bytes = 2 + AUDIO_FRAME_HEADER_BYTES + payload.length;
    if (
      payload.length > AUDIO_FRAME_MAX_PAYLOAD ||
      this.#ws.bufferedAmount + this.#fill + bytes > this.#limit
    ) {
      this.#drop("audio");
      return;
    }
    if (this.#fill + bytes > BATCH_BUFFER_BYTES || this.#count === AUDIO_BATCH_MAX_FRAMES) this.flushBatch();
    if (this.#count === 0) {
      this.#fill = 2;
      flushAtTurnEnd(this);
    }
    this.#fill = appendAudioFrame(this.#buffer(), this.#fill, h, payload);
    this.#count++;
  }

  #push(m: Buffer | string, bytes: number, kind: "audio" | "event"): void {
    if (this.#state === "open") {
      if (kind === "event") this.flushBatch(); // events stay in order with the audio around them
      if (this.#ws.bufferedAmount + bytes > this.#limit) {
        this.#drop(kind);
        return;
      }
      this.#ws.send(m, { binary: kind === "audio" });
      return;
    }
    if (this.#state === "closed" || this.#pendingBytes + bytes > this.#limit) {
      this.#drop(kind);
      return;
    }
    this.#pending.push(m);
    this.#pendingBytes += bytes;
  }

  #drop(kind: "audio" | "event"): void {
    this.droppedToBackend++;
    this.#h.onDrop(kind);
  }

  sendAudio(h: AudioFrameHeader, payload: Uint8Array): void {
    this.framesToBackend++;
    if (payload.length > AUDIO_FRAME_MAX_PAYLOAD) {
      this.#drop("audio"); // the protocol carries at most 1500 bytes, queued or not
      return;
    }
    if (this.#state !== "open") {
      const frame = encodeAudioFrame(h, payload);
      this.#push(frame, frame.length, "audio");
      return;
    }
    if (this.#batch) {
      this.#batchAudio(h, payload);
      return;
    }
    const bytes = AUDIO_FRAME_HEADER_BYTES + payload.length;
    if (bytes > BATCH_BUFFER_BYTES) {
      this.#drop("audio");
      return;
    }
    const out = this.#buffer();
    writeAudioFrameHeader(out, h);
    out.set(payload, AUDIO_FRAME_HEADER_BYTES);
    this.#push(out.subarray(0, bytes), bytes, "audio");
  }

  /** `text` must be one JSON value; the bridge does not parse it. */
  sendEvent(text: string): void {
    if (text.length > MAX_EVENT_BYTES) {
      this.#h.onError("event_too_large");
      return;
    }
    this.#push(text, text.length, "event");
  }

  /** Sends `finalEvent` if open, then closes. Idempotent; onClose is not called for it. */
  close(finalEvent?: string): void {
    const was = this.#state;
    if (was === "open") this.flushBatch();
    this.#state = "closed";
    this.#pending = [];
    if (was === "open") {
      if (finalEvent !== undefined) this.#ws.send(finalEvent);
      this.#ws.close(1000, "session ended");
    } else if (was === "connecting") {
      this.#ws.terminate();
    }
  }
}
