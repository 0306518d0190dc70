// Events in fragments (docs/wire-formats.md §8, kind 6): the EventInbox joins consecutive
// fragments in seq order into one event of up to EVENT_MAX_BYTES, through repairs and losses; a
// fragment lost for good drops its whole event; garbage (a continuation without its first
// fragment, a first fragment cutting an unfinished event, an event growing past the maximum,
// an event that is not UTF-8) is dropped and counted, and the next event comes through intact.
import { describe, expect, it } from "vitest";
import {
  checkEvent,
  EVENT_CONTINUATION,
  EVENT_FRAGMENT_BYTES,
  EVENT_MAX_BYTES,
  EVENT_MORE,
  encodeEventFragment,
  eventFragments,
  eventUtf8,
} from "../../shared/conference/event.ts";
import { type EventDrop, EventInbox } from "../../shared/conference/event-inbox.ts";
import { EVENT_PAYLOAD_BYTES, EventOutbox } from "../../shared/conference/event-outbox.ts";
import { NACK_GIVE_UP_MS } from "../../shared/conference/gap-tracker.ts";

type Frag = { seq: number; payload: Uint8Array };

/** The fragments of `text` from `seq` on, as link.ts sends them. */
function fragments(text: string, seq: number): Frag[] {
  const bytes = eventUtf8(text);
  const out: Frag[] = [];
  for (let from = 0; from < bytes.length; from += EVENT_FRAGMENT_BYTES) {
    const to = Math.min(bytes.length, from + EVENT_FRAGMENT_BYTES);
    const flags = (from > 0 ? EVENT_CONTINUATION : 0) | (to < bytes.length ? EVENT_MORE : 0);
    const payload = new Uint8Array(3 + EVENT_FRAGMENT_BYTES);
    const len = encodeEventFragment(payload, 0, seq, flags, bytes, from, to);
    out.push({ seq, payload: payload.subarray(0, len) });
    seq = (seq + 1) & 0xffff;
  }
  return out;
}

/** A hand-made fragment: seq, flags, `n` bytes of `fill`. */
function raw(seq: number, flags: number, n: number, fill = 0x61): Frag {
  const payload = new Uint8Array(3 + n).fill(fill);
  payload[0] = seq >> 8;
  payload[1] = seq & 255;
  payload[2] = flags;
  return { seq, payload };
}

function inbox() {
  const out: string[] = [];
  const drops: EventDrop[] = [];
  const ib = new EventInbox((r) => drops.push(r));
  const deliver = (t: string) => out.push(t);
  const push = (f: Frag, now = 0) => ib.push(f.seq, f.payload, 0, f.payload.length, now, deliver);
  return { ib, out, drops, deliver, push };
}

// A response.done with a long transcript, multi-byte characters across fragment boundaries.
const transcript = "Grüße, das Wetter in Zürich: ☀️ ".repeat(700);
const big = JSON.stringify({ type: "response.done", response: { output: [{ transcript }] } });

describe("event fragments", () => {
  it("a 20 KB event goes out as consecutive seqs and is joined intact", () => {
    const frags = fragments(big, 0);
    expect(eventUtf8(big).length).toBeGreaterThan(20_000);
    expect(frags).toHaveLength(eventFragments(eventUtf8(big).length));
    expect(frags[0]!.payload[2]).toBe(EVENT_MORE);
    expect(frags[1]!.payload[2]).toBe(EVENT_MORE | EVENT_CONTINUATION);
    expect(frags.at(-1)!.payload[2]).toBe(EVENT_CONTINUATION);
    const { ib, out, drops, push } = inbox();
    for (const f of frags) push(f);
    for (const f of fragments('{"type":"pong"}', frags.length)) push(f);
    expect(out).toEqual([big, '{"type":"pong"}']);
    expect(drops).toEqual([]);
    expect(ib.delivered).toBe(2);
  });

  it("the outbox sends the same fragments, keeps them for NACKs, refuses empty and oversized events", () => {
    const ob = new EventOutbox();
    const sent: Frag[] = [];
    const buffer = () => new Uint8Array(4 + EVENT_PAYLOAD_BYTES);
    const emit = (buf: Uint8Array, len: number) =>
      sent.push({ seq: (buf[4]! << 8) | buf[5]!, payload: buf.slice(4, 4 + len) });
    expect(ob.send(0x8000, 2, eventUtf8("{}"), buffer, 4, emit)).toBe(true);
    expect(ob.send(0x8000, 2, eventUtf8(big), buffer, 4, emit)).toBe(true);
    expect(sent.slice(1)).toEqual(fragments(big, 1));
    expect(ob.nextSeq).toBe(sent.length);
    expect(ob.send(0x8000, 2, new Uint8Array(0), buffer, 4, emit)).toBe(false);
    expect(ob.send(0x8000, 2, new Uint8Array(EVENT_MAX_BYTES + 1), buffer, 4, emit)).toBe(false);
    expect(ob.nextSeq).toBe(sent.length);
    const again: [Uint8Array, number][] = [];
    ob.resend(0x8000, 3, buffer, 4, (buf, len, dest) => again.push([buf.slice(4, 4 + len), dest]));
    expect(again).toEqual([[sent[3]!.payload, 2]]);
    ob.resend(0x8002, 3, buffer, 4, () => again.push([new Uint8Array(0), 0])); // another stream's
    expect(again).toHaveLength(1);
  });

  it("out of order and repaired: held behind the gap, joined when it is filled", () => {
    const frags = fragments(big, 65530); // across the seq wraparound
    const { ib, out, drops } = inbox();
    const deliver = (t: string) => out.push(t);
    // Fast-forward the inbox to 65530 with small events.
    let seq = 0;
    const one = new Uint8Array(8);
    while (seq !== 65530) {
      const len = encodeEventFragment(one, 0, seq, 0, eventUtf8("{}"), 0, 2);
      ib.push(seq, one, 0, len, 0, () => {});
      seq++;
    }
    const order = [...frags.slice(0, 3), ...frags.slice(4), frags[3]!]; // the 4th lost, then repaired
    for (const f of order) ib.push(f.seq, f.payload, 0, f.payload.length, 1, deliver);
    expect(out).toEqual([big]);
    expect(drops).toEqual([]);
    expect(ib.lost).toBe(0);
  });

  it("a fragment lost for good drops its whole event; the next event comes through", () => {
    const frags = fragments(big, 0);
    const after = fragments('{"type":"pong"}', frags.length)[0]!;
    const { ib, out, drops, deliver, push } = inbox();
    for (const f of frags) if (f.seq !== 5) push(f, 100);
    push(after, 100);
    expect(out).toEqual([]);
    expect(ib.tick(100 + NACK_GIVE_UP_MS, deliver)).toBe(1);
    expect(out).toEqual(['{"type":"pong"}']); // the rest of the cut event is not garbage
    expect(drops).toEqual([]);
    expect(ib.lost).toBe(1);
  });

  it("a lost first fragment: its continuations are skipped, the next event taken", () => {
    const frags = fragments(big, 0);
    const { out, drops, deliver, ib, push } = inbox();
    for (const f of frags.slice(1)) push(f, 0);
    push(fragments('{"type":"next"}', frags.length)[0]!, 0);
    expect(ib.tick(NACK_GIVE_UP_MS, deliver)).toBe(1);
    expect(out).toEqual(['{"type":"next"}']);
    expect(drops).toEqual([]);
  });

  it("garbage is dropped and counted and does not disturb the next event", () => {
    const { out, drops, push } = inbox();
    push(raw(0, EVENT_CONTINUATION, 10)); // a continuation without its first fragment
    push(raw(1, EVENT_CONTINUATION | EVENT_MORE, 10)); // and another
    expect(drops).toEqual(["event_fragment", "event_fragment"]);
    push(fragments('{"type":"a"}', 2)[0]!);
    expect(out).toEqual(['{"type":"a"}']);
    // A first fragment cutting an unfinished event: the unfinished one is dropped, the new one taken.
    push(raw(3, EVENT_MORE, 10));
    push(fragments('{"type":"b"}', 4)[0]!);
    expect(out).toEqual(['{"type":"a"}', '{"type":"b"}']);
    expect(drops).toEqual(["event_fragment", "event_fragment", "event_fragment"]);
    // A whole event that is not UTF-8.
    push(raw(5, 0, 4, 0xff));
    expect(drops.at(-1)).toBe("bad_event");
    push(fragments('{"type":"c"}', 6)[0]!);
    expect(out.at(-1)).toBe('{"type":"c"}');
  });

  it("an event growing past EVENT_MAX_BYTES is dropped once, its rest skipped, the next taken", () => {
    const n = Math.ceil(EVENT_MAX_BYTES / EVENT_FRAGMENT_BYTES) + 5; // 65 full fragments
    const { ib, out, drops, push } = inbox();
    push(raw(0, EVENT_MORE, EVENT_FRAGMENT_BYTES));
    for (let s = 1; s < n - 1; s++) push(raw(s, EVENT_MORE | EVENT_CONTINUATION, EVENT_FRAGMENT_BYTES));
    push(raw(n - 1, EVENT_CONTINUATION, EVENT_FRAGMENT_BYTES));
    expect(drops).toEqual(["event_too_large"]);
    push(fragments(big, n)[0]!);
    for (const f of fragments(big, n).slice(1)) push(f);
    expect(out).toEqual([big]);
    expect(ib.delivered).toBe(1);
    // Exactly the maximum is carried.
    const max = fragments(JSON.stringify({ type: "x", pad: "p".repeat(EVENT_MAX_BYTES - 21) }), 0);
    const b = inbox();
    for (const f of max) b.push(f);
    expect(b.out[0]!.length).toBe(EVENT_MAX_BYTES);
    expect(b.drops).toEqual([]);
  });

  it("the payload check refuses unknown flags, empty and oversized fragments", () => {
    expect(checkEvent(raw(0, 0, 1).payload, 0, 4)).toBe(true);
    expect(checkEvent(raw(0, 3, EVENT_FRAGMENT_BYTES).payload, 0, 3 + EVENT_FRAGMENT_BYTES)).toBe(true);
    expect(checkEvent(raw(0, 4, 1).payload, 0, 4)).toBe(false);
    expect(checkEvent(raw(0, 0, 0).payload, 0, 3)).toBe(false);
    expect(checkEvent(raw(0, 0, EVENT_FRAGMENT_BYTES + 1).payload, 0, 4 + EVENT_FRAGMENT_BYTES)).toBe(false);
    const b = new Uint8Array(2000);
    const src = new Uint8Array(1101);
    expect(encodeEventFragment(b, 0, 0, 0, src, 0, 1101)).toBe(-1);
    expect(encodeEventFragment(b, 0, 0, 4, src, 0, 10)).toBe(-1);
    expect(encodeEventFragment(b, 0, 0, 0, src, 5, 5)).toBe(-1);
  });
});
