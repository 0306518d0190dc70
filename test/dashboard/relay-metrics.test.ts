// Generated traffic through real relays (a POP and a cluster relay on loopback, worker threads and
// the admin /metrics endpoint as the program runs them) moves the counters and histograms by the
// right amounts, as the dashboard aggregator sees them: N client checks give N backbone RTT samples,
// M transceiver consent checks answered by the client give M first-hop samples, in the POP's and
// the cluster's labels; packets, drops and flows by the exact counts sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../regional/common/log.ts";
import { parseTargets } from "../../regional/dashboard/config.ts";
import type { PanelData } from "../../regional/dashboard/core/evaluate.ts";
import { LocalSource } from "../../regional/dashboard/local.ts";
import type { PanelsResponse } from "../../regional/dashboard/source.ts";
import { Relay } from "../../regional/relay/shell/relay.ts";
import { FrameType } from "../../shared/backbone/frame.ts";
import { bindingRequest, bindingSuccess, hint, OTHER_KEYS, rtp, txid } from "../relay/fixtures.ts";
import { Client, FakeTransceiver, ports, relayConfig, topology, until } from "../relay/harness.ts";

const log = createLogger({ test: "relay-metrics" }, "error");

function value(
  res: PanelsResponse,
  panel: string,
  group: Record<string, string>,
  ref: string,
): number | null {
  const p = res.panels.find((x: PanelData) => x.id === panel)!;
  const s = p.series.find((x) => x.ref === ref && Object.entries(group).every(([k, v]) => x.group[k] === v));
  return s?.values.at(-1) ?? null;
}

/** increase over the window = rate × the window's length (the last two snapshots here). */
function increase(res: PanelsResponse, panel: string, group: Record<string, string>): number {
  const p = res.panels.find((x) => x.id === panel)!;
  const dt = (p.timestamps.at(-1)! - p.timestamps.at(-2)!) / 1000;
  return (value(res, panel, group, "value") ?? Number.NaN) * dt;
}

describe("relay metrics under generated traffic", () => {
  const N = 25; // client checks, one at a time (each its own STUN transaction)
  const M = 10; // transceiver consent checks answered by the client
  const K = 40; // RTP packets, echoed by the transceiver
  const B = 6; // checks with a hint from another keyring
  let pop: Relay;
  let cluster: Relay;
  let t: FakeTransceiver;
  let client: Client;
  let stranger: Client;
  let source: LocalSource;
  let vip: number;

  beforeAll(async () => {
    const p = await ports();
    vip = p.vip;
    const topo = topology(p);
    t = await FakeTransceiver.start();
    cluster = await Relay.start(relayConfig("cluster", topo, { transceivers: [[1, t.address]] }), {
      threads: true,
      log,
    });
    pop = await Relay.start(relayConfig("pop", topo, { workers: 2 }), { threads: true, log });
    client = await Client.open();
    stranger = await Client.open();
    source = new LocalSource({
      targets: parseTargets(
        `relay-pop{pop=7}=http://${pop.addresses.admin}/metrics,relay-cluster{cluster=1}=http://${cluster.addresses.admin}/metrics`,
      ),
      scrapeIntervalMs: 1000,
      scrapeTimeoutMs: 5000,
      windowS: 3600,
      retentionS: 600,
    });
    await source.scrapeOnce(); // baseline: relays up, no traffic yet
  }, 30_000);

  afterAll(async () => {
    await source?.close();
    await client?.close();
    await stranger?.close();
    await pop?.stop();
    await cluster?.stop();
    await t?.close();
  });

  it("counts exactly the checks, packets and drops that were sent", async () => {
    const ufrag = hint(1, 1);
    for (let i = 0; i < N; i++) {
      client.send(bindingRequest(ufrag, txid()), vip);
      await until(() => client.inbox.length === i + 1, `answer ${i + 1} at the client`);
    }
    // The transceiver's consent checks go down to the client, whose answers come back up.
    for (let i = 0; i < M; i++) {
      const id = txid();
      t.sendTo(client.port, FrameType.data, bindingRequest("cli1", id));
      await until(() => client.inbox.length === N + i + 1, `consent check ${i + 1} at the client`);
      const before = t.seen.length;
      client.send(bindingSuccess(id), vip);
      await until(() => t.seen.length === before + 1, `consent answer ${i + 1} at the transceiver`);
    }
    for (let i = 0; i < K; i++) client.send(rtp(160, i), vip);
    await until(() => client.inbox.length === N + M + K, "echoed RTP");
    for (let i = 0; i < B; i++) stranger.send(bindingRequest(hint(1, 1, OTHER_KEYS)), vip);
    await until(
      async () =>
        /reason="bad_mac"\} 6/.test(await (await fetch(`http://${pop.addresses.admin}/metrics`)).text()),
      "bad_mac drops counted (a hint under keys the POP does not hold)",
    );
    expect(stranger.inbox).toEqual([]);

    await source.scrapeOnce();
    const res = await source.panels({ rangeS: 600, maxPoints: 100, filters: {}, panelIds: [] });
    expect(source.store.targetUp("relay-pop", source.store.end() - 1)).toBe(true);

    // One RTT sample per matched transaction, in the POP's and the flow's cluster labels.
    expect(value(res, "backbone_rtt", { pop: "7", cluster: "1" }, "n")).toBe(N);
    expect(value(res, "first_hop_rtt", { pop: "7" }, "n")).toBe(M);
    for (const ref of ["p50", "p95", "p99"]) {
      const v = value(res, "first_hop_rtt", { pop: "7" }, ref)!;
      expect(v).toBeGreaterThan(0);
      expect(v).toBeLessThan(1); // loopback: well under a second even on a busy machine
    }
    // Datagrams through the POP: N + M STUN and K RTP each way; the stranger's never count.
    expect(increase(res, "relay_packets", { role: "pop", direction: "upstream" })).toBeCloseTo(N + M + K, 6);
    expect(increase(res, "relay_packets", { role: "pop", direction: "downstream" })).toBeCloseTo(
      N + M + K,
      6,
    );
    expect(increase(res, "relay_packets", { role: "cluster", direction: "upstream" })).toBeCloseTo(
      N + M + K,
      6,
    );
    expect(increase(res, "relay_drops", { reason: "bad_mac" })).toBeCloseTo(B, 6);
    expect(increase(res, "flows_created", { role: "pop" })).toBeCloseTo(1, 6);
    expect(value(res, "flows_active", { role: "pop" }, "value")).toBe(1);
    expect(value(res, "flows_active", { role: "cluster" }, "value")).toBe(1);
    expect(value(res, "flows_half_open", { role: "pop" }, "value")).toBe(0);

    // The scrape's target labels make the POP filter work on series the relay does not label.
    const only7 = await source.panels({
      rangeS: 600,
      maxPoints: 100,
      filters: { pop: ["7"] },
      panelIds: ["flows_active"],
    });
    expect(value(only7, "flows_active", { role: "pop" }, "value")).toBe(1);
    expect(value(only7, "flows_active", { role: "cluster" }, "value")).toBeNull();
  });
});
