// The POP's ICE-TCP listener on real sockets: RFC 4571 packets in, TCP-borne backbone frames
// through the cluster relay to the transceiver, and the replies framed back onto the same
// connection; the same half-open rules as UDP; a TCP and a UDP client from one address apart.
import { afterEach, describe, expect, it } from "vitest";
import { FrameType } from "../../shared/backbone/frame.ts";
import { bindingRequest, dtls, hint, rtp, txid } from "../relay/fixtures.ts";
import { Client } from "../relay/harness.ts";
import { metric, TcpClient, type TcpPath, tcpPath, until } from "./support.ts";

let path: TcpPath | null = null;
const clients: TcpClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await path?.close();
  path = null;
});

async function connect(port: number): Promise<TcpClient> {
  const c = await TcpClient.connect(port);
  clients.push(c);
  return c;
}

describe("ICE-TCP at the POP", () => {
  it("routes a framed Binding request by its hint, marks the frames TCP-borne and frames the answer back", async () => {
    path = await tcpPath();
    const { t, pop } = path;
    expect(pop.addresses.vipTcp).toBe(`127.0.0.1:${path.vipTcp}`);
    const c = await connect(path.vipTcp);
    const id = txid();
    c.send(bindingRequest(hint(1, 1), id));
    await until(() => c.inbox.length === 1, "binding success over TCP");
    expect(c.inbox[0]!.subarray(8, 20)).toEqual(Buffer.from(id));
    const first = t.seen[0]!;
    expect(first).toMatchObject({
      type: FrameType.data,
      popId: 7,
      clusterId: 1,
      transceiverId: 1,
      tcp: true,
    });
    expect([first.clientIp, first.clientPort]).toEqual(["127.0.0.1", c.port]);
    await until(() => pop.flows(`127.0.0.1:${c.port}`).flow?.state === "answered", "flow validated");
    expect(pop.flows(`127.0.0.1:${c.port}`).flow).toMatchObject({ transceiverId: 1, transport: "tcp" });
    // Media both ways, several packets per TCP segment and sizes around the limits.
    for (let i = 0; i < 50; i++) c.send(rtp(160, i));
    await until(() => c.inbox.length === 51, "50 echoed RTP packets");
    expect(c.inbox.slice(1).every((m, i) => m.length === 160 && m.readUInt16BE(2) === i)).toBe(true);
    for (const size of [1, 1_200, 2_048]) {
      const d = dtls(size);
      for (let i = 1; i < size; i++) d[i] = (i * 13 + size) & 255;
      const before = c.inbox.length;
      c.send(d);
      await until(() => c.inbox.length === before + 1, `echo of ${size} bytes`);
      expect(c.inbox.at(-1)!.equals(d)).toBe(true);
    }
    const text = pop.metricsText();
    expect(
      metric(text, 'gr_relay_transport_packets_total{transport="tcp",direction="upstream",kind="rtp"}'),
    ).toBe(50);
    expect(metric(text, 'gr_relay_tcp_connections{transport="tcp"}')).toBe(1);
    expect(metric(text, 'gr_relay_transport_flows_validated_total{transport="tcp"}')).toBe(1);
    // The UDP engine saw none of it.
    expect(metric(text, 'gr_relay_packets_total{role="pop",direction="upstream",kind="rtp"}')).toBe(0);
  });

  it("keeps a TCP flow half-open (amplification <= 1) until the transceiver validates it", async () => {
    path = await tcpPath();
    const { t, pop } = path;
    t.validate = false;
    const c = await connect(path.vipTcp);
    c.send(bindingRequest(hint(1, 1)));
    await until(() => c.inbox.length === 1, "answer");
    // The client sent one small check; 5 large datagrams from the backbone exceed its budget.
    for (let i = 0; i < 5; i++) t.sendTo(c.port, FrameType.data, dtls(1_000));
    await until(
      () =>
        metric(
          pop.metricsText(),
          'gr_relay_transport_drops_total{transport="tcp",reason="amplification"}',
        ) === 5,
      "amplification drops",
    );
    expect(c.inbox.length).toBe(1);
  });

  it("keeps a TCP and a UDP client on the same address and port apart", async () => {
    path = await tcpPath();
    const { t } = path;
    // Same port number on both transports (separate port spaces). The UDP client's port may be
    // held on TCP (an ephemeral socket, or TIME_WAIT after an earlier test): take another client.
    let udp = path.udp;
    let c: TcpClient | undefined;
    for (let i = 0; !c; i++) {
      try {
        c = await TcpClient.connect(path.vipTcp, { localPort: udp.port });
      } catch (e) {
        if (i >= 9 || (e as NodeJS.ErrnoException).code !== "EADDRINUSE") throw e;
        udp = await Client.open();
        clients.push({ close: () => void udp.close() } as unknown as TcpClient);
      }
    }
    clients.push(c);
    expect(c.port).toBe(udp.port);
    c.send(bindingRequest(hint(1, 1)));
    udp.send(bindingRequest(hint(1, 1)), path.vipUdp);
    await until(() => c.inbox.length === 1 && udp.inbox.length === 1, "both answered");
    c.send(rtp(100, 1));
    udp.send(rtp(120, 2), path.vipUdp);
    await until(() => c.inbox.length === 2 && udp.inbox.length === 2, "both echoed");
    expect(c.inbox[1]!.length).toBe(100);
    expect(udp.inbox[1]!.msg.length).toBe(120);
    expect(t.seen.filter((f) => f.tcp).length).toBe(2);
    expect(t.seen.filter((f) => !f.tcp).length).toBe(2);
  });

  it("a closed connection ends its flow; a flow-close from the transceiver ends the connection", async () => {
    path = await tcpPath();
    const { t, pop } = path;
    const a = await connect(path.vipTcp);
    a.send(bindingRequest(hint(1, 1)));
    await until(() => a.inbox.length === 1, "answer a");
    a.close();
    await until(
      () =>
        metric(pop.metricsText(), 'gr_relay_tcp_closed_total{transport="tcp",reason="error"}') +
          metric(pop.metricsText(), 'gr_relay_tcp_closed_total{transport="tcp",reason="peer_closed"}') ===
        1,
      "connection a ended",
    );
    expect(metric(pop.metricsText(), 'gr_relay_transport_flows_active{transport="tcp"}')).toBe(0);
    const b = await connect(path.vipTcp);
    b.send(bindingRequest(hint(1, 1)));
    await until(() => b.inbox.length === 1, "answer b");
    t.sendTo(b.port, FrameType.flowClose, Uint8Array.of(1));
    await until(() => b.closed, "connection b closed by the POP");
    expect(metric(pop.metricsText(), 'gr_relay_tcp_closed_total{transport="tcp",reason="flow_ended"}')).toBe(
      1,
    );
  });
});
