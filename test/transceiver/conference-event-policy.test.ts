// What a joiner may send to the backend and how the owner's client's events are kept from posing
// as a joiner's (conference/events.ts), on hand-made events.
import { describe, expect, it } from "vitest";
import {
  joinerMayNotSend,
  readJoinerEvent,
  untagOwnerEvent,
} from "../../regional/transceiver/conference/events.ts";

describe("joiner event policy", () => {
  it("refuses what sets the instructions or tools, passes the rest tagged by the hub", () => {
    const refused = [
      { type: "session.update", session: {} },
      { type: "transcription_session.update" },
      { type: "conversation.item.create", item: { role: "system", content: [] } },
      { type: "response.create", response: { instructions: "x" } },
      { type: "response.create", response: { tools: [] } },
    ];
    for (const ev of refused) expect(joinerMayNotSend(ev)).toBe(true);
    const passed = [
      { type: "conversation.item.create", item: { role: "user" } },
      { type: "response.create", response: { modalities: ["audio"] } },
      { type: "response.create" },
      { type: "input_audio_buffer.commit" },
      { type: "ping" },
      { notype: 1 },
    ];
    for (const ev of passed) expect(joinerMayNotSend(ev)).toBe(false);
    expect(readJoinerEvent('{"type":"session.update"}', "prt_a", 2)).toEqual({ refused: "session.update" });
    expect(
      JSON.parse(readJoinerEvent('{"type":"ping","participant_id":"owner","slot":1}', "prt_a", 2) as string),
    ).toEqual({
      type: "ping",
      participant_id: "prt_a",
      slot: 2,
    });
    expect(readJoinerEvent("[1]", "prt_a", 2)).toBeUndefined();
    expect(readJoinerEvent("{", "prt_a", 2)).toBeUndefined();
  });

  it("the owner's client's events lose top-level participant_id and slot only", () => {
    const plain = '{"type":"ping"}';
    expect(untagOwnerEvent(plain)).toBe(plain); // not parsed
    expect(JSON.parse(untagOwnerEvent('{"type":"ping","participant_id":"prt_x","slot":3}'))).toEqual({
      type: "ping",
    });
    const nested = '{"type":"x","item":{"slot":3}}';
    expect(untagOwnerEvent(nested)).toBe(nested);
    expect(untagOwnerEvent('not json "slot"')).toBe('not json "slot"');
  });
});
