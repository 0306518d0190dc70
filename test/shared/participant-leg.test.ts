// The participant handle's readers (shared/signalling/participant-leg.ts): the leg an owner's
// participant record names, the leg status fields a joiner is shown, the merge, and a property
// test that the readers never throw whatever JSON they are given.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readLegStatus, readParticipantLeg, withLegStatus } from "../../shared/signalling/participant-leg.ts";

const LEG = { clusterId: 4, transceiverId: 7, legId: `rtc_${"A".repeat(48)}` };
const RECORD = { participantId: `prt_${"a".repeat(16)}`, slot: 2, state: "joined", leg: LEG };

describe("readParticipantLeg", () => {
  it("reads the leg, null while it is not known, and drops extra fields", () => {
    expect(readParticipantLeg({ ...RECORD, leg: { ...LEG, x: 1 } })).toEqual(LEG);
    expect(readParticipantLeg({ ...RECORD, leg: null })).toBeNull();
  });

  it.each([
    ["no record", null],
    ["no leg field", { participantId: RECORD.participantId }],
    ["a leg without legId (the record before the hub names it)", { leg: { clusterId: 4, transceiverId: 7 } }],
    ["a legId that is not a call id", { leg: { ...LEG, legId: "rtc_x" } }],
    ["cluster 0", { leg: { ...LEG, clusterId: 0 } }],
    ["a transceiver over u16", { leg: { ...LEG, transceiverId: 65536 } }],
    ["an array", { leg: [LEG] }],
  ])("refuses %s", (_, v) => {
    expect(readParticipantLeg(v)).toBeUndefined();
  });
});

describe("readLegStatus and withLegStatus", () => {
  it("keeps state, selected path, codec, RTT, restarts and end reason; nothing else", () => {
    const status = {
      callId: LEG.legId,
      state: "connected",
      clientAddress: "203.0.113.7:5000",
      codec: "opus",
      iceRttMs: 12.5,
      iceRestarts: 1,
      endReason: null,
      backend: { state: "open" },
      conference: { hub: "x" },
    };
    expect(readLegStatus(status)).toEqual({
      state: "connected",
      clientAddress: "203.0.113.7:5000",
      codec: "opus",
      iceRttMs: 12.5,
      iceRestarts: 1,
      endReason: null,
    });
    expect(readLegStatus({ state: "connecting", clientAddress: null, codec: 3 })).toEqual({
      state: "connecting",
      clientAddress: null,
    });
  });

  it("is unknown for a status that is not one", () => {
    for (const v of [null, "x", [], {}, { state: "weird" }, { state: 1 }])
      expect(readLegStatus(v)).toEqual({ state: "unknown" });
  });

  it("merges into the roster entry's leg without renaming the leg", () => {
    const merged = withLegStatus(
      RECORD,
      readLegStatus({ state: "ended", legId: "other", endReason: "hangup" }),
    );
    expect(merged).toEqual({ ...RECORD, leg: { ...LEG, state: "ended", endReason: "hangup" } });
  });

  it("never throws", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        readParticipantLeg(v);
        readParticipantLeg({ leg: v });
        withLegStatus({ leg: v }, readLegStatus(v));
      }),
    );
  });
});
