// Repair of what the client sends, on the client hop (docs/transceiver.md "Codecs and repair on
// the client hop"): RED payloads unwrapped (core/red.ts), a redundant block handed to the backend
// as the frame it repeats when that frame was lost, duplicates dropped, and NACKs (RFC 4585
// Generic NACK) for gaps when the client negotiated `a=rtcp-fb:<opus> nack`. The gap bookkeeping
// is the backbone hop's (shared/conference/gap-tracker.ts), one tracker per client SSRC.
// Without RED or NACK negotiated every packet passes as before (no tracking).
import { GenericNack, type RTCRtpTransceiver, RtcpTransportLayerFeedback, type RtpPacket } from "werift";
import { GapTracker } from "../../../shared/conference/gap-tracker.ts";
import { type NackEntry, newNackEntries } from "../../../shared/conference/payloads.ts";
import { nackSeqs } from "../../../shared/conference/send-history.ts";
import { AudioFlags, type AudioFrameHeader } from "../backend-protocol.ts";
import type { ClientRepairStatus } from "../call-types.ts";
import { newRedBlocks, parseRed } from "../core/red.ts";

/** Why a client packet did not reach the backend (counted by the call). */
export type HopDrop = "not_rtp" | "red_malformed" | "duplicate_rtp";

export interface HopSink {
  frame(h: AudioFrameHeader, payload: Uint8Array): void;
  drop(reason: HopDrop): void;
}

/** The hop's counters (the call status's `clientRepair`). */
export type HopStatus = ClientRepairStatus;

const noop = (): void => {};

export class ClientHop {
  readonly #t: RTCRtpTransceiver;
  readonly #ptToCodec: ReadonlyMap<number, number>;
  readonly #f: AudioFrameHeader;
  readonly #sink: HopSink;
  readonly #redPt: number;
  readonly nack: boolean;
  readonly #blocks = newRedBlocks();
  #tracker: GapTracker | undefined;
  #ssrc = -1;
  #entries: NackEntry[] | undefined;
  #seqs: Uint16Array | undefined;
  recovered = 0;
  redPackets = 0;
  /** Packets dropped because their seq arrived already (redundant blocks not counted). */
  duplicates = 0;
  #totals = { nacked: 0, repaired: 0, lost: 0 };

  /** `redPt` -1: no RED. `f` is the call's reused frame header. */
  constructor(
    t: RTCRtpTransceiver,
    ptToCodec: ReadonlyMap<number, number>,
    f: AudioFrameHeader,
    sink: HopSink,
    redPt: number,
    nack: boolean,
  ) {
    this.#t = t;
    this.#ptToCodec = ptToCodec;
    this.#f = f;
    this.#sink = sink;
    this.#redPt = redPt;
    this.nack = nack;
  }

  get red(): boolean {
    return this.#redPt >= 0;
  }

  /** Tracking runs only when something can be repaired. */
  get tracking(): boolean {
    return this.#redPt >= 0 || this.nack;
  }

  /** One RTP packet of the client's audio; `now` in ms. */
  receive(rtp: RtpPacket, now: number): void {
    const h = rtp.header;
    const pt = h.payloadType;
    if (!this.tracking) {
      const codec = this.#ptToCodec.get(pt);
      if (codec === undefined) this.#sink.drop("not_rtp");
      else this.#emit(codec, h.sequenceNumber, h.timestamp, h.marker, rtp.payload);
      return;
    }
    // The payload type first: a packet that is not our audio (another m-line's SSRC on the
    // bundle) must not start the seq space over.
    const codec = pt === this.#redPt ? 0 : this.#ptToCodec.get(pt);
    if (codec === undefined) {
      this.#sink.drop("not_rtp");
      return;
    }
    const tr = this.#trackerFor(h.ssrc);
    if (codec === 0) this.#receiveRed(rtp, tr, now);
    else if (tr.onPacket(h.sequenceNumber, now) === "duplicate") this.#duplicate();
    else this.#emit(codec, h.sequenceNumber, h.timestamp, h.marker, rtp.payload);
    if (tr.missing > 0) this.#sendNacks(tr, h.ssrc, now);
  }

  #receiveRed(rtp: RtpPacket, tr: GapTracker, now: number): void {
    const b = this.#blocks;
    const p = rtp.payload;
    const { sequenceNumber: seq, timestamp: ts, marker } = rtp.header;
    this.redPackets++;
    if (parseRed(p, b) !== "ok") {
      this.#sink.drop("red_malformed");
      return;
    }
    const last = b.count - 1;
    const codec = this.#ptToCodec.get(b.pt[last]!);
    if (codec === undefined || b.length[last] === 0) {
      this.#sink.drop("red_malformed");
      return;
    }
    // Redundant blocks, oldest first: block i repeats the packet `last - i` seqs back (the
    // encoder keeps its previous packets, RFC 2198 §3; libwebrtc and werift do). Offsets must
    // shrink towards the primary, or no block is the frame its position says: none is used.
    let trusted = true;
    for (let i = 0, prev = 0x10000; i < last && trusted; i++) {
      const off = b.tsOffset[i]!;
      trusted = off > 0 && off < prev;
      prev = off;
    }
    for (let i = 0; trusted && i < last; i++) {
      const len = b.length[i]!;
      const c = this.#ptToCodec.get(b.pt[i]!);
      if (len === 0 || c === undefined) continue;
      const rseq = (seq - (last - i)) & 0xffff;
      if (tr.onPacket(rseq, now) === "duplicate") continue;
      this.recovered++;
      const start = b.start[i]!;
      this.#emit(c, rseq, (ts - b.tsOffset[i]!) >>> 0, false, p.subarray(start, start + len));
    }
    if (tr.onPacket(seq, now) === "duplicate") {
      this.#duplicate();
      return;
    }
    const start = b.start[last]!;
    this.#emit(codec, seq, ts, marker, p.subarray(start, start + b.length[last]!));
  }

  #duplicate(): void {
    this.duplicates++;
    this.#sink.drop("duplicate_rtp");
  }

  #emit(codec: number, seq: number, ts: number, marker: boolean, payload: Uint8Array): void {
    const f = this.#f;
    f.codec = codec;
    f.flags = marker ? AudioFlags.marker : 0;
    f.sequenceNumber = seq;
    f.timestamp = ts;
    this.#sink.frame(f, payload);
  }

  #trackerFor(ssrc: number): GapTracker {
    if (this.#tracker !== undefined && ssrc === this.#ssrc) return this.#tracker;
    // A new SSRC is a new sequence space (RFC 3550 §8.2): start over.
    if (this.#tracker !== undefined) this.#fold(this.#tracker);
    this.#ssrc = ssrc;
    this.#tracker = new GapTracker(0, this.nack);
    return this.#tracker;
  }

  #fold(t: GapTracker): void {
    const s = this.#totals;
    s.nacked += t.nacked;
    s.repaired += t.repaired;
    s.lost += t.lost;
  }

  /**
   * NACKs due now: at once for a new gap, then retried as packets arrive (the tracker's timing).
   * Without NACK negotiated the tracker only gives up old gaps (counted lost).
   */
  #sendNacks(tr: GapTracker, ssrc: number, now: number): void {
    this.#entries ??= newNackEntries();
    this.#seqs ??= new Uint16Array(17);
    const n = tr.due(now, this.#entries, 0);
    if (n === 0) return;
    const lost: number[] = [];
    for (let i = 0; i < n; i++) {
      const k = nackSeqs(this.#entries[i]!, this.#seqs);
      for (let j = 0; j < k; j++) lost.push(this.#seqs[j]!);
    }
    const dtls = this.#t.dtlsTransport;
    if (dtls === undefined) return;
    const nack = new GenericNack({ senderSsrc: this.#t.receiver.rtcpSsrc, mediaSourceSsrc: ssrc, lost });
    dtls.sendRtcp([new RtcpTransportLayerFeedback({ feedback: nack })]).catch(noop);
  }

  status(): HopStatus {
    const s = { ...this.#totals };
    const t = this.#tracker;
    if (t !== undefined) {
      s.nacked += t.nacked;
      s.repaired += t.repaired;
      s.lost += t.lost;
    }
    const { red, nack, redPackets, recovered, duplicates } = this;
    return { red, nack, redPackets, recovered, duplicates, ...s };
  }
}
