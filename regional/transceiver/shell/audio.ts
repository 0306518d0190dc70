// Audio framing between werift and the backend link: client RTP → backend audio frames (codec by
// payload type), backend frames → RTP on the negotiated send codec. Nothing allocates per packet
// on the way in (one reused frame header).
import { type RTCRtpTransceiver, RtpHeader, RtpPacket } from "werift";
import {
  AUDIO_CODEC_NAMES,
  AudioCodec,
  AudioFlags,
  type AudioFrameHeader,
  codecOfMime,
  newAudioFrameHeader,
  OWNER_SLOT,
} from "../backend-protocol.ts";

const noop = (): void => {};

/**
 * Where the frames a client hears come from. When it changes (the owner's client switches to a
 * conference mixer when the first joiner arrives, and back when the last one leaves) the new
 * source has its own sequence numbers and timestamps: the client's RTP stays continuous anyway.
 */
export const ClientAudioSource = { backend: 0, mixer: 1 } as const;

export class CallAudio {
  readonly #t: RTCRtpTransceiver;
  readonly #ptToCodec = new Map<number, number>();
  readonly #frame = newAudioFrameHeader();
  #sendCodec = 0;
  #sendPt = 0;
  /** The negotiated audio direction lets us send (false for a sendonly client, e.g. WHIP). */
  #clientReceives = true;
  /** Output numbering: the source's seq/timestamp plus an offset that changes only when the source does. */
  #source = -1;
  #seqOffset = 0;
  #tsOffset = 0;
  #lastSeq = 0;
  #lastTs = 0;
  #lastAt = 0;

  /** `slot`: the participant slot the client's frames are labelled with (byte 3). */
  constructor(t: RTCRtpTransceiver, slot = OWNER_SLOT) {
    this.#t = t;
    this.#frame.participant = slot;
  }

  /** Reads the negotiated codecs after the answer; false when no audio codec is in common. */
  negotiated(): boolean {
    const t = this.#t;
    const codecs = t.codecs;
    if (codecs.length === 0 || t.stopped || t.rejected) return false;
    for (const c of codecs) {
      const id = codecOfMime(c.mimeType);
      if (id !== 0 && c.payloadType !== undefined) this.#ptToCodec.set(c.payloadType, id);
    }
    const dir = t.currentDirection;
    this.#clientReceives = dir === "sendrecv" || dir === "sendonly";
    const send = t.sender.codec ?? codecs[0]!;
    this.#sendCodec = codecOfMime(send.mimeType);
    this.#sendPt = send.payloadType ?? 0;
    return true;
  }

  get sendCodec(): number {
    return this.#sendCodec;
  }
  get codecName(): string | undefined {
    return AUDIO_CODEC_NAMES[this.#sendCodec];
  }

  /** The frame header for a client packet, or undefined for a payload type not negotiated. */
  frameOf(rtp: RtpPacket): AudioFrameHeader | undefined {
    const codec = this.#ptToCodec.get(rtp.header.payloadType);
    if (codec === undefined) return undefined;
    const f = this.#frame;
    f.codec = codec;
    f.flags = rtp.header.marker ? AudioFlags.marker : 0;
    f.sequenceNumber = rtp.header.sequenceNumber;
    f.timestamp = rtp.header.timestamp;
    return f;
  }

  /**
   * Sends a frame to the client; "codec_mismatch" when it is not the send codec. A frame from
   * another `source` than the last one re-anchors the numbering: its seq follows the last one
   * sent and its timestamp advances by the time since (at least one 20 ms frame), with the
   * marker bit set, so the client's jitter buffer sees one stream (a jump would make Chromium
   * drop the new source's packets as late or from another stream).
   */
  toClient(
    h: AudioFrameHeader,
    payload: Uint8Array,
    source: number = ClientAudioSource.backend,
  ): "sent" | "not_receiving" | "codec_mismatch" {
    // A client that only sends (a WHIP publisher) gets no RTP: werift would send it regardless.
    if (!this.#clientReceives) return "not_receiving";
    if (h.codec !== this.#sendCodec) return "codec_mismatch";
    const now = performance.now();
    let marker = (h.flags & AudioFlags.marker) !== 0;
    if (source !== this.#source) {
      if (this.#source !== -1) {
        const rate = h.codec === AudioCodec.pcmu ? 8 : 48; // RTP clock, samples per ms
        const step = Math.max(20 * rate, Math.round((now - this.#lastAt) * rate));
        this.#seqOffset = (this.#lastSeq + 1 - h.sequenceNumber) & 0xffff;
        this.#tsOffset = (this.#lastTs + step - h.timestamp) >>> 0;
        marker = true;
      }
      this.#source = source;
    }
    this.#lastSeq = (h.sequenceNumber + this.#seqOffset) & 0xffff;
    this.#lastTs = (h.timestamp + this.#tsOffset) >>> 0;
    this.#lastAt = now;
    const header = new RtpHeader({
      payloadType: this.#sendPt,
      sequenceNumber: this.#lastSeq,
      timestamp: this.#lastTs,
      marker,
    });
    const b = Buffer.isBuffer(payload)
      ? payload
      : Buffer.from(payload.buffer, payload.byteOffset, payload.length);
    this.#t.sender.sendRtp(new RtpPacket(header, b)).catch(noop);
    return "sent";
  }
}
