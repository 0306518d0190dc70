// The sender's half of one event stream (docs/wire-formats.md §8, kind 6): an event's UTF-8 cut
// into fragments of consecutive seqs (flags: EVENT_MORE on all but the last, EVENT_CONTINUATION
// on all but the first), each kept for NACKs in a history of EVENT_HISTORY fragments. Pure: the
// caller gives the buffers and puts the payloads on the wire.
import {
  EVENT_CONTINUATION,
  EVENT_FRAGMENT_BYTES,
  EVENT_HEADER_BYTES,
  EVENT_MAX_BYTES,
  EVENT_MORE,
  encodeEventFragment,
} from "./event.ts";
import { SendHistory } from "./send-history.ts";

/** The largest event payload (one full fragment). */
export const EVENT_PAYLOAD_BYTES = EVENT_HEADER_BYTES + EVENT_FRAGMENT_BYTES;

/**
 * Event fragments kept for repair per stream: a byte budget of 256 x 1,103 bytes (282 KB, made at
 * the first event): a burst of four of the largest events, or of the dozen 20 KB events one long
 * conversation item or response makes, stays repairable for as long as the receiver can hold
 * fragments behind a gap (EVENT_HOLD, the gap tracker's 256-seq window). Small events take one
 * fragment each, so that is also the last 256 of them.
 */
export const EVENT_HISTORY = 256;

export class EventOutbox {
  // Created at the first event: most links never carry any.
  #history: SendHistory | undefined;
  #seq = 0;

  /** The seq the next fragment gets (the keepalive announces it). */
  get nextSeq(): number {
    return this.#seq;
  }

  /**
   * Sends `bytes` (an event's UTF-8) on `stream` to `dest`: each fragment is written at
   * `buffer()[off..]`, recorded, then handed to `emit`. False (nothing sent) when it is empty or
   * over EVENT_MAX_BYTES.
   */
  send<B extends Uint8Array>(
    stream: number,
    dest: number,
    bytes: Uint8Array,
    buffer: () => B,
    off: number,
    emit: (buf: B, len: number) => void,
  ): boolean {
    const n = bytes.length;
    if (n === 0 || n > EVENT_MAX_BYTES) return false;
    this.#history ??= new SendHistory(EVENT_HISTORY, EVENT_PAYLOAD_BYTES);
    const hist = this.#history;
    for (let from = 0; from < n; from += EVENT_FRAGMENT_BYTES) {
      const to = Math.min(n, from + EVENT_FRAGMENT_BYTES);
      const flags = (from > 0 ? EVENT_CONTINUATION : 0) | (to < n ? EVENT_MORE : 0);
      const buf = buffer();
      const seq = this.#seq;
      const len = encodeEventFragment(buf, off, seq, flags, bytes, from, to);
      if (len < 0) return false; // a buffer too small: the caller's bug, nothing more is sent
      this.#seq = (seq + 1) & 0xffff;
      hist.record(stream, dest, seq, buf, off, len);
      emit(buf, len);
    }
    return true;
  }

  /**
   * A NACKed fragment of `stream`: if still held (and within its retransmission budget), its
   * payload is written at `buffer()[off..]` and handed to `emit` with its destination.
   */
  resend<B extends Uint8Array>(
    stream: number,
    seq: number,
    buffer: () => B,
    off: number,
    emit: (buf: B, len: number, dest: number) => void,
  ): void {
    const hist = this.#history;
    if (hist === undefined) return;
    const i = hist.retransmit(stream, seq);
    if (i < 0) return;
    const buf = buffer();
    const len = hist.copyPayload(i, buf, off);
    if (len >= 0) emit(buf, len, hist.destinationOf(i));
  }
}
