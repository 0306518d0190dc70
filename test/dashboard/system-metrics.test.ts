// A real call through the real path: a werift client → a counting UDP proxy (stands where the
// client's NAT would) → the POP relay → the cluster relay → a real transceiver (werift, echo
// agent), with the dashboard aggregator scraping the relays' admin endpoints and the transceiver's
// /metrics. The proxy counts the STUN transactions that were actually answered, in each direction,
// so the RTT histograms must hold exactly that many samples; the session counters and setup stages
// move by one, in the region the edge would have named.

import { randomBytes } from "node:crypto";
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hmacSha1 } from "../../regional/common/hmac.ts";
import { createLogger } from "../../regional/common/log.ts";
import { parseTargets } from "../../regional/dashboard/config.ts";
import { LocalSource } from "../../regional/dashboard/local.ts";
import type { PanelsResponse } from "../../regional/dashboard/source.ts";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { Relay } from "../../regional/relay/shell/relay.ts";
import { configWithDefaults } from "../../regional/transceiver/config.ts";
import { startTransceiver, type Transceiver } from "../../regional/transceiver/transceiver.ts";
import { formatKeyring, type Keyring } from "../../shared/keys.ts";
import { encodeBindingRequest } from "../../shared/stun/writer.ts";
import { ports, relayConfig, topology, until } from "../relay/harness.ts";
import { signedCaller } from "../support/signed-call.ts";
import { createTestClient, type TestClient } from "../transceiver/helpers/client.ts";

const log = createLogger({ test: "system-metrics" }, "error");

/** Counts answered STUN transactions between one client and the VIP, by direction. */
class CountingProxy {
  readonly front: Socket;
  readonly back: Socket;
  client: RemoteInfo | null = null;
  readonly #upRequests = new Set<string>();
  readonly #downRequests = new Set<string>();
  /** Client requests the transceiver answered (backbone RTT samples at the POP). */
  readonly upAnswered = new Set<string>();
  /** Transceiver requests the client answered (first-hop RTT samples at the POP). */
  readonly downAnswered = new Set<string>();

  private constructor(front: Socket, back: Socket) {
    this.front = front;
    this.back = back;
  }

  static async start(vipPort: number): Promise<CountingProxy> {
    const bind = async () => {
      const s = createSocket("udp4");
      await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
      return s;
    };
    const p = new CountingProxy(await bind(), await bind());
    p.back.connect(vipPort, "127.0.0.1");
    p.front.on("message", (msg, from) => {
      p.client = from;
      const s = stun(msg);
      if (s?.type === 0x0001) p.#upRequests.add(s.tx);
      if (s?.type === 0x0101 && p.#downRequests.has(s.tx)) p.downAnswered.add(s.tx);
      p.back.send(msg);
    });
    p.back.on("message", (msg) => {
      const s = stun(msg);
      if (s?.type === 0x0001) p.#downRequests.add(s.tx);
      if (s?.type === 0x0101 && p.#upRequests.has(s.tx)) p.upAnswered.add(s.tx);
      if (p.client) p.front.send(msg, p.client.port, p.client.address);
    });
    return p;
  }

  get port(): number {
    return this.front.address().port;
  }

  /** Sends a check from the client's address (the back socket) and waits for its answer. */
  async check(req: Buffer): Promise<void> {
    const tx = stun(req)!.tx;
    this.#upRequests.add(tx);
    this.back.send(req);
    await until(() => this.upAnswered.has(tx), "an extra check answered");
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => this.front.close(() => r()));
    await new Promise<void>((r) => this.back.close(() => r()));
  }
}

const EXTRA_CHECKS = 12;

/** A Binding request as the client's ICE agent would send it on the selected pair. */
function checkFor(offer: string, answer: string): Buffer {
  const attr = (sdp: string, name: string) => new RegExp(`a=${name}:(\\S+)`).exec(sdp)![1]!;
  return Buffer.from(
    encodeBindingRequest({
      transactionId: new Uint8Array(randomBytes(12)),
      username: `${attr(answer, "ice-ufrag")}:${attr(offer, "ice-ufrag")}`,
      password: attr(answer, "ice-pwd"),
      hmacSha1,
      priority: 1853817087,
      controlling: true,
      tieBreaker: 1n,
    }),
  );
}

function stun(b: Buffer): { type: number; tx: string } | null {
  if (b.length < 20 || b[0]! > 3 || b.readUInt32BE(4) !== 0x2112a442) return null;
  return { type: b.readUInt16BE(0), tx: b.subarray(8, 20).toString("hex") };
}

function last(res: PanelsResponse, panel: string, group: Record<string, string>, ref: string): number | null {
  const p = res.panels.find((x) => x.id === panel)!;
  const s = p.series.find((x) => x.ref === ref && Object.entries(group).every(([k, v]) => x.group[k] === v));
  return s?.values.at(-1) ?? null;
}

describe("metrics of a real call through real relays and a real transceiver", () => {
  const secret = (id: number) => ({ id, secret: new Uint8Array(randomBytes(32)) });
  const hintKey = secret(1);
  const hintKeys: Keyring = { active: hintKey, keys: [hintKey] };
  const callKey = secret(2);
  const clusterSecret = new Uint8Array(randomBytes(32));
  let agent: EchoAgent;
  let t: Transceiver;
  let pop: Relay;
  let cluster: Relay;
  let proxy: CountingProxy;
  let client: TestClient;
  let source: LocalSource;
  let callId = "";

  const { call } = signedCaller(() => t.httpUrl, clusterSecret);
  const panels = async () => {
    await source.scrapeOnce();
    return source.panels({ rangeS: 600, maxPoints: 600, filters: {}, panelIds: [] });
  };

  beforeAll(async () => {
    agent = await startEchoAgent({ delayMs: 0 });
    t = await startTransceiver(
      configWithDefaults({
        clusterId: 1,
        transceiverId: 1,
        hintKeys,
        callIdKeys: { active: callKey, keys: [callKey] },
        clusterSecret,
        backendUrl: agent.url,
        statsIntervalMs: 300,
      }),
      { log },
    );
    const p = await ports();
    const topo = topology(p);
    const hintText = formatKeyring([hintKey]);
    cluster = await Relay.start(
      relayConfig("cluster", topo, {
        hintKeys: hintText,
        transceivers: [[1, `${t.udpAddress.host}:${t.udpAddress.port}`]],
      }),
      { threads: false, log },
    );
    pop = await Relay.start(relayConfig("pop", topo, { hintKeys: hintText }), { threads: false, log });
    proxy = await CountingProxy.start(p.vip);
    source = new LocalSource({
      targets: parseTargets(
        [
          `relay-pop{pop=7}=http://${pop.addresses.admin}/metrics`,
          `relay-cluster{cluster=1}=http://${cluster.addresses.admin}/metrics`,
          `transceiver{cluster=1}=${t.httpUrl}/metrics`,
        ].join(","),
      ),
      scrapeIntervalMs: 1000,
      scrapeTimeoutMs: 5000,
      windowS: 3600,
      retentionS: 600,
    });
    await source.scrapeOnce(); // baseline before the call
  }, 60_000);

  afterAll(async () => {
    await client?.close().catch(() => {});
    await source?.close();
    await proxy?.close();
    await pop?.stop();
    await cluster?.stop();
    await t?.stop();
    await agent?.close();
  });

  it("counts the call's sessions, setup stages and RTT samples exactly", async () => {
    client = createTestClient({ codecs: "opus" });
    const offer = await client.createOffer();
    const res = await call("POST", "/v1/calls", {
      sdp: offer,
      client: { region: "sa-east", continent: "SA" },
      // The proxy's address is the "VIP" the client is told to use; it forwards to the POP's VIP.
      ingress: { vip: `127.0.0.1:${proxy.port}`, popId: 7 },
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { callId: string; sdp: string };
    callId = created.callId;
    await client.setAnswer(created.sdp);
    await client.connected();

    // Setup stages, one sample each, in the client's region; one active session. The client keeps
    // talking until the first audio is counted: a burst sent at once could all arrive before the
    // transceiver's SRTP is ready, and then nothing would ever come.
    let seq = 0;
    await until(async () => {
      for (let i = 0; i < 5; i++, seq++) client.sendAudio(Buffer.alloc(40, seq), seq, seq * 960);
      return last(await panels(), "setup_first_audio", { region: "SA" }, "n") === 1;
    }, "first audio");
    let r = await panels();
    for (const id of ["setup_offer_to_answer", "setup_ice", "setup_dtls", "setup_first_audio"])
      expect(last(r, id, { region: "SA" }, "n"), id).toBe(1);
    expect(last(r, "calls_active", { cluster: "1" }, "value")).toBe(1);
    const dt = (r.panels[0]!.timestamps.at(-1)! - r.panels[0]!.timestamps[0]!) / 1000;
    expect(last(r, "calls_created", { region: "SA" }, "value")! * dt).toBeCloseTo(1, 6);

    // RTT: the transceiver measures too (ICE RTT on its stats interval) ...
    await until(
      async () => (last(await panels(), "ice_rtt", { region: "SA" }, "n") ?? 0) >= 1,
      "ICE RTT sample",
    );
    // ... and the POP has one sample per answered transaction, per direction (first hop needs a
    // consent check from the transceiver: wait for one to be answered).
    await until(() => proxy.downAnswered.size >= 1, "a consent check answered by the client");
    // Then a known number of extra checks, authenticated like the client's own (the server's
    // ufrag and password from the answer), sent one at a time from the client's address.
    const before = proxy.upAnswered.size;
    for (let i = 0; i < EXTRA_CHECKS; i++) await proxy.check(checkFor(offer, created.sdp));
    expect(proxy.upAnswered.size).toBe(before + EXTRA_CHECKS);
    await client.close(); // no more client checks or answers from here on
    await until(async () => {
      r = await panels();
      return (
        last(r, "backbone_rtt", { pop: "7", cluster: "1" }, "n") === proxy.upAnswered.size &&
        last(r, "first_hop_rtt", { pop: "7" }, "n") === proxy.downAnswered.size
      );
    }, `POP samples = answered transactions (${proxy.upAnswered.size} up, ${proxy.downAnswered.size} down)`);
    expect(proxy.upAnswered.size).toBeGreaterThanOrEqual(1);
    const p95 = last(r, "first_hop_rtt", { pop: "7" }, "p95")!;
    expect(p95).toBeGreaterThan(0);
    expect(p95).toBeLessThan(1);

    // Hang-up: one ended session by reason, the relays drop the flow at once on flowClose.
    expect((await call("DELETE", `/v1/calls/${callId}`)).status).toBe(204);
    await until(
      async () => last(await panels(), "calls_active", { cluster: "1" }, "value") === 0,
      "no session",
    );
    r = await panels();
    const span = (r.panels[0]!.timestamps.at(-1)! - r.panels[0]!.timestamps[0]!) / 1000;
    expect(last(r, "calls_ended", { reason: "hangup" }, "value")! * span).toBeCloseTo(1, 6);
    await until(async () => {
      const x = await panels();
      const s = (x.panels[0]!.timestamps.at(-1)! - x.panels[0]!.timestamps[0]!) / 1000;
      return Math.abs((last(x, "flows_closed", { role: "pop" }, "value") ?? 0) * s - 1) < 1e-6;
    }, "flow closed at the POP");
    // Only a bound for a hang: each wait above has its own, and a loaded machine is slow.
  }, 120_000);
});
