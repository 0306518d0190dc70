// The join contract's readers (shared/signalling/join.ts): what the edge accepts from the owner's
// admit and from a leg's 201, refusals naming nothing unsafe, and a property test that they
// never throw whatever JSON they are given.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readAdmitResponse, readCreateLegResponse, readHubInfo } from "../../shared/signalling/join.ts";

const ADMIT = {
  participantId: `prt_${"aB3_-".repeat(3)}x`,
  slot: 2,
  conferenceId: "0123456789abcdef",
  hub: { address: "10.0.0.7:7400", clusterId: 1, transceiverId: 3 },
};

describe("readAdmitResponse", () => {
  it("keeps the contract's fields and drops the rest", () => {
    expect(readAdmitResponse({ ...ADMIT, extra: 1, hub: { ...ADMIT.hub, x: 2 } })).toEqual(ADMIT);
    expect(readHubInfo({ address: "[2001:db8::7]:7400", clusterId: 2, transceiverId: 9 })).toEqual({
      address: "[2001:db8::7]:7400",
      clusterId: 2,
      transceiverId: 9,
    });
  });

  it.each([
    ["a short participant id", { participantId: "prt_abc" }],
    ["the owner's slot", { slot: 1 }],
    ["the backend's slot", { slot: 0 }],
    ["a slot over u16", { slot: 65536 }],
    ["a fractional slot", { slot: 2.5 }],
    ["an upper-case conference id", { conferenceId: "0123456789ABCDEF" }],
    ["a hub without a port", { hub: { ...ADMIT.hub, address: "10.0.0.7" } }],
    ["a hub address with a path", { hub: { ...ADMIT.hub, address: "10.0.0.7:1/x" } }],
    ["a hub cluster 0", { hub: { ...ADMIT.hub, clusterId: 0 } }],
    ["no hub", { hub: undefined }],
  ])("refuses %s", (_, patch) => {
    expect(readAdmitResponse({ ...ADMIT, ...patch })).toBeUndefined();
  });
});

describe("readCreateLegResponse", () => {
  it("reads a leg's 201 and refuses what is not one", () => {
    const leg = { legId: "rtc_x", sdp: "v=0\r\n", etag: "e", clusterId: 4, transceiverId: 7 };
    expect(readCreateLegResponse(leg)).toEqual(leg);
    expect(readCreateLegResponse({ legId: "rtc_x", sdp: "v=0" })).toEqual({
      legId: "rtc_x",
      sdp: "v=0",
      etag: "",
      clusterId: 0,
      transceiverId: 0,
    });
    expect(readCreateLegResponse({ callId: "rtc_x", sdp: "v=0" })).toBeUndefined();
    expect(readCreateLegResponse(null)).toBeUndefined();
  });
});

describe("the join readers on any JSON", () => {
  it("never throw", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        readAdmitResponse(v);
        readCreateLegResponse(v);
        readHubInfo(v);
      }),
    );
  });
});
