// A real call (werift client, transceiver, cluster relay, POP, echo agent) whose network moves
// from UDP to ICE-TCP and back: the transceiver validates each new path (its own check, over TCP
// too), moves the session, and the audio keeps coming back on every transport.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { Relay } from "../../regional/relay/shell/relay.ts";
import { configWithDefaults } from "../../regional/transceiver/config.ts";
import { startTransceiver, type Transceiver } from "../../regional/transceiver/transceiver.ts";
import { formatKeyring } from "../../shared/keys.ts";
import { ports, relayConfig, topology } from "../relay/harness.ts";
import { Talker } from "../security/support/call-system.ts";
import { freeTcpPort } from "../support/ports.ts";
import { signedCaller } from "../support/signed-call.ts";
import { createTestClient, type TestClient } from "../transceiver/helpers/client.ts";
import { type CallStatus, quietLog, randomKeyring, until } from "../transceiver/helpers/harness.ts";
import { Switch } from "./switch.ts";

let agent: EchoAgent;
let t: Transceiver;
let pop: Relay;
let cluster: Relay;
let sw: Switch;
let client: TestClient;
let status: () => Promise<CallStatus>;

beforeAll(async () => {
  const hintKeys = randomKeyring(1);
  const clusterSecret = new Uint8Array(randomBytes(32));
  agent = await startEchoAgent();
  t = await startTransceiver(
    configWithDefaults({
      clusterId: 1,
      transceiverId: 1,
      hintKeys,
      callIdKeys: randomKeyring(2),
      clusterSecret,
      backendUrl: agent.url,
    }),
    { log: quietLog },
  );
  const p = await ports();
  const topo = topology(p);
  const vipTcp = await freeTcpPort();
  topo.pops[0]!.vipTcpPort = vipTcp;
  const timers = {
    tickMs: 20,
    halfOpenMs: 3000,
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
  sw = await Switch.start(p.vip, vipTcp);
  client = createTestClient();
  const { call } = signedCaller(() => t.httpUrl, clusterSecret);
  const r = await call("POST", "/v1/calls", {
    sdp: await client.createOffer(),
    client: { continent: "EU" },
    ingress: { vip: `127.0.0.1:${sw.insidePort}`, popId: 7 },
  });
  if (r.status !== 201) throw new Error(`POST /v1/calls: ${r.status} ${await r.text()}`);
  const j = (await r.json()) as { callId: string; sdp: string };
  await client.setAnswer(j.sdp);
  await client.connected();
  status = async () => (await (await call("GET", `/v1/calls/${j.callId}`)).json()) as CallStatus;
}, 60_000);

afterAll(async () => {
  await client?.close().catch(() => {});
  sw?.close();
  await pop?.stop();
  await cluster?.stop();
  await t?.stop();
  await agent?.close();
});

let talker: Talker | undefined;

/** Moves the network, waits for the session's path to follow, then talks for a while. */
async function phase(move: () => Promise<void>, tag: number): Promise<{ sent: number; echoed: number }> {
  await move();
  const port = sw.outsidePort;
  // The next consent check from the new address opens it; the transceiver validates and moves.
  await until(
    async () => (await status()).clientAddress === `127.0.0.1:${port}`,
    `session on port ${port}`,
    30_000,
  );
  // One talker for the whole call: its RTP numbering goes on across phases, as a client's does
  // (starting again at 0 would reuse SRTP indices, which the replay window drops).
  talker ??= new Talker(client);
  talker.start(tag);
  await new Promise((r) => setTimeout(r, 2_000));
  return talker.stop();
}

describe("a call whose network moves between UDP and ICE-TCP", () => {
  it("follows UDP -> TCP -> UDP and keeps its audio on each", async () => {
    const udp1 = await phase(async () => {}, 1);
    const tcp = await phase(() => sw.toTcp(), 2);
    const tcpPackets = await (await fetch(`http://${pop.addresses.admin}/metrics`)).text();
    const udp2 = await phase(() => sw.toUdp(), 3);
    for (const [name, r] of [
      ["udp", udp1],
      ["tcp", tcp],
      ["udp again", udp2],
    ] as const) {
      // 100 at 50 packets/s; setInterval fires late on a loaded machine, so only a floor.
      expect(r.sent, name).toBeGreaterThan(25);
      expect(r.echoed / r.sent, name).toBeGreaterThanOrEqual(0.99);
    }
    // The TCP phase went through the POP's TCP engine, validated by the transceiver's own check.
    expect(tcpPackets).toMatch(/gr_relay_transport_flows_validated_total\{transport="tcp"\} 1/);
    expect(tcpPackets).toMatch(
      /gr_relay_transport_packets_total\{transport="tcp",direction="downstream",kind="rtp"\} [1-9]/,
    );
    // First-hop RTT over TCP has its own series (the transceiver's checks answered over TCP).
    expect(tcpPackets).toMatch(
      /gr_relay_transport_first_hop_rtt_seconds_count\{transport="tcp",pop="7",cluster="1"\} [1-9]/,
    );
    expect((await status()).state).toBe("connected");
  }, 120_000);
});
