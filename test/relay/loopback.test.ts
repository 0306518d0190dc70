// Real sockets on loopback: client -> POP -> cluster relay -> a UDP socket standing in for the
// transceiver, and back, with every lifecycle the issue lists.
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../regional/common/log.ts";
import { RelayWorker } from "../../regional/relay/shell/worker.ts";
import { FrameType } from "../../shared/backbone/frame.ts";
import { bindingRequest, dtls, hint, rtp, txid } from "./fixtures.ts";
import { Client, FakeTransceiver, ports, relayConfig, topology, until } from "./harness.ts";

const log = createLogger({ test: "relay" }, "error");
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function path(opts: { colocated?: boolean } = {}) {
  const p = await ports();
  const topo = topology(p, opts);
  const t = await FakeTransceiver.start();
  cleanup.push(() => t.close());
  const transceivers: [number, string][] = [[1, t.address]];
  let cluster: RelayWorker | null = null;
  if (!opts.colocated) {
    cluster = await RelayWorker.start(relayConfig("cluster", topo, { transceivers }), log);
    cleanup.push(() => cluster!.close());
  }
  const pop = await RelayWorker.start(relayConfig("pop", topo, opts.colocated ? { transceivers } : {}), log);
  cleanup.push(() => pop.close());
  const client = await Client.open();
  cleanup.push(() => client.close());
  return { p, t, pop, cluster, client };
}

describe("relay on loopback", () => {
  it("carries a Binding request through POP and cluster relay; the answer reaches the client from the VIP", async () => {
    const { p, t, pop, cluster, client } = await path();
    const id = txid();
    client.send(bindingRequest(hint(1, 1), id), p.vip);
    await until(() => client.inbox.length === 1, "binding success at the client");
    const first = t.seen[0]!;
    expect(first).toMatchObject({ type: FrameType.data, popId: 7, clusterId: 1, transceiverId: 1 });
    expect([first.clientIp, first.clientPort]).toEqual(["127.0.0.1", client.port]);
    expect(first.from.port).not.toBe(p.popBackbone); // the cluster relay's own socket
    expect(client.inbox[0]!.from).toBe(`127.0.0.1:${p.vip}`);
    expect(client.inbox[0]!.msg.subarray(8, 20)).toEqual(Buffer.from(id));
    expect(pop.flows(`127.0.0.1:${client.port}`).flow).toMatchObject({ state: "answered", transceiverId: 1 });
    expect(cluster!.flows(`127.0.0.1:${client.port}`).flow).toMatchObject({ state: "answered", popId: 7 });
    // Media both ways.
    for (let i = 0; i < 20; i++) client.send(rtp(200, i), p.vip);
    await until(() => client.inbox.length === 21, "20 echoed RTP packets");
    expect(client.inbox.slice(1).every((m) => m.msg.length === 200 && m.from === `127.0.0.1:${p.vip}`)).toBe(
      true,
    );
    // Sizes around and beyond the cached send views, content intact both ways.
    for (const size of [1_400, 2_049, 9_000]) {
      const d = dtls(size);
      for (let i = 1; i < size; i++) d[i] = (i * 7 + size) & 255;
      const before = client.inbox.length;
      client.send(d, p.vip);
      await until(() => client.inbox.length === before + 1, `echo of ${size} bytes`);
      expect(client.inbox.at(-1)!.msg.equals(d)).toBe(true);
    }
    const text = pop.metricsText();
    expect(text).toMatch(/gr_relay_packets_total\{role="pop",direction="upstream",kind="rtp"\} 20/);
    expect(text).toMatch(/gr_relay_backbone_rtt_seconds_count\{pop="7",cluster="1"\} 1/);
    if (process.env.GR_RELAY_IO === "batch") {
      expect(text).toMatch(/gr_relay_io_mode\{mode="batch"\} 1/);
      // The client's datagrams were read by the addon, in batches, none cut short.
      const batches = Number(/gr_relay_io_events_total\{event="rx_batches"\} (\d+)/.exec(text)?.[1]);
      expect(batches).toBeGreaterThan(0);
      expect(text).toMatch(/gr_relay_io_events_total\{event="rx_truncated"\} 0/);
    } else expect(text).toMatch(/gr_relay_io_mode\{mode="dgram"\} 1/);
  });

  it("expires a half-open flow, then an idle one", async () => {
    const { p, t, pop, client } = await path();
    t.answer = false;
    client.send(bindingRequest(hint(1, 1)), p.vip);
    await until(() => t.seen.length === 1, "request at the transceiver");
    expect(pop.flows(`127.0.0.1:${client.port}`).flow).toMatchObject({ state: "half-open" });
    await until(() => pop.flows(`127.0.0.1:${client.port}`).flow === null, "half-open expiry");
    expect(pop.metricsText()).toMatch(/gr_relay_flows_expired_total\{role="pop",state="half_open"\} 1/);
    t.answer = true;
    client.send(bindingRequest(hint(1, 1)), p.vip);
    await until(() => client.inbox.length === 1, "answer");
    expect(pop.flows(`127.0.0.1:${client.port}`).flow).toMatchObject({ state: "answered" });
    await until(() => pop.flows(`127.0.0.1:${client.port}`).flow === null, "idle expiry");
    expect(pop.metricsText()).toMatch(/gr_relay_flows_expired_total\{role="pop",state="answered"\} 1/);
  });

  it("ends a flow at once on the transceiver's flow-close, in both relays", async () => {
    const { p, t, pop, cluster, client } = await path();
    client.send(bindingRequest(hint(1, 1)), p.vip);
    await until(() => client.inbox.length === 1, "answer");
    t.sendTo(client.port, FrameType.flowClose, new Uint8Array([1]));
    await until(() => pop.flows(`127.0.0.1:${client.port}`).flow === null, "flow closed at the POP");
    expect(cluster!.flows(`127.0.0.1:${client.port}`).flow).toBeNull();
    const before = t.seen.length;
    client.send(rtp(), p.vip);
    await until(() => /reason="no_flow"\} 1/.test(pop.metricsText()), "no_flow drop");
    expect(t.seen.length).toBe(before);
  });

  it("gives a client that changed address a new flow to the same transceiver", async () => {
    const { p, t, pop, client } = await path();
    const ufrag = hint(1, 1);
    client.send(bindingRequest(ufrag), p.vip);
    await until(() => client.inbox.length === 1, "answer");
    const moved = await Client.open("127.0.0.2");
    cleanup.push(() => moved.close());
    moved.send(bindingRequest(ufrag), p.vip);
    await until(() => moved.inbox.length === 1, "answer at the new address");
    const last = t.seen.at(-1)!;
    expect([last.clientIp, last.clientPort, last.transceiverId]).toEqual(["127.0.0.2", moved.port, 1]);
    expect(pop.flows().active).toBe(2);
  });

  it("survives a cluster relay restart: the client's next datagram rebuilds the soft state", async () => {
    const { p, t, cluster, client } = await path();
    client.send(bindingRequest(hint(1, 1)), p.vip);
    await until(() => client.inbox.length === 1, "answer");
    const oldSource = t.seen.at(-1)!.from.port;
    const cfg = cluster!.cfg;
    await cluster!.close();
    const restarted = await RelayWorker.start(cfg, log);
    cleanup.push(() => restarted.close());
    expect(restarted.flows().active).toBe(0);
    client.send(rtp(), p.vip);
    await until(() => client.inbox.length === 2, "echo through the restarted cluster relay");
    // The transceiver now answers the restarted relay's new socket.
    expect(t.seen.at(-1)!.from.port).not.toBe(oldSource);
    expect(restarted.flows(`127.0.0.1:${client.port}`).flow).toMatchObject({ popId: 7, transceiverId: 1 });
  });

  it("co-located: the POP forwards straight to the transceiver", async () => {
    const { p, t, client } = await path({ colocated: true });
    client.send(bindingRequest(hint(1, 1)), p.vip);
    await until(() => client.inbox.length === 1, "answer");
    client.send(rtp(), p.vip);
    await until(() => client.inbox.length === 2, "echo");
    expect(t.seen[0]!.from.port).not.toBe(p.clusterBackbone);
  });
});
