// Audio framing between werift and the backend link: client RTP → backend audio frames (codec by
// payload type), backend frames → RTP on the negotiated send codec. Nothing allocates per packet
// on the way in (one reused frame header).
import { type RTCRtpTransceiver, RtpHeader, RtpPacket } from "werift";
import {
  AUDIO_CODEC_NAMES,
  AudioFlags,
  type AudioFrameHeader,
  codecOfMime,
  newAudioFrameHeader,
  OWNER_SLOT,
} from "../backend-protocol.ts";
import { RtpContinuity } from "../core/rtp-continuity.ts";

const noop = (): void => {};

export class CallAudio {
  readonly #t: RTCRtpTransceiver;
  readonly #ptToCodec = new Map<number, number>();
  readonly #frame = newAudioFrameHeader();
  readonly #out = new RtpContinuity();
  readonly #numbers = { sequenceNumber: 0, timestamp: 0, marker: false };
  #sendCodec = 0;
  #sendPt = 0;
  /** The negotiated audio direction lets us send (false for a sendonly client, e.g. WHIP). */
  #clientReceives = true;

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
  /** Times the outbound stream switched source (backend to mixer and back). */
  get sourceSwitches(): number {
    return this.#out.switches;
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
   * Sends a frame to the client; "codec_mismatch" when it is not the send codec. `source` names
   * where it comes from (0 the backend, 1 a conference mixer): a change keeps the stream continuous.
   */
  toClient(
    h: AudioFrameHeader,
    payload: Uint8Array,
    source = 0,
  ): "sent" | "not_receiving" | "codec_mismatch" {
    // A client that only sends (a WHIP publisher) gets no RTP: werift would send it regardless.
    if (!this.#clientReceives) return "not_receiving";
    if (h.codec !== this.#sendCodec) return "codec_mismatch";
    const n = this.#numbers;
    n.sequenceNumber = h.sequenceNumber;
    n.timestamp = h.timestamp;
    n.marker = (h.flags & AudioFlags.marker) !== 0;
    this.#out.map(source, n, performance.now(), h.codec === 1 ? 48 : 8);
    const header = new RtpHeader({
      payloadType: this.#sendPt,
      sequenceNumber: n.sequenceNumber,
      timestamp: n.timestamp,
      marker: n.marker,
    });
    const b = Buffer.isBuffer(payload)
      ? payload
      : Buffer.from(payload.buffer, payload.byteOffset, payload.length);
    this.#t.sender.sendRtp(new RtpPacket(header, b)).catch(noop);
    return "sent";
  }
}
