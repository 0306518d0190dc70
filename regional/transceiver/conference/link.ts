// One conference's frames to and from one remote transceiver (the hub's view of a leaf, or a
// leaf's view of its hub): the address frames go to, our counter, the replay window of theirs,
// the history of the media we sent (answering NACKs, at most twice per frame) and a gap tracker
// per source stream they send us (a NACK at once on the packet that reveals a gap, retries on
// the tick). Liveness: when we last heard from them. The round trip (keepalive timing echo)
// paces the NACK retries. Events (kind 6) are a stream of their own each way: own seqs, own
// history, NACKed with EVENT_STREAM_FLAG (EventOutbox), delivered in order (EventInbox). A large
// event goes out as consecutive fragments (one seq each): repair works per fragment.

import { eventUtf8 } from "../../../shared/conference/event.ts";
import { EventInbox } from "../../../shared/conference/event-inbox.ts";
import { EVENT_PAYLOAD_BYTES, EventOutbox } from "../../../shared/conference/event-outbox.ts";
import {
  CONFERENCE_HEADER_BYTES,
  CONFERENCE_MAX_PAYLOAD,
  type ConferenceHeader,
  ConferenceKind,
  newConferenceHeader,
} from "../../../shared/conference/frame.ts";
import { KEEPALIVE_TIMING_BYTES, RttEstimator, timingEvents } from "../../../shared/conference/keepalive.ts";
import {
  decodeNack,
  EVENT_STREAM_FLAG,
  encodeNack,
  NACK_MAX_ENTRIES,
  newNackEntries,
} from "../../../shared/conference/payloads.ts";
import { GapTracker, nackSeqs, type PacketVerdict, SendHistory } from "../../../shared/conference/repair.ts";
import { ReplayWindow } from "../../../shared/conference/replay.ts";
import type { HostPort } from "../../../shared/topology/address.ts";
import {
  AUDIO_FRAME_HEADER_BYTES,
  type AudioFrameHeader,
  writeAudioFrameHeader,
} from "../backend-protocol.ts";
import type { ConferenceSocket } from "./socket.ts";

/** Media bytes kept per frame for repair (an Opus voice frame is 60-200 bytes; larger ones are not kept). */
const HISTORY_FRAME_BYTES = 512;
/** Source streams tracked per link (a conference has at most 64 participants and the backend, and an event stream). */
const MAX_TRACKED_SOURCES = 67;

type Tracked = { g: GapTracker; counted: number; events: boolean };

// Scratch shared by every link: the socket's callbacks and ticks never re-enter.
const entries = newNackEntries();
const seqs = new Uint16Array(17);

export class ConferenceLink {
  readonly #sock: ConferenceSocket;
  readonly #h: ConferenceHeader = newConferenceHeader();
  readonly #nack: boolean;
  // Per source: its tracker and how much of its `lost` the metrics have counted.
  readonly #gaps = new Map<number, Tracked>();
  readonly window = new ReplayWindow();
  readonly history = new SendHistory(128, HISTORY_FRAME_BYTES);
  readonly rtt = new RttEstimator();
  readonly #outbox = new EventOutbox();
  readonly #eventBuffer = (): Buffer => this.#sock.frameBuffer(EVENT_PAYLOAD_BYTES);
  readonly events: EventInbox;
  /** Where frames go: the address in the leaf's hello (hub side) or the hub's (leaf side). */
  to: HostPort | undefined;
  lastHeardAt: number;
  lastSentAt = 0;
  // Our counter towards them: from 0, +1 per frame, retransmissions included (their replay window).
  #next = 0;

  /** Their slot: the destination of our control frames (0 = the hub). */
  readonly remote: number;

  /** `self`: our slot in the source field of control frames (0 = the hub); `remote`: theirs. */
  constructor(
    sock: ConferenceSocket,
    conf: { hi: number; lo: number },
    self: number,
    remote: number,
    now: number,
  ) {
    this.#sock = sock;
    this.remote = remote;
    this.#nack = sock.config.nack;
    const h = this.#h;
    h.conferenceHi = conf.hi;
    h.conferenceLo = conf.lo;
    h.sourceSlot = self;
    this.lastHeardAt = now;
    const drops = sock.metrics.drops;
    this.events = new EventInbox((reason) => drops[reason].inc());
  }

  #send(kind: number, source: number, dest: number, buf: Buffer, now: number): void {
    const to = this.to;
    if (to === undefined) return;
    const h = this.#h;
    const self = h.sourceSlot;
    h.kind = kind;
    h.sourceSlot = source;
    h.destinationSlot = dest;
    h.counter = this.#next;
    this.#next = (this.#next + 1) >>> 0;
    this.#sock.send(h, null, to, buf);
    h.sourceSlot = self;
    this.lastSentAt = now;
  }

  /** A media frame: `h` (relabelled with `source`) and its payload, kept for NACKs. */
  media(source: number, dest: number, a: AudioFrameHeader, payload: Uint8Array, now: number): void {
    if (this.to === undefined) return;
    const at = CONFERENCE_HEADER_BYTES;
    const len = AUDIO_FRAME_HEADER_BYTES + payload.length;
    if (len > CONFERENCE_MAX_PAYLOAD) return;
    const buf = this.#sock.frameBuffer(len);
    const label = a.participant;
    a.participant = source;
    writeAudioFrameHeader(buf, a, at);
    a.participant = label;
    buf.set(payload, at + AUDIO_FRAME_HEADER_BYTES);
    this.#h.payloadLength = len;
    this.history.record(source, dest, a.sequenceNumber, buf, at, len);
    this.#send(ConferenceKind.media, source, dest, buf, now);
  }

  /** A control frame from us; `write` puts the payload at buf[20..] and returns its length. */
  control(kind: number, now: number, write?: (buf: Buffer, off: number) => number): void {
    if (this.to === undefined) return;
    const buf = this.#sock.frameBuffer();
    const len = write ? write(buf, CONFERENCE_HEADER_BYTES) : 0;
    if (len < 0) return;
    this.#h.payloadLength = len;
    this.#send(kind, this.#h.sourceSlot, this.remote, buf, now);
  }

  /** Their NACK: every seq named that we still hold (and have budget for) goes out again. */
  onNack(buf: Buffer, len: number, now: number): void {
    const m = this.#sock.metrics;
    m.in.nacks.inc();
    const n = decodeNack(buf, CONFERENCE_HEADER_BYTES, len, entries);
    for (let e = 0; e < n; e++) {
      const entry = entries[e]!;
      const k = nackSeqs(entry, seqs);
      if ((entry.sourceSlot & EVENT_STREAM_FLAG) !== 0) {
        this.#resendEvents(entry.sourceSlot, k, now);
        continue;
      }
      for (let s = 0; s < k; s++) {
        const i = this.history.retransmit(entry.sourceSlot, seqs[s]!);
        if (i < 0) {
          m.out.lost.inc();
          continue;
        }
        const out = this.#sock.frameBuffer();
        const plen = this.history.copyPayload(i, out, CONFERENCE_HEADER_BYTES);
        if (plen < 0) continue;
        this.#h.payloadLength = plen;
        this.#send(ConferenceKind.media, entry.sourceSlot, this.history.destinationOf(i), out, now);
        m.out.repaired.inc();
      }
    }
  }

  #resendEvents(stream: number, k: number, now: number): void {
    const source = stream & ~EVENT_STREAM_FLAG;
    for (let s = 0; s < k; s++)
      this.#outbox.resend(stream, seqs[s]!, this.#eventBuffer, CONFERENCE_HEADER_BYTES, (buf, len, dest) => {
        this.#h.payloadLength = len;
        this.#send(ConferenceKind.event, source, dest, buf, now);
      });
  }

  /** Their media frame of `source` with `seq`: "duplicate" frames are to be dropped. */
  onMedia(source: number, seq: number, now: number): PacketVerdict | "untracked" {
    return this.#track(source, seq, now);
  }

  /** Their event (`source`'s stream, `seq`); false for a duplicate (then it is dropped). */
  onEvent(source: number, seq: number, now: number): boolean {
    return this.#track(EVENT_STREAM_FLAG | source, seq, now) !== "duplicate";
  }

  #tracker(stream: number): Tracked | undefined {
    let t = this.#gaps.get(stream);
    if (t === undefined) {
      if (this.#gaps.size >= MAX_TRACKED_SOURCES) return undefined;
      const events = (stream & EVENT_STREAM_FLAG) !== 0;
      t = { g: new GapTracker(stream, this.#nack), counted: 0, events };
      if (this.rtt.srttMs !== undefined) t.g.setRtt(this.rtt.srttMs);
      this.#gaps.set(stream, t);
    }
    return t;
  }

  #track(stream: number, seq: number, now: number): PacketVerdict | "untracked" {
    const t = this.#tracker(stream);
    if (t === undefined) return "untracked";
    // An event stream starts at seq 0 (a first event lost is a gap too), and a keepalive may
    // have announced seqs already: the ones before this that never came are missing.
    if (t.events) t.g.expectBefore(seq, now);
    const v = t.g.onPacket(seq, now);
    if (v === "repaired" && !t.events) this.#sock.metrics.in.repaired.inc();
    this.#countLost(t);
    if (t.g.missing > 0) this.nacks(now);
    return v;
  }

  /**
   * An event of `source` for them (its text, or its UTF-8), in fragments of consecutive seqs;
   * false when it is empty or over EVENT_MAX_BYTES (not sent) or has nowhere to go.
   */
  event(source: number, dest: number, ev: string | Uint8Array, now: number): boolean {
    if (this.to === undefined) return false;
    const bytes = typeof ev === "string" ? eventUtf8(ev) : ev;
    const stream = EVENT_STREAM_FLAG | source;
    return this.#outbox.send(stream, dest, bytes, this.#eventBuffer, CONFERENCE_HEADER_BYTES, (buf, len) => {
      this.#h.payloadLength = len;
      this.#send(ConferenceKind.event, source, dest, buf, now);
    });
  }

  /** The smoothed round trip in ms (0.01 ms steps), null before the first keepalive echo. */
  get rttMs(): number | null {
    const r = this.rtt.srttMs;
    return r === undefined ? null : Math.round(r * 100) / 100;
  }

  /** The round trip when this link repairs by NACK (what a mixer waits for), else null. */
  get repairRttMs(): number | null {
    return this.#nack ? this.rttMs : null;
  }

  /** A keepalive from us: the timing block, then what `write` adds (the hub's roster). */
  keepalive(now: number, write?: (buf: Buffer, off: number) => number): void {
    this.control(ConferenceKind.keepalive, now, (b, off) => {
      if (this.rtt.write(b, off, now, this.#outbox.nextSeq) < 0) return -1;
      const rest = write ? write(b, off + KEEPALIVE_TIMING_BYTES) : 0;
      return rest < 0 ? -1 : KEEPALIVE_TIMING_BYTES + rest;
    });
  }

  /**
   * Their keepalive's timing block: their next event seq (events lost at the end of a burst are
   * NACKed now), and a new round-trip sample that paces every tracker's retries.
   */
  onKeepalive(buf: Buffer, len: number, now: number): void {
    if (len < KEEPALIVE_TIMING_BYTES) return;
    const next = timingEvents(buf, CONFERENCE_HEADER_BYTES);
    if (next !== 0) {
      const t = this.#tracker(EVENT_STREAM_FLAG | this.remote);
      t?.g.expectBefore(next, now);
      this.events.horizon(next, now);
      if (t !== undefined && t.g.missing > 0) this.nacks(now);
    }
    const sample = this.rtt.read(buf, CONFERENCE_HEADER_BYTES, now);
    if (sample < 0) return;
    this.#sock.metrics.rtt.observe(sample / 1000);
    const srtt = this.rtt.srttMs!;
    for (const t of this.#gaps.values()) t.g.setRtt(srtt);
  }

  #countLost(t: Tracked): void {
    if (t.events) {
      t.counted = t.g.lost; // events lost are counted by the inbox, in order
      return;
    }
    if (t.g.lost === t.counted) return;
    this.#sock.metrics.in.lost.inc(t.g.lost - t.counted);
    t.counted = t.g.lost;
  }

  /** A source stream of theirs ended (its participant left): forget its gaps. */
  forget(source: number): void {
    this.#gaps.delete(source);
  }

  /** Sends the NACK entries due now (the first at once, retries as the trackers say). */
  nacks(now: number): void {
    let n = 0;
    for (const t of this.#gaps.values()) {
      if (t.g.missing === 0 || n >= NACK_MAX_ENTRIES) continue;
      n = t.g.due(now, entries, n);
      this.#countLost(t);
    }
    if (n === 0) return;
    this.#sock.metrics.out.nacks.inc();
    this.control(ConferenceKind.nack, now, (buf, off) => encodeNack(buf, off, entries, n));
  }

  /** Repair counters of what they send us, per source slot. */
  repairStats(): Record<string, { received: number; lost: number; repaired: number; duplicates: number }> {
    const out: Record<string, { received: number; lost: number; repaired: number; duplicates: number }> = {};
    for (const [stream, { g, events }] of this.#gaps)
      out[events ? `events:${stream & ~EVENT_STREAM_FLAG}` : String(stream)] = {
        received: g.received,
        lost: g.lost,
        repaired: g.repaired,
        duplicates: g.duplicates,
      };
    return out;
  }
}
