// The cluster relay engine on virtual time.
import { describe, expect, it } from "vitest";
import { ClusterEngine } from "../../regional/relay/core/cluster-engine.ts";
import { SourceList } from "../../regional/relay/core/sources.ts";
import { Action, Drop, PeerKind } from "../../regional/relay/core/types.ts";
import { FrameType } from "../../shared/backbone/frame.ts";
import { VIRTUAL_TIMERS } from "../support/relay-timers.ts";
import { bindingRequest, bindingSuccess, frame, hint, rtp, txid } from "./fixtures.ts";

const T0 = 5_000;
const POP = { address: "10.9.0.1", port: 41000 };
const spec = { popId: 3, clusterId: 1, transceiverId: 4, clientIp: "198.51.100.7", clientPort: 40000 };

function engine(): ClusterEngine {
  return new ClusterEngine({
    clusterId: 1,
    popSources: new Map([[3, new SourceList(["10.9.0.0/16"])]]),
    popBackbone: new Map([[3, { address: "10.9.0.1", port: 4478 }]]),
    transceivers: { has: (id) => id === 4 || id === 5 },
    limits: { maxFlows: 100, maxFlowsPerPrefix: 100, maxHalfOpenPerPrefix: 10 },
    timers: VIRTUAL_TIMERS,
    now: T0,
  });
}

describe("cluster engine", () => {
  it("forwards POP frames unchanged to the registered transceiver and answers back to the POP socket", () => {
    const e = engine();
    const id = txid();
    const up = frame(spec, bindingRequest(hint(1, 4), id));
    expect(e.fromBackbone(T0, POP.address, POP.port, up, up.length)).toBe(Action.forwardFrame);
    expect([e.out.peerKind, e.out.peerId]).toEqual([PeerKind.transceiver, 4]);
    expect(e.lookup(spec.clientIp, spec.clientPort)).toEqual({
      state: "half-open",
      transceiverId: 4,
      popId: 3,
    });
    const down = frame(spec, bindingSuccess(id));
    expect(e.fromTransceiver(T0 + 1, 4, down, down.length)).toBe(Action.toBackbone);
    expect([e.out.address, e.out.port]).toEqual([POP.address, POP.port]);
    // A success (a replayed check draws one) opens nothing; the transceiver's pathValidated does,
    // and goes on to the POP unchanged.
    expect(e.lookup(spec.clientIp, spec.clientPort)!.state).toBe("half-open");
    const v = frame({ ...spec, type: FrameType.pathValidated }, new Uint8Array(0));
    expect(e.fromTransceiver(T0 + 2, 4, v, v.length)).toBe(Action.toBackbone);
    expect([e.out.address, e.out.port]).toEqual([POP.address, POP.port]);
    expect(e.lookup(spec.clientIp, spec.clientPort)!.state).toBe("answered");
    expect(e.stats.flowsValidated).toBe(1);
  });

  it("expires a flow the transceiver never validated after halfOpenMs, even with traffic", () => {
    const e = engine();
    const up = frame(spec, bindingRequest(hint(1, 4), txid()));
    e.fromBackbone(T0, POP.address, POP.port, up, up.length);
    const down = frame(spec, bindingSuccess(txid()));
    for (let t = T0; t < T0 + 2_500; t += 100) {
      e.fromTransceiver(t, 4, down, down.length);
      e.tick(t);
    }
    expect(e.lookup(spec.clientIp, spec.clientPort)).toBeNull();
    expect(e.stats.expiredHalfOpen).toBe(1);
  });

  it("accepts frames only from the POP's networks, for its own cluster and known transceivers", () => {
    const e = engine();
    const cases: [string, Buffer, number][] = [
      ["10.8.0.1", frame(spec, rtp()), Drop.sourceNotAllowed],
      ["10.9.0.1", frame({ ...spec, popId: 4 }, rtp()), Drop.sourceNotAllowed],
      ["10.9.0.1", frame({ ...spec, clusterId: 2 }, rtp()), Drop.unknownCluster],
      ["10.9.0.1", frame({ ...spec, transceiverId: 6 }, rtp()), Drop.unknownTransceiver],
      ["10.9.0.1", Buffer.alloc(40, 0x47), Drop.malformed],
    ];
    for (const [src, buf, reason] of cases) {
      const before = e.stats.drops[reason]!;
      expect(e.fromBackbone(T0, src, 1, buf, buf.length)).toBe(Action.drop);
      expect(e.stats.drops[reason]).toBe(before + 1);
    }
    expect(e.table.size).toBe(0);
  });

  it("checks that a transceiver speaks only for itself", () => {
    const e = engine();
    const up = frame(spec, rtp());
    e.fromBackbone(T0, POP.address, POP.port, up, up.length);
    const down = frame(spec, rtp());
    expect(e.fromTransceiver(T0, 5, down, down.length)).toBe(Action.drop);
    expect(e.stats.drops[Drop.flowMismatch]).toBe(1);
  });

  it("falls back to the POP's topology backbone address for a flow it does not know", () => {
    const e = engine();
    const down = frame(spec, rtp());
    expect(e.fromTransceiver(T0, 4, down, down.length)).toBe(Action.toBackbone);
    expect([e.out.address, e.out.port]).toEqual(["10.9.0.1", 4478]);
    expect(e.stats.fallbackToPop).toBe(1);
    const unknownPop = frame({ ...spec, popId: 9 }, rtp());
    expect(e.fromTransceiver(T0, 4, unknownPop, unknownPop.length)).toBe(Action.drop);
  });

  it("forwards flow-close to the POP and forgets the flow; expires idle flows", () => {
    const e = engine();
    const up = frame(spec, rtp());
    e.fromBackbone(T0, POP.address, POP.port, up, up.length);
    const other = frame({ ...spec, clientPort: 40001 }, rtp());
    e.fromBackbone(T0, POP.address, POP.port + 1, other, other.length);
    expect(e.endpoints.size).toBe(2);
    const close = frame({ ...spec, type: FrameType.flowClose }, new Uint8Array([1]));
    expect(e.fromTransceiver(T0 + 1, 4, close, close.length)).toBe(Action.toBackbone);
    expect(e.out.port).toBe(POP.port);
    expect(e.lookup(spec.clientIp, spec.clientPort)).toBeNull();
    expect(e.endpoints.size).toBe(1);
    e.tick(T0 + 2_200);
    expect(e.table.size).toBe(0);
    expect(e.stats.expiredHalfOpen).toBe(1);
    expect(e.endpoints.size).toBe(0);
  });

  it("follows a client whose traffic moves to another POP socket", () => {
    const e = engine();
    const up = frame(spec, rtp());
    e.fromBackbone(T0, POP.address, POP.port, up, up.length);
    e.fromBackbone(T0, "10.9.0.2", 42000, up, up.length);
    const down = frame(spec, rtp());
    e.fromTransceiver(T0, 4, down, down.length);
    expect([e.out.address, e.out.port]).toEqual(["10.9.0.2", 42000]);
    expect(e.endpoints.size).toBe(1);
  });
});
