// The transceiver behind the real relays: a werift client → a NAT stand-in (a UDP proxy whose
// outside port can change) → the POP (regional/relay, role pop) → the cluster relay → the
// transceiver's one shared socket → the echo agent. Echo in order, data channel, NAT rebinding,
// and hang-up reaching both relays as flowClose.
import { randomBytes } from "node:crypto";
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { Relay } from "../../regional/relay/shell/relay.ts";
import { configWithDefaults } from "../../regional/transceiver/config.ts";
import { startTransceiver, type Transceiver } from "../../regional/transceiver/transceiver.ts";
import { formatKeyring } from "../../shared/keys.ts";
import { ports, relayConfig, topology } from "../relay/harness.ts";
import { signedCaller } from "../support/signed-call.ts";
import { createTestClient, type TestClient } from "./helpers/client.ts";
import { type CallStatus, quietLog, randomKeyring, sleep, until } from "./helpers/harness.ts";

/** Where the client's NAT would be: one inside socket, an outside socket that can be replaced. */
class Nat {
  inside!: Socket;
  outside!: Socket;
  client: RemoteInfo | null = null;
  vipPort = 0;
  static async start(vipPort: number): Promise<Nat> {
    const n = new Nat();
    n.vipPort = vipPort;
    n.inside = await Nat.#bind();
    n.inside.on("message", (msg, from) => {
      n.client = from;
      n.outside.send(msg, n.vipPort, "127.0.0.1");
    });
    await n.rebind();
    return n;
  }
  static async #bind(): Promise<Socket> {
    const s = createSocket("udp4");
    await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
    return s;
  }
  /** A new outside port, as a NAT does when its mapping expires. */
  async rebind(): Promise<void> {
    const old = this.outside;
    const s = await Nat.#bind();
    s.on("message", (msg) => {
      if (this.client) this.inside.send(msg, this.client.port, this.client.address);
    });
    this.outside = s;
    if (old) old.close();
  }
  get outsidePort(): number {
    return this.outside.address().port;
  }
  close(): void {
    this.inside.close();
    this.outside.close();
  }
}

const metric = async (admin: string, name: string): Promise<number> => {
  const text = await (await fetch(`http://${admin}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(name));
  return line ? Number(line.split(" ").at(-1)) : 0;
};

describe("through the real POP and cluster relay", () => {
  const hintKeys = randomKeyring(1);
  const clusterSecret = new Uint8Array(randomBytes(32));
  let agent: EchoAgent;
  let t: Transceiver;
  let pop: Relay;
  let cluster: Relay;
  let nat: Nat;
  let client: TestClient;
  let callId = "";

  const { call } = signedCaller(() => t.httpUrl, clusterSecret);
  const status = async () => (await (await call("GET", `/v1/calls/${callId}`)).json()) as CallStatus;

  beforeAll(async () => {
    agent = await startEchoAgent();
    t = await startTransceiver(
      configWithDefaults({
        clusterId: 1,
        transceiverId: 1,
        hintKeys,
        callIdKeys: randomKeyring(2),
        clusterSecret,
        backendUrl: agent.url,
        pathQuietMs: 1000,
      }),
      { log: quietLog },
    );
    const p = await ports();
    const topo = topology(p);
    const timers = {
      tickMs: 20,
      halfOpenMs: 5000,
      idleMs: 40_000,
      maxLifetimeMs: 3_600_000,
      mirrorRefreshMs: 1000,
    };
    const hintText = formatKeyring(hintKeys.keys);
    cluster = await Relay.start(
      relayConfig("cluster", topo, {
        hintKeys: hintText,
        timers,
        transceivers: [[1, `${t.udpAddress.host}:${t.udpAddress.port}`]],
      }),
      { threads: false, log: quietLog },
    );
    pop = await Relay.start(relayConfig("pop", topo, { hintKeys: hintText, timers }), {
      threads: false,
      log: quietLog,
    });
    nat = await Nat.start(p.vip);
    client = createTestClient();
    // The client's only way out is the NAT: its host candidate's packets to the VIP go there.
    const offer = await client.createOffer();
    const r = await call("POST", "/v1/calls", {
      sdp: offer,
      client: { continent: "EU" },
      ingress: { vip: `127.0.0.1:${nat.inside.address().port}`, popId: 7 },
    });
    expect(r.status).toBe(201);
    const j = (await r.json()) as { callId: string; sdp: string };
    callId = j.callId;
    await client.setAnswer(j.sdp);
    await client.connected();
  }, 30_000);

  afterAll(async () => {
    await client?.close().catch(() => {});
    nat?.close();
    await pop?.stop();
    await cluster?.stop();
    await t?.stop();
    await agent?.close();
  });

  const tagged = (tag: number) =>
    client.received.filter((p) => p.payload[0] === tag).map((p) => p.payload.toString("hex"));
  async function talk(tag: number, n: number, seq0: number): Promise<string[]> {
    const sent: string[] = [];
    for (let i = 0; i < n; i++) {
      const p = Buffer.concat([Buffer.from([tag, i]), randomBytes(100)]);
      sent.push(p.toString("hex"));
      client.sendAudio(p, (seq0 + i) & 0xffff, (seq0 + i) * 960);
      await sleep(20);
    }
    return sent;
  }

  it("echoes audio in order and round-trips events; the status shows the client's outside address", async () => {
    const sent = await talk(1, 50, 0);
    await until(() => tagged(1).length >= 50, "echo");
    expect(tagged(1)).toEqual(sent);
    client.dc!.send(JSON.stringify({ type: "ping" }));
    await until(() => client.messages.some((m) => JSON.parse(m).type === "pong"), "pong");
    const st = await status();
    expect(st.clientAddress).toBe(`127.0.0.1:${nat.outsidePort}`);
    expect(st.popId).toBe(7);
  });

  it("keeps the session when the NAT maps the client to a new port", async () => {
    await nat.rebind();
    let seq = 1000;
    await until(async () => {
      await talk(2, 5, seq);
      seq += 5;
      return (await status()).clientAddress === `127.0.0.1:${nat.outsidePort}`;
    }, "moved to the new outside port");
    const sent = await talk(3, 30, 5000);
    await until(() => tagged(3).length >= 30, "echo after rebinding");
    expect(tagged(3)).toEqual(sent);
    expect((await status()).addressChanges).toBe(1);
  });

  it("hang-up sends flowClose, and both relays drop the flow at once", async () => {
    const popClosed = await metric(pop.addresses.admin, 'gr_relay_flows_closed_total{role="pop"}');
    const clusterClosed = await metric(
      cluster.addresses.admin,
      'gr_relay_flows_closed_total{role="cluster"}',
    );
    expect((await call("DELETE", `/v1/calls/${callId}`)).status).toBe(204);
    await until(
      async () => (await metric(pop.addresses.admin, 'gr_relay_flows_closed_total{role="pop"}')) > popClosed,
      "POP closed the flow",
    );
    expect(
      await metric(cluster.addresses.admin, 'gr_relay_flows_closed_total{role="cluster"}'),
    ).toBeGreaterThan(clusterClosed);
  });
});
