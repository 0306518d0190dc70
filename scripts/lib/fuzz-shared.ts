// The shared backend connection part of `npm run fuzz` (scripts/fuzz.ts): a seed corpus of valid
// version-3 messages (regional/transceiver/backend-shared.ts), a generator of well-framed records
// with lengths, kinds and channels around their bounds, and the invariants checked on every input
// (the datagram's first `len` bytes, read as one WebSocket message):
//   - SharedMessageReader never throws and ends each walk with "end" or a documented status,
//     after which next() keeps returning "end"
//   - every "ok" record lies inside the message, right after the previous one, with a known kind,
//     a channel other than 0, a body length within its kind's bounds, and fields equal to its bytes
//   - the walk depends only on the message's bytes: the same on an exact copy
//   - a message read to "end" re-encodes byte for byte with appendSharedRecord
import { AudioCodec, newAudioFrameHeader } from "../../regional/transceiver/backend-protocol.ts";
import {
  appendSharedAudio,
  appendSharedClose,
  appendSharedRecord,
  appendSharedText,
  SHARED_RECORD_HEADER_BYTES,
  SHARED_VERSION,
  SharedKind,
  SharedMessageReader,
  SHARED_STATUSES as STATUSES,
  startSharedMessage,
} from "../../regional/transceiver/backend-shared.ts";

export const SHARED_STATUSES = new Set<string>(STATUSES);
const KIND_NAMES: Record<number, string> = { 1: "open", 2: "event", 3: "audio", 4: "close" };
const MIN: Record<number, number> = { 1: 2, 2: 1, 3: 12, 4: 2 };
const MAX: Record<number, number> = { 1: 1024, 2: 256 * 1024, 3: 12 + 1500, 4: 2 + 123 };
const ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

type Below = (n: number) => number;
type RandomBytes = (n: number) => Uint8Array;

export class SharedFuzz {
  /** The status that ended each walk ("end" when the whole message read ok). */
  readonly counts = new Map<string, number>();
  /** Records read "ok", by kind. */
  readonly records = new Map<string, number>();
  readonly #reader = new SharedMessageReader();
  readonly #copy = new SharedMessageReader();
  readonly #walk: number[] = [];
  readonly #scratch = Buffer.alloc(16384);

  /** `n` valid messages of 1-6 records of every kind. */
  corpus(n: number, below: Below, randomBytes: RandomBytes): Uint8Array[] {
    const out: Uint8Array[] = [];
    const h = newAudioFrameHeader();
    for (let i = 0; i < n; i++) {
      const buf = Buffer.alloc(4096);
      let off = startSharedMessage(buf);
      const records = 1 + below(6);
      for (let r = 0; r < records; r++) {
        const channel = below(4) === 0 ? 1 + below(0xffffffff) : 1 + below(8);
        const kind = 1 + ((i + r) % 4);
        if (kind === SharedKind.open) {
          const text = `{"call_id":"rtc_${Array.from({ length: 48 }, () => ID_CHARS[below(64)]).join("")}"}`;
          off = appendSharedText(buf, off, SharedKind.open, channel, text, Buffer.byteLength(text));
        } else if (kind === SharedKind.event) {
          const text = JSON.stringify({ type: "response.done", pad: "é".repeat(below(200)) });
          off = appendSharedText(buf, off, SharedKind.event, channel, text, Buffer.byteLength(text));
        } else if (kind === SharedKind.audio) {
          h.codec = below(2) === 0 ? AudioCodec.opus : AudioCodec.pcmu;
          h.flags = below(2);
          h.participant = below(9);
          h.sequenceNumber = below(0x10000);
          h.timestamp = below(0x10000) * 0x10000 + below(0x10000);
          off = appendSharedAudio(buf, off, channel, h, randomBytes(below(200)));
        } else {
          off = appendSharedClose(buf, off, channel, 1000 + below(4000), "€".repeat(below(50)));
        }
      }
      out.push(buf.slice(0, off));
    }
    return out;
  }

  /**
   * A message of well-framed records whose kinds, channels and lengths sit around their bounds
   * (a declared length may exceed the bytes that follow: the record is then cut by the message end).
   */
  soup(below: Below, randomBytes: RandomBytes): Uint8Array {
    const parts: Uint8Array[] = [Uint8Array.of(below(10) === 0 ? below(256) : SHARED_VERSION)];
    const records = 1 + below(6);
    for (let r = 0; r < records; r++) {
      const kind = below(10) === 0 ? [0, 5, below(256)][below(3)]! : 1 + below(4);
      const channel = below(10) === 0 ? [0, 0xffffffff, below(0x10000) * 0x10000][below(3)]! : 1 + below(8);
      const min = MIN[kind] ?? 1;
      const max = MAX[kind] ?? 64;
      const len = [min - 1, min, min + below(64), max, max + 1, below(0x10000) * 0x10000 + below(0x10000)][
        below(6)
      ]!;
      const present = Math.max(0, Math.min(len, 1600 + below(64)));
      const rec = new Uint8Array(SHARED_RECORD_HEADER_BYTES + present);
      const dv = new DataView(rec.buffer);
      rec[0] = kind;
      dv.setUint32(1, channel);
      dv.setUint32(5, Math.max(0, len) >>> 0);
      rec.set(randomBytes(present), SHARED_RECORD_HEADER_BYTES);
      if (kind === SharedKind.audio && present >= 2 && below(5) !== 0) {
        rec[9] = 1; // frame version
        rec[10] = below(5) === 0 ? below(256) : 1 + below(2);
      } else if (kind === SharedKind.audio && present >= 1 && below(2) === 0) rec[9] = [0, 2][below(2)]!;
      parts.push(rec);
    }
    if (below(5) === 0) parts.push(randomBytes(1 + below(8))); // bytes left over
    return Buffer.concat(parts);
  }

  check(buf: Uint8Array, len: number, check: (cond: boolean, what: string) => void): void {
    const msg = buf.subarray(0, Math.max(0, Math.min(len, buf.length)));
    const r = this.#reader;
    const w = this.#walk;
    w.length = 0;
    let status: string = r.start(msg);
    let prev = 1;
    if (status === "ok") {
      for (let i = 0; ; i++) {
        if (i > msg.length) {
          check(false, "shared: the walk does not end");
          return;
        }
        status = r.next();
        if (status !== "ok") break;
        const kind = r.kind;
        const name = KIND_NAMES[kind] ?? String(kind);
        this.records.set(name, (this.records.get(name) ?? 0) + 1);
        const n = r.bodyEnd - r.bodyStart;
        check(
          KIND_NAMES[kind] !== undefined && n >= MIN[kind]! && n <= MAX[kind]!,
          `shared: ok record of kind ${kind} with a ${n}-byte body`,
        );
        check(
          r.bodyStart === prev + SHARED_RECORD_HEADER_BYTES && r.bodyEnd <= msg.length,
          "shared: ok record outside the message or not after the previous one",
        );
        check(
          msg[prev] === kind &&
            r.channel !== 0 &&
            r.channel ===
              ((msg[prev + 1]! << 24) | (msg[prev + 2]! << 16) | (msg[prev + 3]! << 8) | msg[prev + 4]!) >>>
                0,
          "shared: kind or channel differs from the record's bytes",
        );
        if (kind === SharedKind.audio)
          check(
            msg[r.bodyStart] === 1 &&
              r.frame.codec === msg[r.bodyStart + 1] &&
              r.frame.sequenceNumber === ((msg[r.bodyStart + 4]! << 8) | msg[r.bodyStart + 5]!),
            "shared: audio frame header differs from its bytes",
          );
        if (kind === SharedKind.close)
          check(
            r.code === ((msg[r.bodyStart]! << 8) | msg[r.bodyStart + 1]!),
            "shared: close code differs from its bytes",
          );
        w.push(kind, r.channel, r.bodyStart, r.bodyEnd);
        prev = r.bodyEnd;
      }
    }
    this.counts.set(status, (this.counts.get(status) ?? 0) + 1);
    check(
      status === "end" || (status !== "ok" && SHARED_STATUSES.has(status)),
      `shared: unknown status ${status}`,
    );
    check(r.next() === "end" && r.next() === "end", "shared: next() after the walk ended is not end");
    if (status === "end") check(prev === msg.length, "shared: end before the message end");

    // the same walk on an exact copy
    const copy = msg.slice();
    const c = this.#copy;
    let s2: string = c.start(copy);
    let same = true;
    let k = 0;
    if (s2 === "ok") {
      for (let i = 0; i <= copy.length; i++) {
        s2 = c.next();
        if (s2 !== "ok") break;
        same &&=
          w[k] === c.kind && w[k + 1] === c.channel && w[k + 2] === c.bodyStart && w[k + 3] === c.bodyEnd;
        k += 4;
      }
    }
    check(same && k === w.length && s2 === status, "shared: the walk on a copy differs");

    // a message read whole re-encodes to the same bytes
    if (status === "end" && msg.length <= this.#scratch.length) {
      const out = this.#scratch;
      let off = startSharedMessage(out);
      for (let i = 0; i < w.length && off >= 0; i += 4)
        off = appendSharedRecord(out, off, w[i] as SharedKind, w[i + 1]!, msg.subarray(w[i + 2], w[i + 3]));
      check(
        off === msg.length && out.subarray(0, off).equals(msg),
        "shared: read whole but re-encodes differently",
      );
    }
  }
}
