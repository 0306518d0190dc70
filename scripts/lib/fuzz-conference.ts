// The conference frame part of `npm run fuzz` (scripts/fuzz.ts): a seed corpus of signed frames of
// every kind, and the invariants checked on every datagram:
//   - decodeConferenceFrame never throws, returns a documented status, and depends only on buf[0..len)
//   - "ok" only for a frame this corpus signed (no forgery by mutation)
//   - an "ok" frame's payload decodes with its kind's payload decoder

import {
  checkEvent,
  decodeEventText,
  encodeEvent,
  encodeEventFragment,
} from "../../shared/conference/event.ts";
import {
  CONFERENCE_HEADER_BYTES,
  ConferenceKind,
  decodeConferenceFrame,
  encodeConferenceFrame,
  newConferenceHeader,
} from "../../shared/conference/frame.ts";
import { KEEPALIVE_TIMING_BYTES, writeTiming } from "../../shared/conference/keepalive.ts";
import {
  decodeBye,
  decodeHello,
  decodeNack,
  decodeRoster,
  encodeBye,
  encodeHello,
  encodeNack,
  encodeRoster,
  newHello,
  newNackEntries,
  newRosterEntries,
} from "../../shared/conference/payloads.ts";
import type { MacSync } from "../../shared/hint/codec.ts";

export const CONFERENCE_STATUSES = new Set([
  "ok",
  "truncated",
  "bad-magic",
  "unsupported-version",
  "bad-type",
  "bad-kind",
  "unknown-key",
  "bad-mac",
  "bad-payload",
]);

const ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

export class ConferenceFuzz {
  readonly #mac: MacSync;
  readonly #signed = new Set<string>();
  readonly #h = newConferenceHeader();
  readonly #nacks = newNackEntries();
  readonly #roster = newRosterEntries();
  readonly #hello = newHello();
  readonly counts = new Map<string, number>();

  constructor(mac: MacSync) {
    this.#mac = mac;
  }

  /** `n` signed frames of random kinds and fields. */
  corpus(n: number, below: (n: number) => number, randomBytes: (n: number) => Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    const id = (): string => `prt_${Array.from({ length: 16 }, () => ID_CHARS[below(64)]).join("")}`;
    for (let i = 0; i < n; i++) {
      const buf = new Uint8Array(400);
      const h = newConferenceHeader();
      Object.assign(h, {
        kind: 1 + (i % 6),
        keyId: this.#mac.activeKeyId,
        conferenceHi: below(0x10000) * 0x10000 + below(0x10000),
        conferenceLo: below(0x10000) * 0x10000 + below(0x10000),
        sourceSlot: below(9),
        destinationSlot: below(9),
        counter: below(0x10000),
      });
      const p = CONFERENCE_HEADER_BYTES;
      let len = 0;
      if (h.kind === ConferenceKind.media) {
        const m = randomBytes(12 + below(200));
        m[0] = 1;
        buf.set(m, p);
        len = m.length;
      } else if (h.kind === ConferenceKind.nack) {
        const k = 1 + below(16);
        for (let j = 0; j < k; j++)
          Object.assign(this.#nacks[j]!, {
            sourceSlot: below(9),
            firstSeq: below(0x10000),
            bitmask: below(0x10000),
          });
        len = encodeNack(buf, p, this.#nacks, k);
      } else if (h.kind === ConferenceKind.hello) {
        const he = {
          ...newHello(),
          participantId: id(),
          clusterId: below(0x10000),
          transceiverId: below(0x10000),
          ipv6: below(2) === 1,
          port: 1 + below(0xffff),
          legId: `rtc_${Array.from({ length: 48 }, () => ID_CHARS[below(64)]).join("")}`,
        };
        he.ip.set(randomBytes(16));
        if (!he.ipv6) he.ip.fill(0, 0, 12);
        len = encodeHello(buf, p, he);
      } else if (h.kind === ConferenceKind.bye) len = encodeBye(buf, p, 1 + below(4));
      else if (h.kind === ConferenceKind.event) {
        const text = JSON.stringify({ type: "x", pad: "é".repeat(below(100)) });
        // A whole event, or a fragment of any flags (it may end inside a UTF-8 sequence). Flags 0
        // says "the whole event", so such a fragment carries all of it: a signed whole event is
        // valid UTF-8, which the check below relies on.
        const bytes = new TextEncoder().encode(text);
        const flags = below(4);
        const to = flags === 0 ? bytes.length : 1 + below(bytes.length);
        len =
          below(2) === 0
            ? encodeEvent(buf, p, below(0x10000), text)
            : encodeEventFragment(buf, p, below(0x10000), flags, bytes, 0, to);
      } else {
        const k = below(9);
        for (let j = 0; j < k; j++) {
          this.#roster[j]!.slot = j + 1;
          this.#roster[j]!.participantId = j === 0 ? "owner" : id();
        }
        const t = writeTiming(buf, p, below(0x10000), below(0x10000), below(0x10000), below(0x10000));
        len = t + encodeRoster(buf, p + t, this.#roster, k);
      }
      h.payloadLength = len;
      const end = encodeConferenceFrame(buf, 0, h, null, this.#mac);
      const frame = buf.slice(0, end);
      this.#signed.add(Buffer.from(frame).toString("hex"));
      out.push(frame);
    }
    return out;
  }

  check(buf: Uint8Array, len: number, check: (cond: boolean, what: string) => void): void {
    const h = this.#h;
    const s = decodeConferenceFrame(buf, len, h, this.#mac);
    this.counts.set(s, (this.counts.get(s) ?? 0) + 1);
    check(CONFERENCE_STATUSES.has(s), `conference: unknown status ${s}`);
    const end = Math.max(0, Math.min(len, buf.length));
    check(
      decodeConferenceFrame(buf.slice(0, end), len, newConferenceHeader(), this.#mac) === s,
      "conference: result depends on bytes past len",
    );
    if (s !== "ok") return;
    check(
      this.#signed.has(Buffer.from(buf.subarray(0, len)).toString("hex")),
      "conference: a frame never signed decoded ok (forgery)",
    );
    const p = CONFERENCE_HEADER_BYTES;
    const n = h.payloadLength;
    const decoded =
      h.kind === ConferenceKind.media
        ? n >= 12
        : h.kind === ConferenceKind.nack
          ? decodeNack(buf, p, n, this.#nacks) >= 1
          : h.kind === ConferenceKind.hello
            ? decodeHello(buf, p, n, this.#hello)
            : h.kind === ConferenceKind.bye
              ? decodeBye(buf, p, n) >= 1
              : h.kind === ConferenceKind.event
                ? checkEvent(buf, p, n) && (buf[p + 2] !== 0 || decodeEventText(buf, p, n) !== undefined)
                : n === KEEPALIVE_TIMING_BYTES || decodeRoster(buf, p, n, this.#roster) >= 0;
    check(decoded, `conference: kind ${h.kind} ok but its payload does not decode`);
  }
}
