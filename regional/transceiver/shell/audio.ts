// Audio framing between werift and the backend link: client RTP → backend audio frames (codec by
// payload type; RED and NACK repair in client-hop.ts), backend frames → RTP on the negotiated send
// codec, wrapped in RED (the previous frame as redundancy, distance 1) when RED was negotiated.
// Nothing allocates per packet on the way in without RED (one reused frame header; werift's
// receiver runs leanReceive, werift-media.ts); on the way out RtpOut (rtp-out.ts) sends without
// werift's per-packet objects.
import type { RTCRtpTransceiver, RtpPacket } from "werift";
import {
  AUDIO_CODEC_NAMES,
  AudioFlags,
  type AudioFrameHeader,
  codecOfMime,
  newAudioFrameHeader,
  OWNER_SLOT,
} from "../backend-protocol.ts";
import { RED_MAX_BLOCK_BYTES, writeRed } from "../core/red.ts";
import { RtpContinuity } from "../core/rtp-continuity.ts";
import { ClientHop, type HopSink, type HopStatus } from "./client-hop.ts";
import { RtpOut } from "./rtp-out.ts";
import { leanEvent, leanReceive } from "./werift-media.ts";

const noop = (): void => {};

export class CallAudio {
  readonly #t: RTCRtpTransceiver;
  readonly #ptToCodec = new Map<number, number>();
  readonly #frame = newAudioFrameHeader();
  readonly #continuity = new RtpContinuity();
  readonly #rtp: RtpOut;
  readonly #numbers = { sequenceNumber: 0, timestamp: 0, marker: false };
  #sendCodec = 0;
  #sendPt = 0;
  /** The Opus payload type inside our RED packets; -1 when we do not send RED. */
  #redInnerPt = -1;
  /** The previous frame sent (the next RED packet's redundant block). */
  readonly #prev = new Uint8Array(RED_MAX_BLOCK_BYTES);
  #prevLength = 0;
  #prevTimestamp = 0;
  readonly #sink: HopSink & { now(): number };
  #hop: ClientHop | undefined;
  /** The negotiated audio direction lets us send (false for a sendonly client, e.g. WHIP). */
  #clientReceives = true;

  /**
   * `sink` gets the client's frames (recovered ones first, in seq order) and the drops;
   * `slot`: the participant slot the client's frames are labelled with (byte 3).
   */
  constructor(t: RTCRtpTransceiver, sink: HopSink & { now(): number }, slot = OWNER_SLOT) {
    this.#t = t;
    this.#sink = sink;
    this.#frame.participant = slot;
    this.#rtp = new RtpOut(t.sender);
    leanReceive(t.receiver);
  }

  /** Reads the negotiated codecs after the answer; false when no audio codec is in common. */
  negotiated(): boolean {
    const t = this.#t;
    const codecs = t.codecs;
    if (codecs.length === 0 || t.stopped || t.rejected) return false;
    let redPt = -1;
    let nack = false;
    for (const c of codecs) {
      const id = codecOfMime(c.mimeType);
      if (id !== 0 && c.payloadType !== undefined) this.#ptToCodec.set(c.payloadType, id);
      if (c.mimeType.toLowerCase() === "audio/red" && c.payloadType !== undefined) redPt = c.payloadType;
      // werift's answer repeats the offer's feedback for the codec (a=rtcp-fb:<pt> nack).
      if (id !== 0 && c.rtcpFeedback.some((f) => f.type === "nack" && f.parameter === undefined)) nack = true;
    }
    const dir = t.currentDirection;
    this.#clientReceives = dir === "sendrecv" || dir === "sendonly";
    // Each decrypted packet passes these (werift-media.ts).
    leanEvent(t.dtlsTransport?.onRtp);
    for (const track of t.receiver.tracks) leanEvent(track.onReceiveRtp);
    const send = t.sender.codec ?? codecs[0]!;
    this.#sendCodec = codecOfMime(send.mimeType);
    this.#sendPt = send.payloadType ?? 0;
    if (redPt >= 0 && send.payloadType === redPt) {
      // We write the RED payloads (core/red.ts, distance 1) and werift sends them as they are:
      // its own encoder (distance 2, Buffer.concat per block) would wrap them a second time.
      const inner = [...this.#ptToCodec.keys()].find((pt) => this.#ptToCodec.get(pt) === 1);
      this.#sendCodec = inner === undefined ? 0 : 1;
      this.#redInnerPt = inner ?? -1;
      Object.defineProperty(t.sender, "redRedundantPayloadType", { get: () => undefined, set: noop });
    }
    this.#hop = new ClientHop(t, this.#ptToCodec, this.#frame, this.#sink, redPt, nack);
    // With RED, werift's receiver splits each packet into copies for the track (its own parser,
    // guessing seqs); the hop reads the packets before that instead and the track's are ignored.
    // The transport carries every m-line's RTP: only audio payload types are the hop's.
    if (redPt >= 0)
      t.dtlsTransport?.onRtp.subscribe((rtp) => {
        const pt = rtp.header.payloadType;
        if (pt === redPt || this.#ptToCodec.has(pt)) this.#hop!.receive(rtp, this.#sink.now());
      });
    return true;
  }

  /** A packet from werift's track (ignored with RED: those come from the transport, above). */
  fromTrack(rtp: RtpPacket): void {
    const hop = this.#hop;
    if (hop === undefined) this.#sink.drop("not_rtp");
    else if (!hop.red) hop.receive(rtp, this.#sink.now());
  }

  /** The client hop's repair counters (status). */
  get repair(): HopStatus | undefined {
    return this.#hop?.status();
  }

  get sendCodec(): number {
    return this.#sendCodec;
  }
  /** Times the outbound stream switched source (backend to mixer and back). */
  get sourceSwitches(): number {
    return this.#continuity.switches;
  }
  get codecName(): string | undefined {
    return AUDIO_CODEC_NAMES[this.#sendCodec];
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
    this.#continuity.map(source, n, performance.now(), h.codec === 1 ? 48 : 8);
    // A client that can NACK is answered from werift's send history, which keeps each packet (not
    // a copy): those packets take werift's own path with the payload copied (a leg's "backend" is
    // its mixer, whose output buffer is reused, and arrives as source 0); the rest go by RtpOut.
    const nack = this.#hop?.nack === true;
    const b =
      this.#redInnerPt >= 0
        ? this.#wrapRed(payload, n.timestamp)
        : nack
          ? Buffer.from(payload)
          : Buffer.isBuffer(payload)
            ? payload
            : Buffer.from(payload.buffer, payload.byteOffset, payload.length);
    this.#rtp.send(this.#sendPt, n.sequenceNumber, n.timestamp, n.marker, b, nack);
    return "sent";
  }

  /**
   * The RED payload for one frame: the previous frame as redundancy (when its timestamp offset
   * fits 14 bits), then this one. A new buffer each time: werift keeps the packet for NACKs.
   */
  #wrapRed(payload: Uint8Array, ts: number): Buffer {
    const prev = this.#prev;
    const out = Buffer.allocUnsafe(5 + this.#prevLength + payload.length);
    const offset = (ts - this.#prevTimestamp) >>> 0;
    const n = writeRed(out, this.#redInnerPt, payload, prev, this.#prevLength, offset);
    if (payload.length <= prev.length) {
      prev.set(payload);
      this.#prevLength = payload.length;
    } else this.#prevLength = 0;
    this.#prevTimestamp = ts;
    return out.subarray(0, n);
  }
}
