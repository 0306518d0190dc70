// The echo backend's Realtime event protocol (regional/echo-agent/realtime.ts) on virtual time:
// events in, server events out, every one with an event_id; the VAD on µ-law and Opus sizes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RealtimeEcho } from "../../regional/echo-agent/realtime.ts";
import { pcmuLevel, Vad } from "../../regional/echo-agent/vad.ts";
import { AudioCodec, AudioFlags } from "../../regional/transceiver/backend-protocol.ts";

type Ev = Record<string, unknown> & { type: string; event_id: string };

function engine() {
  const out: Ev[] = [];
  let n = 0;
  const e = new RealtimeEcho({ send: (t) => out.push(JSON.parse(t) as Ev), id: (p) => `${p}_${++n}` }, 1000);
  const take = (): Ev[] => out.splice(0);
  return { e, out, take };
}

const started = (session: unknown = null) =>
  JSON.stringify({ type: "session.started", call_id: "rtc_x", session, audio: { codec: "opus" } });

/** µ-law bytes of a loud square wave and of digital silence (0xff is +0). */
const loud = new Uint8Array(160).map((_, i) => (i % 2 ? 0x80 : 0x00));
const silent = new Uint8Array(160).fill(0xff);

describe("echo backend: Realtime events", () => {
  it("takes the bridge's participant.joined / participant.left without answering (no error event)", () => {
    const { e, take } = engine();
    e.event(started());
    take();
    for (const type of ["participant.joined", "participant.left"])
      e.event(JSON.stringify({ type, call_id: "rtc_x", participant_id: "prt_AAAAAAAAAAAAAAAA", slot: 2 }));
    expect(take()).toEqual([]);
    e.event(JSON.stringify({ type: "participant.bogus" }));
    expect(take().map((x) => x.type)).toEqual(["error"]);
  });

  it("session.created on start carries the configured session over the defaults", () => {
    const { e, take } = engine();
    e.event(started({ instructions: "be brief", audio: { output: { voice: "verse" } } }));
    const [ev, ...rest] = take();
    expect(rest).toEqual([]);
    expect(ev!.type).toBe("session.created");
    expect(ev!.event_id).toMatch(/^event_/);
    const s = ev!.session as { audio: { output: unknown; input: { turn_detection: { type: string } } } };
    expect(s).toMatchObject({ type: "realtime", object: "realtime.session", instructions: "be brief" });
    expect(s.audio.output).toMatchObject({ voice: "verse", speed: 1 });
    expect(s.audio.input.turn_detection.type).toBe("server_vad");
    e.event(started({ instructions: "again" }));
    expect(take()).toEqual([]);
  });

  it("session.update answers session.updated with the merged session; the id stays", () => {
    const { e, take } = engine();
    e.event(started());
    const id = (take()[0]!.session as { id: string }).id;
    e.event(
      JSON.stringify({ type: "session.update", session: { type: "realtime", instructions: "hi", id: "x" } }),
    );
    const [u] = take();
    expect(u).toMatchObject({
      type: "session.updated",
      session: { instructions: "hi", id, model: "gr-echo" },
    });
    e.event(
      JSON.stringify({ type: "session.update", session: { tools: [{ type: "function", name: "f" }] } }),
    );
    expect(take()[0]!.session).toMatchObject({ instructions: "hi", tools: [{ name: "f" }] });
  });

  it("conversation.item.create and response.create give the full sequence, echoing the text", () => {
    const { e, take } = engine();
    e.event(started());
    take();
    e.event(
      JSON.stringify({
        type: "conversation.item.create",
        event_id: "c1",
        item: { type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] },
      }),
    );
    const created = take();
    expect(created.map((x) => x.type)).toEqual([
      "conversation.item.created",
      "conversation.item.added",
      "conversation.item.done",
    ]);
    const userId = (created[0]!.item as { id: string }).id;
    e.event(JSON.stringify({ type: "response.create" }));
    const seq = take();
    expect(seq.map((x) => x.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "conversation.item.added",
      "response.content_part.added",
      "response.output_audio_transcript.delta",
      "response.output_audio_transcript.done",
      "response.content_part.done",
      "response.output_item.done",
      "conversation.item.done",
      "response.done",
    ]);
    expect(seq[2]!.previous_item_id).toBe(userId);
    expect(seq.at(-1)!.response).toMatchObject({
      object: "realtime.response",
      status: "completed",
      output: [{ role: "assistant", content: [{ type: "output_audio", transcript: "hello" }] }],
    });
    expect(new Set(seq.map((x) => x.event_id)).size).toBe(seq.length);
    // Text modality, out of band: no conversation events.
    e.event(
      JSON.stringify({
        type: "response.create",
        response: { conversation: "none", output_modalities: ["text"] },
      }),
    );
    const oob = take().map((x) => x.type);
    expect(oob).toContain("response.output_text.delta");
    expect(oob).not.toContain("conversation.item.added");
  });

  it("answers unknown, malformed and incomplete events with a Realtime error naming the event", () => {
    const { e, take } = engine();
    e.event("{not json");
    e.event(JSON.stringify([1, 2]));
    e.event(JSON.stringify({ type: "bogus.event", event_id: "evt_9" }));
    e.event(JSON.stringify({ type: "session.update", event_id: "evt_10" }));
    e.event(JSON.stringify({ type: "conversation.item.delete", item_id: "nope" }));
    e.event(JSON.stringify({ type: "conversation.item.create", item: { type: "message" } }));
    const errs = take();
    expect(errs.map((x) => x.type)).toEqual(Array(6).fill("error"));
    expect(errs.map((x) => (x.error as { code: string }).code)).toEqual([
      "invalid_json",
      "invalid_event",
      "invalid_value",
      "missing_required_parameter",
      "item_not_found",
      "missing_required_parameter",
    ]);
    expect(errs[2]!.error).toMatchObject({ type: "invalid_request_error", event_id: "evt_9", param: "type" });
    expect(errs.every((x) => typeof x.event_id === "string")).toBe(true);
  });

  it("keeps a bounded number of items", () => {
    const { e, take } = engine();
    for (let i = 0; i < 400; i++)
      e.event(
        JSON.stringify({
          type: "conversation.item.create",
          item: { id: `i${i}`, role: "user", content: [] },
        }),
      );
    take();
    e.event(JSON.stringify({ type: "conversation.item.retrieve", item_id: "i0" }));
    e.event(JSON.stringify({ type: "conversation.item.retrieve", item_id: "i399" }));
    expect(take().map((x) => x.type)).toEqual(["error", "conversation.item.retrieved"]);
  });

  it("VAD over PCMU: speech_started, speech_stopped after the silence, then commit, item and a response", () => {
    const { e, take } = engine();
    e.event(
      started({ audio: { input: { turn_detection: { type: "server_vad", silence_duration_ms: 300 } } } }),
    );
    take();
    let t = 0;
    for (let i = 0; i < 10; i++, t += 20) e.audio(AudioCodec.pcmu, 0, silent, t);
    expect(take()).toEqual([]);
    for (let i = 0; i < 25; i++, t += 20) e.audio(AudioCodec.pcmu, 0, loud, t);
    const s = take();
    expect(s.map((x) => x.type)).toEqual(["input_audio_buffer.speech_started"]);
    expect(s[0]!.audio_start_ms).toBe(200);
    for (let i = 0; i < 10; i++, t += 20) e.audio(AudioCodec.pcmu, 0, silent, t);
    expect(take()).toEqual([]); // 200 ms of silence < 300
    e.tick(t + 200); // frames stopped (DTX): time alone ends the turn
    const stop = take();
    expect(stop.map((x) => x.type).slice(0, 5)).toEqual([
      "input_audio_buffer.speech_stopped",
      "input_audio_buffer.committed",
      "conversation.item.created",
      "conversation.item.added",
      "conversation.item.done",
    ]);
    expect(stop[0]!.item_id).toBe(s[0]!.item_id);
    expect(stop[0]!.audio_end_ms).toBe(700);
    expect(stop.at(-1)!.type).toBe("response.done");
  });

  it("no VAD events with turn_detection null; create_response false commits without a response", () => {
    const off = engine();
    off.e.event(started({ audio: { input: { turn_detection: null } } }));
    off.take();
    for (let t = 0; t < 1000; t += 20) off.e.audio(AudioCodec.pcmu, 0, loud, t);
    off.e.tick(5000);
    expect(off.take()).toEqual([]);
    const quiet = engine();
    quiet.e.event(started({ audio: { input: { turn_detection: { create_response: false } } } }));
    quiet.take();
    for (let t = 0; t < 200; t += 20) quiet.e.audio(AudioCodec.pcmu, 0, loud, t);
    quiet.e.tick(2000);
    expect(quiet.take().map((x) => x.type)).not.toContain("response.created");
  });
});

describe("VAD", () => {
  it("µ-law levels: silence is 0, a full-scale square wave is near 32124", () => {
    expect(pcmuLevel(silent)).toBe(0);
    expect(pcmuLevel(loud)).toBeGreaterThan(30000);
    expect(pcmuLevel(new Uint8Array(0))).toBe(0);
  });

  it("Opus by size: DTX-sized packets are silence, packets well above the floor are voice", () => {
    const v = new Vad({ threshold: 0.5, startMs: 60, silenceMs: 300 });
    const small = new Uint8Array(20);
    const big = new Uint8Array(90);
    const events: string[] = [];
    let t = 0;
    for (let i = 0; i < 20; i++, t += 20) v.frame(AudioCodec.opus, 0, small, t);
    for (let i = 0; i < 20; i++, t += 20) events.push(v.frame(AudioCodec.opus, 0, big, t)?.kind ?? "");
    for (let i = 0; i < 20; i++, t += 20) events.push(v.frame(AudioCodec.opus, 0, small, t)?.kind ?? "");
    expect(events.filter(Boolean)).toEqual(["started", "stopped"]);
    expect(v.voiced(AudioCodec.opus, AudioFlags.marker, new Uint8Array(3))).toBe(false);
    expect(v.voiced(AudioCodec.opus, AudioFlags.marker, new Uint8Array(30))).toBe(true);
  });
});

describe("hostile events", () => {
  it("never throws; every answer is a JSON object with a type and an event_id", () => {
    const types = fc.constantFrom(
      "session.update",
      "conversation.item.create",
      "conversation.item.delete",
      "conversation.item.truncate",
      "response.create",
      "input_audio_buffer.commit",
      "session.started",
      "__proto__",
      "constructor",
    );
    const event = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json({ maxDepth: 4 }),
      fc
        .record({ type: types, session: fc.anything(), item: fc.anything(), response: fc.anything() })
        .map((o) => JSON.stringify(o)),
      fc
        .record({ type: types, item_id: fc.string(), session: fc.jsonValue() })
        .map((o) => JSON.stringify({ ...o, session: { __proto__: { polluted: 1 }, nested: o.session } })),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 20 }), (evs) => {
        const { e, take } = engine();
        for (const text of evs) e.event(text);
        for (const out of take()) {
          expect(typeof out.type).toBe("string");
          expect(typeof out.event_id).toBe("string");
        }
        expect(({} as { polluted?: number }).polluted).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});
