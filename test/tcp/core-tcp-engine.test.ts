// The POP engine with transport "tcp", on virtual time: its frames carry the TCP-borne flag, it
// takes only TCP-borne frames back (and a UDP engine only the others), endClient drops a flow at
// once, and out.slot names the flow both ways (how the shell finds the connection).
import { describe, expect, it } from "vitest";
import { PopEngine } from "../../regional/relay/core/pop-engine.ts";
import { SourceList } from "../../regional/relay/core/sources.ts";
import { Action, Drop, PeerKind } from "../../regional/relay/core/types.ts";
import { FrameType } from "../../shared/backbone/frame.ts";
import { bindingRequest, frame, hint, readFrame, rtp, verifier } from "../relay/fixtures.ts";
import { VIRTUAL_TIMERS } from "../support/relay-timers.ts";

const T0 = 1_000_000;
const C = { address: "198.51.100.7", port: 40000 };

function engine(transport: "udp" | "tcp"): PopEngine {
  return new PopEngine({
    popId: 7,
    clusters: [1],
    clusterSources: new Map([[1, new SourceList(["10.1.0.0/16"])]]),
    colocatedClusterId: 0,
    transceivers: { has: () => false },
    hint: verifier(),
    limits: { maxFlows: 100, maxFlowsPerPrefix: 100, maxHalfOpenPerPrefix: 10 },
    timers: VIRTUAL_TIMERS,
    mirror: false,
    restore: null,
    now: T0,
    transport,
  });
}

/** What the engine wrote upstream, as a frame read back. */
function upstream(e: PopEngine, payload: Uint8Array) {
  const buf = Buffer.concat([Buffer.from(e.out.header), Buffer.from(payload)]);
  return readFrame(buf)!;
}

const spec = (tcp: boolean, type: number = FrameType.data) => ({
  type,
  popId: 7,
  clusterId: 1,
  transceiverId: 4,
  clientIp: C.address,
  clientPort: C.port,
  tcp,
});

describe("POP engine, transport tcp", () => {
  it("marks its frames TCP-borne and names the slot", () => {
    const e = engine("tcp");
    const req = bindingRequest(hint(1, 4));
    expect(e.fromClient(T0, C.address, C.port, req, req.length)).toBe(Action.forwardWrapped);
    expect(e.out.peerKind).toBe(PeerKind.cluster);
    const f = upstream(e, req);
    expect(f).toMatchObject({ type: FrameType.data, popId: 7, clusterId: 1, transceiverId: 4, tcp: true });
    const slot = e.out.slot;
    expect(slot).toBeGreaterThanOrEqual(0);
    // Back: only with the flag; the slot is the same.
    const v = frame(spec(true, FrameType.pathValidated), new Uint8Array(0));
    e.fromUpstream(T0 + 1, PeerKind.cluster, 1, v, v.length);
    const back = frame(spec(true), rtp(100));
    expect(e.fromUpstream(T0 + 2, PeerKind.cluster, 1, back, back.length)).toBe(Action.toClient);
    expect([e.out.address, e.out.port, e.out.slot]).toEqual([C.address, C.port, slot]);
    const udpBack = frame(spec(false), rtp(100));
    const before = e.stats.drops[Drop.flowMismatch]!;
    expect(e.fromUpstream(T0 + 3, PeerKind.cluster, 1, udpBack, udpBack.length)).toBe(Action.drop);
    expect(e.stats.drops[Drop.flowMismatch]).toBe(before + 1);
  });

  it("a UDP engine refuses TCP-borne frames for a flow of the same address", () => {
    const e = engine("udp");
    const req = bindingRequest(hint(1, 4));
    e.fromClient(T0, C.address, C.port, req, req.length);
    expect(upstream(e, req).tcp).toBe(false);
    const tcpBack = frame(spec(true), rtp(100));
    expect(e.fromUpstream(T0 + 1, PeerKind.cluster, 1, tcpBack, tcpBack.length)).toBe(Action.drop);
    expect(e.stats.drops[Drop.flowMismatch]).toBe(1);
  });

  it("endClient drops the flow at once (the connection closed)", () => {
    const e = engine("tcp");
    const req = bindingRequest(hint(1, 4));
    e.fromClient(T0, C.address, C.port, req, req.length);
    expect(e.lookup(C.address, C.port)).not.toBeNull();
    expect(e.endClient(T0 + 1, C.address, C.port)).toBe(true);
    expect(e.lookup(C.address, C.port)).toBeNull();
    expect(e.endClient(T0 + 2, C.address, C.port)).toBe(false);
    expect(e.table.size).toBe(0);
  });
});
