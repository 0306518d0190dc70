// The echo agent's kept conversations (regional/echo-agent/kept-calls.ts) on virtual time: a
// call whose connection drops without a normal end is kept for its resume, bounded by count and
// age (oldest first); a normal end discards it; a drain move hands the live state over. Then the
// engine (realtime.ts) restoring a kept conversation and saying so in session.created.
import { describe, expect, it } from "vitest";
import { KeptCalls, keptAfterEnd } from "../../regional/echo-agent/kept-calls.ts";
import { type EchoConversationState, RealtimeEcho } from "../../regional/echo-agent/realtime.ts";

const holder = (n: number) => ({ n, snapshot: () => n });

describe("kept calls: bounded by count and age", () => {
  it("keeps a dropped call until its resume, once; a new call or a normal end keeps nothing", () => {
    const k = new KeptCalls<number>({ maxCalls: 10, maxAgeMs: 1000 });
    const a = holder(1);
    expect(k.attach(a, "c1", false, 0)).toBeUndefined();
    k.close(a, "c1", 100);
    expect(k.stats.kept).toBe(1);
    const b = holder(2);
    expect(k.attach(b, "c1", true, 500)).toBe(1);
    expect(k.stats).toMatchObject({ kept: 0, restored: 1 });
    // The new owner hangs up: nothing is kept, a later resume finds nothing.
    k.end(b, "c1");
    k.close(b, "c1", 600);
    expect(k.attach(holder(3), "c1", true, 700)).toBeUndefined();
    expect(k.stats).toMatchObject({ kept: 0, missed: 1 });
    // A call that is not resumed discards what was kept under its id.
    const d = holder(4);
    k.attach(d, "c2", false, 0);
    k.close(d, "c2", 0);
    expect(k.attach(holder(5), "c2", false, 1)).toBeUndefined();
    expect(k.stats.kept).toBe(0);
  });

  it("drops the oldest beyond maxCalls and anything older than maxAgeMs", () => {
    const k = new KeptCalls<number>({ maxCalls: 3, maxAgeMs: 1000 });
    for (let i = 0; i < 5; i++) {
      const h = holder(i);
      k.attach(h, `c${i}`, false, i);
      k.close(h, `c${i}`, i * 10);
    }
    expect(k.stats).toMatchObject({ kept: 3, evictedFull: 2 });
    expect(k.attach(holder(9), "c0", true, 50)).toBeUndefined();
    expect(k.attach(holder(9), "c2", true, 50)).toBe(2);
    // c3 closed at 30, c4 at 40: at 1030 c3 is 1000 ms old (gone), c4 999 ms (kept).
    expect(k.has("c3", 1030)).toBe(false);
    expect(k.attach(holder(9), "c4", true, 1039)).toBe(4);
    expect(k.stats).toMatchObject({ kept: 0, evictedExpired: 1, evictedFull: 2, restored: 2, missed: 1 });
  });

  it("the bound holds under many dropped calls", () => {
    const k = new KeptCalls<number>({ maxCalls: 1000, maxAgeMs: 600_000 });
    for (let i = 0; i < 5000; i++) {
      const h = holder(i);
      k.attach(h, `c${i}`, false, i);
      k.close(h, `c${i}`, i);
    }
    expect(k.stats.kept).toBe(1000);
    expect(k.attach(holder(0), "c3999", true, 5000)).toBeUndefined();
    expect(k.attach(holder(0), "c4000", true, 5000)).toBe(4000);
    // Ten minutes later every one is gone at the next touch.
    k.attach(holder(0), "other", false, 5000 + 600_000);
    expect(k.stats.kept).toBe(0);
  });

  it("a drain move: the new connection takes the live state; the old one's end and close change nothing", () => {
    const k = new KeptCalls<number>({ maxCalls: 10, maxAgeMs: 1000 });
    const old = holder(1);
    k.attach(old, "c", false, 0);
    const next = holder(2);
    expect(k.attach(next, "c", true, 10)).toBe(1);
    k.end(old, "c");
    k.close(old, "c", 20);
    expect(k.stats.kept).toBe(0);
    // The new connection vanishes: its own state is what is kept.
    k.close(next, "c", 30);
    expect(k.attach(holder(3), "c", true, 40)).toBe(2);
  });

  it("maxCalls 0 keeps nothing; limits are validated; drain and shutdown ends keep", () => {
    const k = new KeptCalls<number>({ maxCalls: 0, maxAgeMs: 1000 });
    const h = holder(1);
    k.attach(h, "c", false, 0);
    k.close(h, "c", 0);
    expect(k.stats.kept).toBe(0);
    expect(() => new KeptCalls({ maxCalls: -1, maxAgeMs: 1 })).toThrow(/maxCalls must be an integer/);
    expect(() => new KeptCalls({ maxCalls: 1, maxAgeMs: 1.5 })).toThrow(/maxAgeMs must be an integer/);
    expect(() => new KeptCalls({ maxCalls: 1e9, maxAgeMs: 1 })).toThrow(/maxCalls/);
    expect(["drain", "shutdown"].map(keptAfterEnd)).toEqual([true, true]);
    expect(["hangup", "client_closed", "consent_lost", "error", ""].some(keptAfterEnd)).toBe(false);
  });
});

type Ev = Record<string, unknown> & { type: string };

function engine(kept?: EchoConversationState) {
  const out: Ev[] = [];
  let n = 0;
  const e = new RealtimeEcho(
    {
      send: (t) => out.push(JSON.parse(t) as Ev),
      id: (p) => `${p}_${++n}`,
      attach: (_callId, resumed) => (resumed ? kept : undefined),
    },
    1000,
  );
  return { e, take: () => out.splice(0) };
}

const ev = (o: unknown) => JSON.stringify(o);
const started = (resumed: boolean, session: unknown = null) =>
  ev({ type: "session.started", call_id: "rtc_x", session, resumed });

describe("echo engine: a resumed call gets its conversation back", () => {
  it("session.created carries the kept session and says what came back; items and responses go on", () => {
    const first = engine();
    first.e.event(started(false, { instructions: "be brief" }));
    first.e.event(ev({ type: "session.update", session: { instructions: "be briefer" } }));
    first.e.event(
      ev({
        type: "conversation.item.create",
        item: {
          id: "u1",
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "remember me" }],
        },
      }),
    );
    first.e.event(ev({ type: "response.create" }));
    const before = first.take();
    const created = before[0]!;
    expect(created).not.toHaveProperty("resumed");
    const state = first.e.snapshot();
    expect(state).toMatchObject({ items: [{ id: "u1" }, { role: "assistant" }], responses: 1 });

    const second = engine(state);
    // The transceiver passes the caller's create-time session again: the kept one wins.
    second.e.event(started(true, { instructions: "be brief" }));
    const [c] = second.take();
    expect(c).toMatchObject({
      type: "session.created",
      resumed: true,
      conversation_id: state.conversationId,
      item_count: 2,
      response_count: 1,
      session: { id: (created.session as { id: string }).id, instructions: "be briefer" },
    });
    second.e.event(ev({ type: "conversation.item.retrieve", item_id: "u1" }));
    expect(second.take()[0]).toMatchObject({ type: "conversation.item.retrieved", item: { id: "u1" } });
    second.e.event(ev({ type: "response.create" }));
    const seq = second.take();
    expect(seq[2]).toMatchObject({ previous_item_id: state.lastItemId });
    expect(seq.at(-1)!.response).toMatchObject({
      conversation_id: state.conversationId,
      output: [{ content: [{ transcript: "remember me" }] }],
    });
    expect(second.e.snapshot().responses).toBe(2);
  });

  it("a resumed call with nothing kept starts afresh and says resumed: false", () => {
    const { e, take } = engine(undefined);
    e.event(started(true, { instructions: "x" }));
    expect(take()[0]).toMatchObject({
      type: "session.created",
      resumed: false,
      item_count: 0,
      session: { instructions: "x" },
    });
  });
});
