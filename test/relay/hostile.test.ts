// Every datagram from the internet is hostile. Engine-level (virtual time, hundreds of thousands of
// inputs) and socket-level suites check: no crash, bounded memory, destinations only from the
// topology and the registry, the amplification rule, and established flows flowing throughout.
import { randomBytes } from "node:crypto";
import dgram from "node:dgram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../regional/common/log.ts";
import { ClusterEngine } from "../../regional/relay/core/cluster-engine.ts";
import { PopEngine } from "../../regional/relay/core/pop-engine.ts";
import { DEFAULT_RESTORE_LIMITS } from "../../regional/relay/core/restore.ts";
import { SourceList } from "../../regional/relay/core/sources.ts";
import { Action, Drop, PeerKind } from "../../regional/relay/core/types.ts";
import { RelayWorker } from "../../regional/relay/shell/worker.ts";
import { FrameType } from "../../shared/backbone/frame.ts";
import { VIRTUAL_TIMERS } from "../support/relay-timers.ts";
import {
  bindingRequest,
  bindingSuccess,
  frame,
  hint,
  OTHER_KEYS,
  readFrame,
  rtp,
  txid,
  verifier,
} from "./fixtures.ts";
import { Client, FakeTransceiver, ports, relayConfig, topology, until } from "./harness.ts";

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const T0 = 10_000;
const LIMITS = { maxFlows: 5_000, maxFlowsPerPrefix: 64, maxHalfOpenPerPrefix: 16 };
const TIMERS = { ...VIRTUAL_TIMERS, maxLifetimeMs: 3_600_000 };

/** Wraps a POP engine and checks every output against the invariants. */
class CheckedPop {
  readonly e = new PopEngine({
    popId: 7,
    clusters: [1, 2],
    clusterSources: new Map([
      [1, new SourceList(["10.1.0.0/16"])],
      [2, new SourceList(["10.2.0.0/16"])],
    ]),
    colocatedClusterId: 0,
    transceivers: { has: () => false },
    hint: verifier(),
    limits: LIMITS,
    timers: TIMERS,
    mirror: true,
    restore: DEFAULT_RESTORE_LIMITS,
    now: T0,
  });
  /** Bytes received from / sent to each client address while its flow was half-open. */
  readonly fromClient = new Map<string, number>();
  readonly toClientHalfOpen = new Map<string, number>();
  forwardedUp = 0;

  client(now: number, address: string, port: number, buf: Uint8Array): number {
    const key = `${address}:${port}`;
    this.fromClient.set(key, (this.fromClient.get(key) ?? 0) + buf.length);
    const a = this.e.fromClient(now, address, port, buf, buf.length);
    if (a === Action.forwardWrapped) {
      const o = this.e.out;
      expect(o.peerKind).toBe(PeerKind.cluster);
      expect([1, 2]).toContain(o.peerId);
      const f = readFrame(Buffer.concat([o.header, buf]))!;
      expect([f.clientIp, f.clientPort, f.clusterId]).toEqual([address, port, o.peerId]);
      this.forwardedUp++;
    } else {
      expect([Action.drop, Action.held]).toContain(a);
    }
    this.e.events.length = 0;
    return a;
  }

  upstream(now: number, cluster: number, buf: Uint8Array): number {
    const f = readFrame(buf);
    const before = f ? this.e.lookup(f.clientIp, f.clientPort) : null;
    const a = this.e.fromUpstream(now, PeerKind.cluster, cluster, buf, buf.length);
    if (a === Action.toClient) {
      // Only to clients that have a flow, and within the budget while half-open.
      expect(before).not.toBeNull();
      const key = `${this.e.out.address}:${this.e.out.port}`;
      expect(key).toBe(`${f!.clientIp}:${f!.clientPort}`);
      if (before!.state === "half-open") {
        const sent = (this.toClientHalfOpen.get(key) ?? 0) + buf.length - 28;
        this.toClientHalfOpen.set(key, sent);
        expect(sent).toBeLessThanOrEqual(this.fromClient.get(key) ?? 0);
      }
    } else {
      expect(a).toBe(Action.drop);
    }
    return a;
  }
}

describe("hostile input, engine level", () => {
  const legit = [0, 1, 2, 3, 4].map((i) => ({
    address: `198.51.100.${i + 1}`,
    port: 50_000 + i,
    ufrag: hint(1, 4),
  }));

  function establishLegit(c: CheckedPop, now: number): void {
    for (const l of legit) {
      const id = txid();
      expect(c.client(now, l.address, l.port, bindingRequest(l.ufrag, id))).toBe(Action.forwardWrapped);
      const res = frame(
        { popId: 7, clusterId: 1, transceiverId: 4, clientIp: l.address, clientPort: l.port },
        bindingSuccess(id),
      );
      expect(c.upstream(now, 1, res)).toBe(Action.toClient);
      // The transceiver's own check to the client was answered: the flow is established.
      const v = frame(
        {
          type: FrameType.pathValidated,
          popId: 7,
          clusterId: 1,
          transceiverId: 4,
          clientIp: l.address,
          clientPort: l.port,
        },
        new Uint8Array(0),
      );
      expect(c.upstream(now, 1, v)).toBe(Action.drop);
    }
  }

  function legitStillFlows(c: CheckedPop, now: number): void {
    for (const l of legit) {
      expect(c.client(now, l.address, l.port, rtp())).toBe(Action.forwardWrapped);
      const back = frame(
        { popId: 7, clusterId: 1, transceiverId: 4, clientIp: l.address, clientPort: l.port },
        rtp(300),
      );
      expect(c.upstream(now, 1, back)).toBe(Action.toClient);
    }
  }

  it("survives random bytes, truncated/oversized STUN and forged hints; legit flows keep flowing", () => {
    const c = new CheckedPop();
    const r = rng(1234);
    let now = T0;
    establishLegit(c, now);
    const valid = bindingRequest(hint(1, 4));
    for (let round = 0; round < 40; round++) {
      now += 50;
      for (let i = 0; i < 1_000; i++) {
        const len = Math.floor(r() * 1_500);
        const b = randomBytes(len);
        if (len > 0 && r() < 0.5) b[0] = Math.floor(r() * 4); // aim at the STUN path
        if (len >= 8 && r() < 0.3) b.writeUInt32BE(0x2112a442, 4);
        c.client(
          now,
          `203.0.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}`,
          1 + Math.floor(r() * 65535),
          b,
        );
      }
      for (let cut = 0; cut < valid.length; cut += 7)
        c.client(now, "203.0.113.9", 1000 + cut, valid.subarray(0, cut));
      const oversized = Buffer.concat([valid, randomBytes(64)]);
      oversized.writeUInt16BE(oversized.length - 20 + 400, 2);
      c.client(now, "203.0.113.10", 1, oversized);
      const hugeUser = bindingRequest(`${"A".repeat(600)}`);
      c.client(now, "203.0.113.11", 1, hugeUser);
      c.client(now, "203.0.113.12", 1, Buffer.alloc(65_000, 1));
      for (let i = 0; i < 50; i++) {
        const forged = Buffer.from(valid);
        const at = 24 + Math.floor(r() * 24); // a byte inside the ufrag
        forged[at] = forged[at]! ^ (1 + Math.floor(r() * 7));
        c.client(now, `203.0.114.${i}`, 2000 + round, forged);
        c.client(now, `203.0.115.${i}`, 2000 + round, bindingRequest(hint(1, 4, OTHER_KEYS)));
        c.client(now, `203.0.116.${i}`, 2000 + round, bindingRequest(randomBytes(18).toString("base64")));
      }
      legitStillFlows(c, now);
      c.e.tick(now);
      expect(c.e.table.size).toBeLessThanOrEqual(LIMITS.maxFlows);
    }
    // Forged hints, counted by the verifier's reason (a hint under other keys: bad_mac).
    expect(c.e.stats.dropCount(Drop.badMac)).toBeGreaterThan(0);
    expect(
      c.e.stats.dropCount(Drop.unsupportedVersion) + c.e.stats.dropCount(Drop.unknownKey),
    ).toBeGreaterThan(0);
    // Nothing forged opened a flow: only the legit ones (and cut-free copies of the valid request).
    now += TIMERS.halfOpenMs + 500;
    c.e.tick(now);
    expect(c.e.table.halfOpen).toBe(0);
    expect(c.e.table.size).toBe(legit.length);
  });

  it("bounds a valid hint sprayed from 10,000 spoofed sources, and the replies to them", () => {
    const c = new CheckedPop();
    let now = T0;
    establishLegit(c, now);
    const ufrag = hint(2, 9);
    const id = txid();
    const req = bindingRequest(ufrag, id); // replayed everywhere
    let accepted = 0;
    for (let i = 0; i < 10_000; i++) {
      const address = `100.64.${i % 40}.${Math.floor(i / 40) % 250}`;
      if (c.client(now, address, 3478 + (i % 7), req) === Action.forwardWrapped) {
        accepted++;
        // The transceiver answers some replayed checks (it would, they verify): the relay may pass
        // at most the bytes the source sent; bigger floods are cut.
        const spec = {
          popId: 7,
          clusterId: 2,
          transceiverId: 9,
          clientIp: address,
          clientPort: 3478 + (i % 7),
        };
        c.upstream(now, 2, frame(spec, rtp(1_000)));
        c.upstream(now, 2, frame(spec, bindingRequest("x:y")));
      }
      if (i % 1000 === 0) legitStillFlows(c, now);
    }
    // 40 prefixes x 16 half-open each.
    expect(accepted).toBe(40 * LIMITS.maxHalfOpenPerPrefix);
    expect(c.e.table.size).toBe(legit.length + accepted);
    expect(c.e.stats.dropCount(7)).toBe(10_000 - accepted); // rate_limited
    now += TIMERS.halfOpenMs + 500;
    c.e.tick(now);
    expect(c.e.table.size).toBe(legit.length);
    legitStillFlows(c, now);
  });

  it("keeps lookups and held datagrams bounded under a spray of unknown non-STUN senders", () => {
    const c = new CheckedPop();
    const now = T0;
    establishLegit(c, now);
    for (let i = 0; i < 20_000; i++)
      c.client(now, `100.65.${i % 256}.${(i >> 8) % 256}`, 1000 + (i % 50), rtp());
    // DEFAULT_RESTORE_LIMITS: 64 concurrent lookups, 1024 held datagrams.
    expect(c.e.stats.lookups).toBe(DEFAULT_RESTORE_LIMITS.maxConcurrent);
    legitStillFlows(c, now);
    c.e.tick(now + 2_000); // lookups time out (the store never answered)
    expect(c.e.stats.lookupErrors).toBe(DEFAULT_RESTORE_LIMITS.maxConcurrent);
  });

  it("drops frames from unknown backbone peers and for clients without a flow", () => {
    const c = new CheckedPop();
    const r = rng(99);
    establishLegit(c, T0);
    const l = legit[0]!;
    const good = frame(
      { popId: 7, clusterId: 1, transceiverId: 4, clientIp: l.address, clientPort: l.port },
      rtp(),
    );
    for (let i = 0; i < 5_000; i++) {
      expect(c.e.fromBackbone(T0, `10.${3 + Math.floor(r() * 200)}.0.1`, 4000, good, good.length)).toBe(
        Action.drop,
      );
      const junk = randomBytes(Math.floor(r() * 200));
      if (junk.length > 1 && r() < 0.5) junk[0] = 0x47;
      c.upstream(T0, 1 + Math.floor(r() * 2), junk);
      const stranger = frame(
        { popId: 7, clusterId: 1, transceiverId: 4, clientIp: `192.0.2.${i % 256}`, clientPort: 1 + i },
        rtp(),
      );
      expect(c.upstream(T0, 1, stranger)).toBe(Action.drop);
    }
    expect(c.e.stats.dropCount(5)).toBe(5_000); // source_not_allowed
    legitStillFlows(c, T0);
  });

  it("cluster engine: random frames never crash it nor reach anything outside registry and topology", () => {
    const e = new ClusterEngine({
      clusterId: 1,
      popSources: new Map([[7, new SourceList(["10.7.0.0/16"])]]),
      popBackbone: new Map([[7, { address: "10.7.0.1", port: 4478 }]]),
      transceivers: { has: (id) => id === 4 },
      limits: LIMITS,
      timers: TIMERS,
      now: T0,
    });
    const r = rng(5);
    for (let i = 0; i < 50_000; i++) {
      const src = r() < 0.5 ? `10.7.${Math.floor(r() * 256)}.1` : `10.${Math.floor(r() * 256)}.0.1`;
      let buf: Buffer;
      if (r() < 0.5) {
        buf = frame(
          {
            type: 1 + Math.floor(r() * 4),
            popId: r() < 0.8 ? 7 : Math.floor(r() * 65536),
            clusterId: r() < 0.8 ? 1 : Math.floor(r() * 65536),
            transceiverId: r() < 0.7 ? 4 : Math.floor(r() * 65536),
            clientIp: `100.${Math.floor(r() * 256)}.0.1`,
            clientPort: 1 + Math.floor(r() * 65535),
          },
          randomBytes(Math.floor(r() * 300)),
        );
      } else buf = randomBytes(Math.floor(r() * 300));
      const a = e.fromBackbone(T0 + i, src, 5000, buf, buf.length);
      if (a === Action.forwardFrame)
        expect([e.out.peerKind, e.out.peerId]).toEqual([PeerKind.transceiver, 4]);
      if (a === Action.toBackbone) expect(e.out.address.startsWith("10.7.")).toBe(true);
      const b = e.fromTransceiver(T0 + i, 4, buf, buf.length);
      if (b === Action.toBackbone) expect(e.out.address.startsWith("10.7.")).toBe(true);
      if (b === Action.forwardFrame) expect(e.out.peerId).toBe(4);
    }
    expect(e.table.size).toBeLessThanOrEqual(LIMITS.maxFlows);
    expect(e.endpoints.size).toBeLessThanOrEqual(e.endpoints.capacity);
  });
});

describe("hostile input, real sockets", () => {
  const log = createLogger({ test: "relay" }, "error");
  let pop: RelayWorker;
  let cluster: RelayWorker;
  let t: FakeTransceiver;
  let vip = 0;
  beforeAll(async () => {
    const p = await ports();
    vip = p.vip;
    const topo = topology(p, { popCidrs: ["127.0.0.1/32"] });
    t = await FakeTransceiver.start();
    cluster = await RelayWorker.start(relayConfig("cluster", topo, { transceivers: [[1, t.address]] }), log);
    pop = await RelayWorker.start(
      relayConfig("pop", topo, {
        limits: { maxFlows: 4096, maxFlowsPerPrefix: 64, maxHalfOpenPerPrefix: 8 },
      }),
      log,
    );
  });
  afterAll(async () => {
    await pop.close();
    await cluster.close();
    await t.close();
  });

  it("sprays garbage and a replayed hint from 2,000 loopback sources; the legit call never stops", async () => {
    const legit = await Client.open();
    legit.send(bindingRequest(hint(1, 1)), vip);
    await until(() => legit.inbox.length === 1, "legit answered");
    const req = bindingRequest(hint(1, 1));
    const sent = new Map<string, number>();
    const got = new Map<string, number>();
    const socks: dgram.Socket[] = [];
    for (let i = 0; i < 2_000; i++) {
      const s = dgram.createSocket("udp4");
      const host = `127.${1 + (i % 20)}.${Math.floor(i / 20)}.${1 + (i % 200)}`;
      await new Promise<void>((r) => s.bind(0, host, () => r()));
      const key = `${host}:${s.address().port}`;
      s.on("message", (m) => got.set(key, (got.get(key) ?? 0) + m.length));
      const junk = randomBytes(1 + (i % 900));
      s.send(junk, vip, "127.0.0.1");
      s.send(req, vip, "127.0.0.1");
      sent.set(key, junk.length + req.length);
      socks.push(s);
      if (i % 200 === 0) {
        const before = legit.inbox.length;
        legit.send(rtp(), vip);
        await until(() => legit.inbox.length === before + 1, "legit echo during the spray");
      }
    }
    // A last legit round trip through the same POP and stand-in: answers to the spray sent before it
    // are in by the time its echo is.
    const echoed = legit.inbox.length;
    legit.send(rtp(), vip);
    await until(() => legit.inbox.length === echoed + 1, "a legit echo behind the spray");
    // Some sources got answers (the stand-in answers replayed checks that opened a flow) ...
    await until(() => got.size > 0, "answers to replayed checks");
    // ... never more bytes than each sent.
    for (const [key, bytes] of got) expect(bytes).toBeLessThanOrEqual(sent.get(key)!);
    // Frames from a backbone peer outside the topology's networks.
    const rogue = dgram.createSocket("udp4");
    await new Promise<void>((r) => rogue.bind(0, "127.0.0.9", () => r()));
    const f = frame(
      { popId: 7, clusterId: 1, transceiverId: 1, clientIp: "127.0.0.1", clientPort: legit.port },
      rtp(),
    );
    rogue.send(f, cluster.addresses.backbone.split(":")[1] as unknown as number, "127.0.0.1");
    await until(() => /reason="source_not_allowed"\} 1/.test(cluster.metricsText()), "rogue frame dropped");
    rogue.close();
    for (const s of socks) s.close();
    expect(pop.engine.table.size).toBeLessThanOrEqual(4096);
    expect(readFrame(f)!.type).toBe(FrameType.data);
    const before = legit.inbox.length;
    legit.send(rtp(), vip);
    await until(() => legit.inbox.length === before + 1, "legit echo after the spray");
    await legit.close();
  });
});
