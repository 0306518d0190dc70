// The gate every backbone frame passes first (regional/relay/core/backbone-gate.ts), shared by the
// POP's backbone listener and the cluster relay: a frame from outside the networks of the peer
// its header names is refused, whatever it claims; a ping becomes a pong in place; garbage is
// malformed; the header is decoded once, into the engine's reused header.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BackboneGate, Gate } from "../../regional/relay/core/backbone-gate.ts";
import { SourceList } from "../../regional/relay/core/sources.ts";
import {
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  FrameType,
  newFrameHeader,
} from "../../shared/backbone/frame.ts";

function frame(type: number, popId: number, clusterId: number): Uint8Array {
  const h = newFrameHeader();
  Object.assign(h, { type, popId, clusterId, transceiverId: 1, clientPort: 50000 });
  h.clientIp.set([192, 0, 2, 7], 12);
  const buf = new Uint8Array(FRAME_HEADER_BYTES + 4);
  encodeFrameHeader(buf, 0, h);
  return buf;
}

const POP_NETS = new Map([
  [1, new SourceList(["10.1.0.0/16", "fd00:1::/32"])],
  [2, new SourceList(["10.2.0.0/16"])],
]);

describe("BackboneGate at a cluster relay (sources by the header's POP id)", () => {
  const h = newFrameHeader();
  const gate = new BackboneGate(h, new Uint8Array(16), POP_NETS, "pop");

  it("passes a data frame from its POP's network, the header decoded", () => {
    expect(gate.check(frame(FrameType.data, 1, 9), FRAME_HEADER_BYTES + 4, "10.1.3.4")).toBe(Gate.pass);
    expect([h.popId, h.clusterId, gate.ip]).toEqual([1, 9, (10 << 24) | (1 << 16) | (3 << 8) | 4]);
    expect(gate.check(frame(FrameType.data, 1, 9), FRAME_HEADER_BYTES + 4, "fd00:1::5")).toBe(Gate.pass);
    expect(gate.ip).toBe(-1);
  });

  it("refuses a frame naming POP 1 from POP 2's network, an unknown POP, or an outside v6 address", () => {
    const len = FRAME_HEADER_BYTES + 4;
    expect(gate.check(frame(FrameType.data, 1, 9), len, "10.2.0.1")).toBe(Gate.sourceNotAllowed);
    expect(gate.check(frame(FrameType.data, 3, 9), len, "10.1.0.1")).toBe(Gate.sourceNotAllowed);
    expect(gate.check(frame(FrameType.data, 1, 9), len, "fd00:2::1")).toBe(Gate.sourceNotAllowed);
  });

  it("turns an allowed ping into a pong in place, and never answers one from outside", () => {
    const ping = frame(FrameType.ping, 2, 9);
    expect(gate.check(ping, ping.length, "10.2.0.9")).toBe(Gate.pong);
    expect(gate.check(ping, ping.length, "10.2.0.9")).toBe(Gate.pass); // it is a pong now
    const h2 = newFrameHeader();
    new BackboneGate(h2, new Uint8Array(16), POP_NETS, "pop").check(ping, ping.length, "10.2.0.9");
    expect(h2.type).toBe(FrameType.pong);
    const outside = frame(FrameType.ping, 2, 9);
    expect(gate.check(outside, outside.length, "198.51.100.1")).toBe(Gate.sourceNotAllowed);
    expect(outside).toEqual(frame(FrameType.ping, 2, 9));
  });

  it("calls anything that is not a frame malformed, and never throws", () => {
    expect(gate.check(new Uint8Array(10), 10, "10.1.0.1")).toBe(Gate.malformed);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.constantFrom("10.1.0.1", "::1", "x"), (b, a) => {
        expect([Gate.pass, Gate.malformed, Gate.sourceNotAllowed, Gate.pong]).toContain(
          gate.check(b, b.length, a),
        );
      }),
    );
  });
});

describe("BackboneGate at a POP (sources by the header's cluster id)", () => {
  it("keys the networks by cluster id", () => {
    const gate = new BackboneGate(newFrameHeader(), new Uint8Array(16), POP_NETS, "cluster");
    const len = FRAME_HEADER_BYTES + 4;
    expect(gate.check(frame(FrameType.data, 7, 2), len, "10.2.5.5")).toBe(Gate.pass);
    expect(gate.check(frame(FrameType.data, 2, 7), len, "10.2.5.5")).toBe(Gate.sourceNotAllowed);
  });
});
