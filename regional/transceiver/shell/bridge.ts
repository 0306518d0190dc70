// The per-session backend bridge: one WebSocket to BACKEND_URL (docs/backend-protocol.md).
// Binary = audio frames, text = JSON events. The media path never waits on it: while the socket
// connects, frames wait in a bounded queue; once open, a frame is dropped (and counted) whenever
// the socket's unsent bytes exceed the bound, so a slow or dead backend costs drops, not stalls.
import WebSocket from "ws";
import type { BackendCall, BackendConnector, BackendLink, BridgeHandlers } from "../backend-link.ts";
import {
  type AudioFrameHeader,
  encodeAudioFrame,
  newAudioFrameHeader,
  readAudioFrameHeader,
} from "../backend-protocol.ts";
import type { TransceiverConfig } from "../config.ts";

export interface BridgeOptions {
  url: string;
  headers: Record<string, string>;
  queueBytes: number;
  connectTimeoutMs: number;
}

export const MAX_EVENT_BYTES = 256 * 1024;

export class BackendBridge implements BackendLink {
  readonly #ws: WebSocket;
  readonly #h: BridgeHandlers;
  readonly #limit: number;
  #pending: (Buffer | string)[] = [];
  #pendingBytes = 0;
  #state: "connecting" | "open" | "closed" = "connecting";
  readonly #in = newAudioFrameHeader();
  droppedToBackend = 0;
  framesToBackend = 0;
  framesFromBackend = 0;

  constructor(o: BridgeOptions, h: BridgeHandlers) {
    this.#h = h;
    this.#limit = o.queueBytes;
    this.#ws = new WebSocket(o.url, {
      headers: o.headers,
      handshakeTimeout: o.connectTimeoutMs,
      perMessageDeflate: false,
      maxPayload: MAX_EVENT_BYTES,
    });
    const ws = this.#ws;
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

  #push(m: Buffer | string, bytes: number, kind: "audio" | "event"): void {
    if (this.#state === "open") {
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
    const frame = encodeAudioFrame(h, payload);
    this.#push(frame, frame.length, "audio");
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

/** BACKEND_URL ws(s)://: one WebSocket per session, the call named in its headers. */
export function webSocketBackend(
  c: Pick<TransceiverConfig, "backendUrl" | "backendQueueBytes" | "backendConnectTimeoutMs">,
): BackendConnector {
  const o = {
    url: c.backendUrl,
    queueBytes: c.backendQueueBytes,
    connectTimeoutMs: c.backendConnectTimeoutMs,
  };
  return {
    open: (call: BackendCall, h: BridgeHandlers) =>
      new BackendBridge(
        {
          ...o,
          headers: {
            "x-gr-call-id": call.callId,
            "x-gr-cluster-id": String(call.clusterId),
            "x-gr-transceiver-id": String(call.transceiverId),
          },
        },
        h,
      ),
  };
}
