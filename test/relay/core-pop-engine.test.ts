// The POP engine on virtual time: no sockets, no clocks; every output checked.
import { describe, expect, it } from "vitest";
import { nodeMac } from "../../regional/common/hmac.ts";
import { PopEngine, type PopEngineConfig } from "../../regional/relay/core/pop-engine.ts";
import { DEFAULT_RESTORE_LIMITS } from "../../regional/relay/core/restore.ts";
import { RttKind } from "../../regional/relay/core/rtt.ts";
import { SourceList } from "../../regional/relay/core/sources.ts";
import { Action, Drop, PeerKind } from "../../regional/relay/core/types.ts";
import { FlowCloseReason, FrameType } from "../../shared/backbone/frame.ts";
import { HintVerifier } from "../../shared/hint/codec.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { VIRTUAL_TIMERS } from "../support/relay-timers.ts";
import {
  bindingRequest,
  bindingSuccess,
  dtls,
  frame,
  HINT_KEYS,
  hint,
  OTHER_KEYS,
  readFrame,
  rtp,
  txid,
  verifier,
} from "./fixtures.ts";

const T0 = 1_000_000;

function engine(over: Partial<PopEngineConfig> = {}): { e: PopEngine; rtts: [number, number, number][] } {
  const rtts: [number, number, number][] = [];
  const e = new PopEngine({
    popId: 7,
    clusters: [1, 2],
    clusterSources: new Map([
      [1, new SourceList(["10.1.0.0/16"])],
      [2, new SourceList(["10.2.0.0/16"])],
    ]),
    colocatedClusterId: 0,
    transceivers: { has: (id) => id === 5 },
    hint: verifier(),
    limits: { maxFlows: 1000, maxFlowsPerPrefix: 100, maxHalfOpenPerPrefix: 10 },
    timers: VIRTUAL_TIMERS,
    mirror: false,
    restore: null,
    rtt: { rtt: (k, c, ms) => rtts.push([k, c, ms]) },
    now: T0,
    ...over,
  });
  return { e, rtts };
}

const C = { address: "198.51.100.7", port: 40000 };

/**
 * Establishes a flow: request up, success down, then the transceiver's pathValidated (its own
 * check to the client was answered). Returns the request size.
 */
function establish(e: PopEngine, now: number, ufrag = hint(1, 4), client = C): number {
  const id = txid();
  const req = bindingRequest(ufrag, id);
  expect(e.fromClient(now, client.address, client.port, req, req.length)).toBe(Action.forwardWrapped);
  const f = readFrame(Buffer.concat([e.out.header, req]))!;
  const res = frame({ ...f, type: FrameType.data }, bindingSuccess(id));
  expect(e.fromUpstream(now + 1, PeerKind.cluster, f.clusterId, res, res.length)).toBe(Action.toClient);
  const v = frame({ ...f, type: FrameType.pathValidated }, new Uint8Array(0));
  expect(e.fromUpstream(now + 1, PeerKind.cluster, f.clusterId, v, v.length)).toBe(Action.drop);
  return req.length;
}

describe("POP engine: first packet and routing", () => {
  it("routes a Binding request by its hint and frames it with the client's address", () => {
    const { e } = engine();
    const req = bindingRequest(hint(2, 9));
    expect(e.fromClient(T0, C.address, C.port, req, req.length)).toBe(Action.forwardWrapped);
    expect(e.out.peerKind).toBe(PeerKind.cluster);
    expect(e.out.peerId).toBe(2);
    const f = readFrame(Buffer.concat([e.out.header, req]))!;
    expect(f).toMatchObject({ type: FrameType.data, popId: 7, clusterId: 2, transceiverId: 9 });
    expect(f.clientIp).toBe(C.address);
    expect(f.clientPort).toBe(C.port);
    expect(e.lookup(C.address, C.port)).toMatchObject({ state: "half-open", clusterId: 2, transceiverId: 9 });
    expect(e.stats.flowsCreated).toBe(1);
  });

  it("takes the socket layer's numeric IPv4 as the same client as its text, mapped form included", () => {
    const { e } = engine();
    const req = bindingRequest(hint(2, 9));
    const ip = (198 * 2 ** 24 + 51 * 2 ** 16 + 100 * 2 ** 8 + 7) >>> 0;
    expect(e.fromClient(T0, "::ffff:198.51.100.7", C.port, req, req.length, ip)).toBe(Action.forwardWrapped);
    expect(e.table.size).toBe(1);
    // The flow is found by number, by plain text and by mapped text alike: one flow, not three.
    const data = rtp();
    expect(e.fromClient(T0 + 1, C.address, C.port, data, data.length, ip)).toBe(Action.forwardWrapped);
    expect(e.fromClient(T0 + 2, C.address, C.port, data, data.length)).toBe(Action.forwardWrapped);
    expect(e.fromClient(T0 + 3, "::ffff:198.51.100.7", C.port, data, data.length)).toBe(
      Action.forwardWrapped,
    );
    expect(e.table.size).toBe(1);
    expect(readFrame(Buffer.concat([e.out.header, data]))!.clientIp).toBe(C.address);
    // -1 is IPv6: the text is parsed as such, and no IPv4 flow is touched.
    expect(e.fromClient(T0 + 4, "2001:db8::7", C.port, data, data.length, -1)).toBe(Action.drop);
    expect(e.stats.drops[Drop.noFlow]).toBe(1);
  });

  it("drops and counts what cannot open a flow", () => {
    const { e } = engine();
    const cases: [Buffer, number][] = [
      [rtp(), Drop.noFlow],
      [dtls(), Drop.noFlow],
      [bindingRequest(hint(1, 1, OTHER_KEYS)), Drop.badMac],
      [bindingRequest(hint(1, 1, `5:${Buffer.alloc(32, 1).toString("base64")}`)), Drop.unknownKey],
      [bindingRequest("notahint"), Drop.badHint],
      [bindingRequest(Buffer.alloc(18, 0x23).toString("base64")), Drop.unsupportedVersion],
      [bindingRequest(hint(3, 1)), Drop.unknownCluster],
      [bindingRequest(hint(1, 1)).subarray(0, 30), Drop.malformed],
      [bindingSuccess(txid()), Drop.noFlow],
    ];
    for (const [buf, reason] of cases) {
      const before = e.stats.drops[reason]!;
      expect(e.fromClient(T0, C.address, C.port, buf, buf.length)).toBe(Action.drop);
      expect(e.stats.drops[reason]).toBe(before + 1);
    }
    expect(e.table.size).toBe(0);
  });

  it("counts a hint under a key removed from GR_HINT_KEYS as unknown_key, not bad_hint", () => {
    // Rotation finished too early: the POP holds only key 1; the transceiver still mints under key 3.
    const onlyKey1 = HINT_KEYS.split(",").find((k) => k.startsWith("1:"))!;
    const { e } = engine({ hint: new HintVerifier(nodeMac(parseKeyring(onlyKey1, "GR_HINT_KEYS", 15))) });
    const req = bindingRequest(hint(1, 4)); // minted under the active key, id 3
    expect(e.fromClient(T0, C.address, C.port, req, req.length)).toBe(Action.drop);
    expect(e.stats.drops[Drop.unknownKey]).toBe(1);
    expect(e.stats.drops[Drop.badHint]).toBe(0);
    const under1 = bindingRequest(hint(1, 4, onlyKey1));
    expect(e.fromClient(T0, C.address, C.port, under1, under1.length)).toBe(Action.forwardWrapped);
  });

  it("forwards a co-located cluster's flows straight to the transceiver, if the registry knows it", () => {
    const { e } = engine({ colocatedClusterId: 1 });
    const ok = bindingRequest(hint(1, 5));
    expect(e.fromClient(T0, C.address, C.port, ok, ok.length)).toBe(Action.forwardWrapped);
    expect(e.out.peerKind).toBe(PeerKind.transceiver);
    expect(e.out.peerId).toBe(5);
    const unknown = bindingRequest(hint(1, 6));
    expect(e.fromClient(T0, "198.51.100.8", 1, unknown, unknown.length)).toBe(Action.drop);
    expect(e.stats.drops[Drop.unknownTransceiver]).toBe(1);
  });
});

describe("POP engine: return path", () => {
  it("answers the flow, unwraps frames to the client, and measures both RTTs", () => {
    const { e, rtts } = engine();
    const id = txid();
    const req = bindingRequest(hint(1, 4), id);
    e.fromClient(T0, C.address, C.port, req, req.length);
    const spec = { popId: 7, clusterId: 1, transceiverId: 4, clientIp: C.address, clientPort: C.port };
    const res = frame(spec, bindingSuccess(id));
    expect(e.fromUpstream(T0 + 12, PeerKind.cluster, 1, res, res.length)).toBe(Action.toClient);
    expect(e.out.address).toBe(C.address);
    expect(e.out.port).toBe(C.port);
    // A STUN success proves nothing (a replayed check draws one): still half-open.
    expect(e.lookup(C.address, C.port)!.state).toBe("half-open");
    const v = frame({ ...spec, type: FrameType.pathValidated }, new Uint8Array(0));
    expect(e.fromUpstream(T0 + 13, PeerKind.cluster, 1, v, v.length)).toBe(Action.drop);
    expect(e.lookup(C.address, C.port)!.state).toBe("answered");
    expect(e.stats.flowsValidated).toBe(1);
    expect(rtts).toEqual([[RttKind.backbone, 1, 12]]);
    // Transceiver's consent check, then the client's answer: first-hop RTT.
    const cid = txid();
    const check = frame(spec, bindingRequest("cli1", cid));
    expect(e.fromUpstream(T0 + 20, PeerKind.cluster, 1, check, check.length)).toBe(Action.toClient);
    const answer = bindingSuccess(cid);
    expect(e.fromClient(T0 + 27, C.address, C.port, answer, answer.length)).toBe(Action.forwardWrapped);
    expect(rtts[1]).toEqual([RttKind.firstHop, 1, 7]);
    const media = frame(spec, rtp(1200));
    expect(e.fromUpstream(T0 + 30, PeerKind.cluster, 1, media, media.length)).toBe(Action.toClient);
  });

  it("never sends a half-open client more bytes than it sent", () => {
    const { e } = engine();
    const req = bindingRequest(hint(1, 4));
    e.fromClient(T0, C.address, C.port, req, req.length);
    const spec = { popId: 7, clusterId: 1, transceiverId: 4, clientIp: C.address, clientPort: C.port };
    // A STUN request from the transceiver does not answer the flow; budget = req.length bytes.
    const small = frame(spec, bindingRequest("cli1"));
    let sent = 0;
    for (let i = 0; i < 10; i++) {
      if (e.fromUpstream(T0, PeerKind.cluster, 1, small, small.length) === Action.toClient)
        sent += small.length - 28;
    }
    expect(sent).toBeLessThanOrEqual(req.length);
    expect(e.stats.drops[Drop.amplification]).toBeGreaterThan(0);
    const big = frame(spec, rtp(1000));
    expect(e.fromUpstream(T0, PeerKind.cluster, 1, big, big.length)).toBe(Action.drop);
    expect(e.lookup(C.address, C.port)!.state).toBe("half-open");
  });

  it("keeps the amplification limits on a half-open flow after STUN successes and DTLS, until pathValidated", () => {
    const { e } = engine({ mirror: true });
    const reqs: Buffer[] = [];
    // The client (or an attacker replaying its check) sends 6 requests: a 6x budget in bytes.
    for (let i = 0; i < 6; i++) {
      const req = bindingRequest(hint(1, 4));
      reqs.push(req);
      e.fromClient(T0 + i, C.address, C.port, req, req.length);
    }
    const spec = { popId: 7, clusterId: 1, transceiverId: 4, clientIp: C.address, clientPort: C.port };
    let datagrams = 0;
    let bytes = 0;
    for (const payload of [
      bindingSuccess(txid()),
      dtls(),
      bindingSuccess(txid()),
      rtp(60),
      rtp(60),
      rtp(60),
    ]) {
      const f = frame(spec, payload);
      if (e.fromUpstream(T0 + 10, PeerKind.cluster, 1, f, f.length) === Action.toClient) {
        datagrams++;
        bytes += payload.length;
      }
    }
    expect(datagrams).toBe(4);
    expect(bytes).toBeLessThanOrEqual(reqs.reduce((n, r) => n + r.length, 0));
    expect(e.stats.drops[Drop.halfOpenLimit]).toBe(2);
    expect(e.lookup(C.address, C.port)!.state).toBe("half-open");
    // Nothing unvalidated is mirrored; validation mirrors and lifts the limits.
    expect(e.events).toEqual([]);
    const v = frame({ ...spec, type: FrameType.pathValidated }, new Uint8Array(0));
    e.fromUpstream(T0 + 20, PeerKind.cluster, 1, v, v.length);
    expect(e.events.map((x) => x.type)).toEqual(["mirror"]);
    const m = frame(spec, rtp(1200));
    for (let i = 0; i < 10; i++)
      expect(e.fromUpstream(T0 + 21, PeerKind.cluster, 1, m, m.length)).toBe(Action.toClient);
  });

  it("takes pathValidated only for the flow's own transceiver and POP, and never forwards it to the client", () => {
    const { e } = engine();
    const req = bindingRequest(hint(1, 4));
    e.fromClient(T0, C.address, C.port, req, req.length);
    const spec = { popId: 7, clusterId: 1, transceiverId: 4, clientIp: C.address, clientPort: C.port };
    const empty = new Uint8Array(0);
    const wrongT = frame({ ...spec, type: FrameType.pathValidated, transceiverId: 5 }, empty);
    expect(e.fromUpstream(T0, PeerKind.cluster, 1, wrongT, wrongT.length)).toBe(Action.drop);
    const wrongPop = frame({ ...spec, type: FrameType.pathValidated, popId: 8 }, empty);
    expect(e.fromUpstream(T0, PeerKind.cluster, 1, wrongPop, wrongPop.length)).toBe(Action.drop);
    const otherCluster = frame({ ...spec, type: FrameType.pathValidated, clusterId: 2 }, empty);
    expect(e.fromUpstream(T0, PeerKind.cluster, 2, otherCluster, otherCluster.length)).toBe(Action.drop);
    expect(e.lookup(C.address, C.port)!.state).toBe("half-open");
    expect(e.stats.drops[Drop.flowMismatch]).toBe(3);
  });

  it("drops frames for unknown flows, other destinations and other POPs", () => {
    const { e } = engine();
    establish(e, T0);
    const base = { popId: 7, clusterId: 1, transceiverId: 4, clientIp: C.address, clientPort: C.port };
    const cases: [Buffer, number, number][] = [
      [frame({ ...base, clientPort: 1 }, rtp()), 1, Drop.noFlow],
      [frame({ ...base, transceiverId: 5 }, rtp()), 1, Drop.flowMismatch],
      [frame({ ...base, popId: 8 }, rtp()), 1, Drop.flowMismatch],
      [frame(base, rtp()), 2, Drop.flowMismatch],
      [Buffer.from("garbage garbage garbage garbage"), 1, Drop.malformed],
    ];
    for (const [buf, peer, reason] of cases) {
      expect(e.fromUpstream(T0, PeerKind.cluster, peer, buf, buf.length)).toBe(Action.drop);
      expect(e.stats.drops[reason]).toBeGreaterThan(0);
    }
  });

  it("accepts fallback frames on the backbone listener only from the cluster's networks, and answers pings", () => {
    const { e } = engine();
    establish(e, T0);
    const f = frame(
      { popId: 7, clusterId: 1, transceiverId: 4, clientIp: C.address, clientPort: C.port },
      rtp(),
    );
    expect(e.fromBackbone(T0, "10.2.0.1", 5000, f, f.length)).toBe(Action.drop);
    expect(e.stats.drops[Drop.sourceNotAllowed]).toBe(1);
    expect(e.fromBackbone(T0, "10.1.3.4", 5000, f, f.length)).toBe(Action.toClient);
    const ping = frame(
      { type: FrameType.ping, popId: 7, clusterId: 1, transceiverId: 0, clientIp: "0.0.0.0", clientPort: 0 },
      new Uint8Array(8),
    );
    expect(e.fromBackbone(T0, "10.1.3.4", 5000, ping, ping.length)).toBe(Action.toBackbone);
    expect(readFrame(ping)!.type).toBe(FrameType.pong);
    expect(e.out.port).toBe(5000);
  });
});

describe("POP engine: timers on virtual time", () => {
  it("expires a half-open flow after halfOpenMs, a validated one after idleMs", () => {
    const { e } = engine();
    const req = bindingRequest(hint(1, 4));
    e.fromClient(T0, "198.51.100.1", 1, req, req.length);
    establish(e, T0);
    e.tick(T0 + 1_900);
    expect(e.table.size).toBe(2);
    e.tick(T0 + 2_200);
    expect(e.lookup("198.51.100.1", 1)).toBeNull();
    expect(e.stats.expiredHalfOpen).toBe(1);
    // Traffic keeps the answered flow alive past idleMs ...
    for (let t = T0; t <= T0 + 100_000; t += 10_000) {
      const m = rtp();
      expect(e.fromClient(t, C.address, C.port, m, m.length)).toBe(Action.forwardWrapped);
      e.tick(t);
    }
    expect(e.lookup(C.address, C.port)).not.toBeNull();
    // ... silence ends it.
    e.tick(T0 + 100_000 + 39_000);
    expect(e.lookup(C.address, C.port)).not.toBeNull();
    e.tick(T0 + 100_000 + 40_300);
    expect(e.lookup(C.address, C.port)).toBeNull();
    expect(e.stats.expiredIdle).toBe(1);
  });

  it("ends even a busy flow at its maximum lifetime", () => {
    const { e } = engine();
    establish(e, T0);
    let t = T0;
    while (e.lookup(C.address, C.port) !== null && t < T0 + 700_000) {
      t += 5_000;
      const m = rtp();
      e.fromClient(t, C.address, C.port, m, m.length);
      e.tick(t);
    }
    expect(t).toBeGreaterThanOrEqual(T0 + 600_000);
    expect(t).toBeLessThanOrEqual(T0 + 605_000);
    expect(e.stats.expiredLifetime).toBe(1);
  });

  it("ends a flow at once on flow-close", () => {
    const { e } = engine({ mirror: true });
    establish(e, T0);
    e.events.length = 0;
    const close = frame(
      {
        type: FrameType.flowClose,
        popId: 7,
        clusterId: 1,
        transceiverId: 4,
        clientIp: C.address,
        clientPort: C.port,
      },
      new Uint8Array([FlowCloseReason.hangup]),
    );
    expect(e.fromUpstream(T0 + 5, PeerKind.cluster, 1, close, close.length)).toBe(Action.drop);
    expect(e.lookup(C.address, C.port)).toBeNull();
    expect(e.stats.flowsClosed).toBe(1);
    expect(e.events).toEqual([{ type: "forget", address: C.address, port: C.port }]);
    const m = rtp();
    expect(e.fromClient(T0 + 6, C.address, C.port, m, m.length)).toBe(Action.drop);
  });
});

describe("POP engine: address change, re-pointing, limits, drain", () => {
  it("gives a client that moved a new flow to the same transceiver; the old one idles out", () => {
    const { e } = engine();
    const ufrag = hint(1, 4);
    establish(e, T0, ufrag);
    const moved = { address: "203.0.113.50", port: 51000 };
    const req = bindingRequest(ufrag);
    expect(e.fromClient(T0 + 100, moved.address, moved.port, req, req.length)).toBe(Action.forwardWrapped);
    expect(readFrame(Buffer.concat([e.out.header, req]))).toMatchObject({
      clusterId: 1,
      transceiverId: 4,
      clientIp: moved.address,
      clientPort: moved.port,
    });
    expect(e.table.size).toBe(2);
  });

  it("re-points a flow when a Binding request carries a verified hint for another transceiver", () => {
    const { e } = engine();
    establish(e, T0, hint(1, 4));
    const forged = bindingRequest(hint(2, 8, OTHER_KEYS));
    expect(e.fromClient(T0 + 1, C.address, C.port, forged, forged.length)).toBe(Action.drop);
    expect(e.lookup(C.address, C.port)!.transceiverId).toBe(4);
    const next = bindingRequest(hint(2, 8));
    expect(e.fromClient(T0 + 2, C.address, C.port, next, next.length)).toBe(Action.forwardWrapped);
    expect(e.out.peerId).toBe(2);
    expect(e.lookup(C.address, C.port)).toMatchObject({ state: "half-open", clusterId: 2, transceiverId: 8 });
    expect(e.stats.flowsReplaced).toBe(1);
  });

  it("caps half-open flows per /24 and the table in total", () => {
    const { e } = engine({ limits: { maxFlows: 15, maxFlowsPerPrefix: 100, maxHalfOpenPerPrefix: 10 } });
    for (let i = 0; i < 12; i++) {
      const req = bindingRequest(hint(1, 4));
      e.fromClient(T0, `198.51.100.${i}`, 1000, req, req.length);
    }
    expect(e.table.size).toBe(10);
    expect(e.stats.drops[Drop.rateLimited]).toBe(2);
    for (let i = 0; i < 8; i++) {
      const req = bindingRequest(hint(1, 4));
      e.fromClient(T0, `203.0.${i}.1`, 1000, req, req.length);
    }
    expect(e.table.size).toBe(15);
    expect(e.stats.drops[Drop.tableFull]).toBe(3);
  });

  it("takes no new flows while draining but keeps forwarding", () => {
    const { e } = engine();
    establish(e, T0);
    e.drain();
    const req = bindingRequest(hint(1, 4));
    expect(e.fromClient(T0, "198.51.100.99", 1, req, req.length)).toBe(Action.drop);
    expect(e.stats.drops[Drop.draining]).toBe(1);
    const m = rtp();
    expect(e.fromClient(T0, C.address, C.port, m, m.length)).toBe(Action.forwardWrapped);
  });
});

describe("POP engine: flow mirror and restore", () => {
  it("mirrors a validated flow, refreshes it only while active", () => {
    const { e } = engine({ mirror: true });
    establish(e, T0);
    expect(e.events).toEqual([
      {
        type: "mirror",
        address: C.address,
        port: C.port,
        record: { clusterId: 1, transceiverId: 4, popId: 7, ageMs: 0 },
      },
    ]);
    e.events.length = 0;
    for (let t = T0; t <= T0 + 25_000; t += 1_000) {
      const m = rtp();
      e.fromClient(t, C.address, C.port, m, m.length);
      e.tick(t);
    }
    expect(e.events.filter((x) => x.type === "mirror").length).toBe(2);
    e.events.length = 0;
    e.tick(T0 + 30_100); // activity since the last write: one more refresh
    expect(e.events.length).toBe(1);
    e.events.length = 0;
    e.tick(T0 + 39_000); // silent since T0+25s: no refresh
    expect(e.events).toEqual([]);
  });

  it("holds unknown non-STUN datagrams during a lookup and forwards them when the flow is found", () => {
    const { e } = engine({ restore: DEFAULT_RESTORE_LIMITS, mirror: true });
    const a = rtp(200, 1);
    const b = rtp(200, 2);
    expect(e.fromClient(T0, C.address, C.port, a, a.length)).toBe(Action.held);
    expect(e.fromClient(T0, C.address, C.port, b, b.length)).toBe(Action.held);
    expect(e.events).toEqual([{ type: "lookup", id: 1, address: C.address, port: C.port }]);
    expect(e.restoreResult(T0 + 3, 1, { clusterId: 2, transceiverId: 6, popId: 7, ageMs: 5_000 })).toBe(2);
    expect(e.queued.map((q) => [q.peerKind, q.peerId, q.buf])).toEqual([
      [PeerKind.cluster, 2, a],
      [PeerKind.cluster, 2, b],
    ]);
    expect(readFrame(Buffer.concat([e.queued[1]!.header, b]))).toMatchObject({
      clusterId: 2,
      transceiverId: 6,
      clientPort: C.port,
    });
    expect(e.lookup(C.address, C.port)).toMatchObject({ state: "answered", clusterId: 2 });
    const c = rtp();
    expect(e.fromClient(T0 + 4, C.address, C.port, c, c.length)).toBe(Action.forwardWrapped);
  });

  it("remembers misses, bounds concurrent lookups, and times lookups out", () => {
    const limits = { ...DEFAULT_RESTORE_LIMITS, maxConcurrent: 2, timeoutMs: 500 };
    const { e } = engine({ restore: limits });
    const m = rtp();
    e.fromClient(T0, "198.51.100.1", 1, m, m.length);
    e.restoreResult(T0 + 1, 1, null);
    expect(e.fromClient(T0 + 2, "198.51.100.1", 1, m, m.length)).toBe(Action.drop);
    expect(e.events.length).toBe(1);
    expect(e.fromClient(T0, "198.51.100.2", 1, m, m.length)).toBe(Action.held);
    expect(e.fromClient(T0, "198.51.100.3", 1, m, m.length)).toBe(Action.held);
    expect(e.fromClient(T0, "198.51.100.4", 1, m, m.length)).toBe(Action.drop);
    expect(e.stats.drops[Drop.rateLimited]).toBe(1);
    e.tick(T0 + 600);
    expect(e.stats.lookupErrors).toBe(2);
    expect(e.fromClient(T0 + 700, "198.51.100.4", 1, m, m.length)).toBe(Action.held);
    // A valid STUN check still opens a flow for an address in the negative cache.
    const req = bindingRequest(hint(1, 4));
    expect(e.fromClient(T0 + 3, "198.51.100.1", 1, req, req.length)).toBe(Action.forwardWrapped);
  });
});
