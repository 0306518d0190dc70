// The writer half of shared backend connections (backend-shared.ts has the layout and the
// record encoders): messages built in one buffer that is kept, and a record too large for it on
// its own. Pure: no sockets, no clocks (the sink is the caller's IO).
import type { AudioFrameHeader } from "./backend-protocol.ts";
import {
  appendSharedAudio,
  appendSharedClose,
  appendSharedRecord,
  appendSharedText,
  SHARED_MAX_CLOSE_REASON,
  SHARED_RECORD_HEADER_BYTES,
  type SharedKind,
  sharedAudioBytes,
  sharedTextBytes,
  startSharedMessage,
} from "./backend-shared.ts";

/** Where a writer's messages go, and when it wants one sent (both sides' IO, e.g. a WebSocket). */
export interface SharedMessageSink {
  /** One message; `view`: the writer's own buffer, valid only until the next record (copy to keep it). */
  send(m: Buffer, view: boolean): void;
  /** A new message was started: call flush() before long (both sides: at the end of the turn). */
  started(): void;
}

/**
 * Builds shared messages in one buffer it keeps, and sends through its sink: a message as it
 * would outgrow the buffer, and on flush(). A record too large for the buffer even alone (a large
 * event) goes, after what was queued, in a message of its own.
 */
export class SharedMessageWriter {
  readonly #buf: Buffer;
  readonly #sink: SharedMessageSink;
  #fill = 0;

  constructor(sink: SharedMessageSink, bytes = 64 * 1024) {
    this.#sink = sink;
    this.#buf = Buffer.allocUnsafe(bytes);
  }

  /** Bytes of the message being built (0: none started). */
  get bytes(): number {
    return this.#fill;
  }

  // Each returns false (and appends nothing) when the record breaks its kind's bounds.
  audio(channel: number, h: AudioFrameHeader, payload: Uint8Array): boolean {
    this.#room(sharedAudioBytes(payload.length));
    return this.#set(appendSharedAudio(this.#buf, this.#start(), channel, h, payload));
  }
  record(kind: SharedKind, channel: number, body: Uint8Array): boolean {
    this.#room(SHARED_RECORD_HEADER_BYTES + body.length);
    return this.#set(appendSharedRecord(this.#buf, this.#start(), kind, channel, body));
  }
  /** An open or event record whose body is `text`, `n` = its UTF-8 length. */
  text(
    kind: typeof SharedKind.open | typeof SharedKind.event,
    channel: number,
    text: string,
    n: number,
  ): boolean {
    const bytes = sharedTextBytes(n);
    if (1 + bytes > this.#buf.length) {
      const own = Buffer.allocUnsafe(1 + bytes);
      if (appendSharedText(own, startSharedMessage(own), kind, channel, text, n) < 0) return false;
      this.flush();
      this.#sink.send(own, false);
      return true;
    }
    this.#room(bytes);
    return this.#set(appendSharedText(this.#buf, this.#start(), kind, channel, text, n));
  }
  close(channel: number, code: number, reason: string): boolean {
    this.#room(sharedTextBytes(2 + Math.min(Buffer.byteLength(reason, "utf8"), SHARED_MAX_CLOSE_REASON)));
    return this.#set(appendSharedClose(this.#buf, this.#start(), channel, code, reason));
  }

  /** Sends the message built so far, if any. */
  flush(): void {
    const n = this.#fill;
    this.#fill = 0;
    if (n > 1) this.#sink.send(this.#buf.subarray(0, n), true);
  }

  /** Forgets the message built so far (the connection is gone). */
  discard(): void {
    this.#fill = 0;
  }

  /** Sends the current message first when `bytes` more would not fit in it. */
  #room(bytes: number): void {
    if (this.#fill > 0 && this.#fill + bytes > this.#buf.length) this.flush();
  }

  #start(): number {
    return this.#fill === 0 ? startSharedMessage(this.#buf) : this.#fill;
  }

  #set(end: number): boolean {
    if (end < 0) return false;
    const fresh = this.#fill === 0;
    this.#fill = end;
    if (fresh) this.#sink.started();
    return true;
  }
}
