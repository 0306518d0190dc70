// Audio framing between werift and the backend link: client RTP → backend audio frames (codec by
// payload type), backend frames → RTP on the negotiated send codec. Nothing allocates per packet
// on the way in (one reused frame header; werift's receiver runs leanReceive, werift-media.ts);
// on the way out RtpOut (rtp-out.ts) sends without werift's per-packet objects.
import type { RTCRtpTransceiver, RtpPacket } from "werift";
import {
  AUDIO_CODEC_NAMES,
  AudioFlags,
  type AudioFrameHeader,
  codecOfMime,
  newAudioFrameHeader,
} from "../backend-protocol.ts";
import { RtpOut } from "./rtp-out.ts";
import { leanEvent, leanReceive } from "./werift-media.ts";

export class CallAudio {
  readonly #t: RTCRtpTransceiver;
  readonly #out: RtpOut;
  readonly #ptToCodec = new Map<number, number>();
  readonly #frame = newAudioFrameHeader();
  #sendCodec = 0;
  #sendPt = 0;
  /** The negotiated audio direction lets us send (false for a sendonly client, e.g. WHIP). */
  #clientReceives = true;

  constructor(t: RTCRtpTransceiver) {
    this.#t = t;
    this.#out = new RtpOut(t.sender);
    leanReceive(t.receiver);
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
    // Each decrypted packet passes these (werift-media.ts).
    leanEvent(t.dtlsTransport?.onRtp);
    for (const track of t.receiver.tracks) leanEvent(track.onReceiveRtp);
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

  /** Sends a backend frame to the client; "codec_mismatch" when it is not the send codec. */
  toClient(h: AudioFrameHeader, payload: Buffer): "sent" | "not_receiving" | "codec_mismatch" {
    // A client that only sends (a WHIP publisher) gets no RTP: werift would send it regardless.
    if (!this.#clientReceives) return "not_receiving";
    if (h.codec !== this.#sendCodec) return "codec_mismatch";
    this.#out.send(this.#sendPt, h.sequenceNumber, h.timestamp, (h.flags & AudioFlags.marker) !== 0, payload);
    return "sent";
  }
}
