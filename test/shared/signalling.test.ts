// The signalling contract (shared/signalling/call-request.ts): the create request the edge
// sends and the transceiver validates, table-driven rejections naming the field, and a property
// test that the reader never throws whatever JSON it is given.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_SDP_BYTES } from "../../shared/sdp/offer.ts";
import { readCreateCallRequest, readCreateCallResponse } from "../../shared/signalling/call-request.ts";

describe("readCreateCallRequest", () => {
  it("keeps what the edge sends", () => {
    const req = {
      sdp: "v=0\r\n",
      session: { type: "realtime" },
      client: { region: "EU", country: "DE", continent: "EU", colo: "FRA", latitude: 50.1, longitude: 8.7 },
      ingress: { vip: "203.0.113.10:3478", popId: 7 },
    };
    expect(readCreateCallRequest(req)).toEqual({ ok: true, value: req });
    expect(readCreateCallRequest({ sdp: "v=0", session: null })).toEqual({
      ok: true,
      value: { sdp: "v=0" },
    });
  });

  it.each([
    [[], "body_malformed", "body must be a JSON object"],
    [{}, "body_malformed", "sdp: must be a string"],
    [{ sdp: 1 }, "body_malformed", "sdp: must be a string"],
    [{ sdp: "x".repeat(MAX_SDP_BYTES * 4 + 1) }, "sdp_too_large", "sdp is over"],
    [{ sdp: "", session: [] }, "body_malformed", "session: must be an object"],
    [{ sdp: "", client: "EU" }, "body_malformed", "client: must be an object"],
    [{ sdp: "", client: { country: 1 } }, "body_malformed", "client.country"],
    [{ sdp: "", client: { colo: "x".repeat(65) } }, "body_malformed", "client.colo"],
    [{ sdp: "", client: { latitude: 91 } }, "body_malformed", "client.latitude"],
    [{ sdp: "", client: { longitude: Number.NaN } }, "body_malformed", "client.longitude"],
    [{ sdp: "", ingress: 1 }, "body_malformed", "ingress: must be an object"],
    [{ sdp: "", ingress: { vip: 1 } }, "body_malformed", "ingress.vip"],
    [{ sdp: "", ingress: { popId: 0 } }, "body_malformed", "ingress.popId"],
    [{ sdp: "", ingress: { popId: 65536 } }, "body_malformed", "ingress.popId"],
    [{ sdp: "", ingress: { popId: 1.5 } }, "body_malformed", "ingress.popId"],
  ])("refuses %#", (body, code, message) => {
    const r = readCreateCallRequest(body);
    expect(r.ok).toBe(false);
    expect(!r.ok && [r.code, r.message.includes(message)]).toEqual([code, true]);
  });

  it("never throws on any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (v, w) => {
        expect(typeof readCreateCallRequest(v).ok).toBe("boolean");
        expect(typeof readCreateCallRequest({ sdp: "v=0", client: v, ingress: w }).ok).toBe("boolean");
        readCreateCallResponse(v);
      }),
      { numRuns: 500 },
    );
  });
});

describe("readCreateCallResponse", () => {
  it("reads a 201 body and refuses one without callId or sdp", () => {
    const ok = { callId: "rtc_x", sdp: "v=0", etag: "e", clusterId: 1, transceiverId: 2 };
    expect(readCreateCallResponse(ok)).toEqual(ok);
    expect(readCreateCallResponse({ sdp: "v=0" })).toBeUndefined();
    expect(readCreateCallResponse({ callId: "rtc_x" })).toBeUndefined();
    expect(readCreateCallResponse(null)).toBeUndefined();
  });
});
