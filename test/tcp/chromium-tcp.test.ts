// Chromium behind a network that drops UDP: inside the test's network namespace nftables drops every
// UDP datagram to the host, so the only way to the VIP is the answer's passive ICE-TCP candidate.
// The call connects over TCP through the POP, audio echoes, the data channel works; then, with the
// rule lifted, a control call selects UDP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2E, openDemo, startE2E, waitDemo } from "../e2e/harness.ts";
import { callStatus } from "../support/namespaced-system.ts";
import { blockUdp, type UdpBlock } from "./nft.ts";
import { metric } from "./support.ts";

async function popMetrics(e: E2E): Promise<string> {
  const r = await fetch(`http://${e.system.plan.host}:${e.system.plan.popAdminPort}/metrics`);
  return r.text();
}

async function ping(page: Awaited<ReturnType<typeof openDemo>>, id: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    const sent = await page.evaluate(
      (x) => (window as unknown as { grDemoSend(o: unknown): boolean }).grDemoSend({ type: "ping", id: x }),
      id,
    );
    if (sent) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

describe("Chromium where UDP is blocked", () => {
  let e: E2E;
  let block: UdpBlock;
  beforeAll(async () => {
    e = await startE2E(false);
    block = blockUdp(e.ns.name, e.ns.hostIp);
  }, 120_000);
  afterAll(async () => {
    await e?.close();
  });

  it("connects over ICE-TCP to the VIP: audio comes back and the data channel works", async () => {
    const tcpVip = `${e.system.plan.host}:${e.system.plan.vipTcpPort}`;
    const page = await openDemo(e, { latitude: "50.1", longitude: "8.7", country: "DE", continent: "EU" });
    await page.click("#start");
    const connected = await waitDemo(
      page,
      (s) => s.state === "connected" || s.state === "failed",
      "connection",
      40_000,
    );
    expect(connected.error).toBeNull();
    expect(connected.state).toBe("connected");
    // The selected pair's remote candidate is the VIP's TCP port (the UDP one is another port).
    const paired = await waitDemo(page, (s) => s.pop !== null, "selected pair");
    expect(paired.pop).toBe(tcpVip);
    expect(block.dropped()).toBeGreaterThan(0);

    const before = paired.packetsReceived;
    const flowing = await waitDemo(
      page,
      (s) => s.packetsReceived > before + 100 && s.audioEnergy > 0.005,
      "echoed audio over TCP",
    );
    expect(flowing.packetsSent).toBeGreaterThan(100);
    expect(await ping(page, "tcp-1")).toBe(true);
    await waitDemo(page, (s) => s.events.some((x) => x.includes('"pong"')), "pong over TCP");

    // The POP carried it on its TCP engine; the transceiver saw the browser's own address.
    const text = await popMetrics(e);
    expect(metric(text, 'gr_relay_tcp_connections{transport="tcp"}')).toBeGreaterThanOrEqual(1);
    expect(
      metric(text, 'gr_relay_transport_packets_total{transport="tcp",direction="upstream",kind="rtp"}'),
    ).toBeGreaterThan(100);
    const st = await callStatus(e, flowing.callId!);
    expect(String(st.body.clientAddress).startsWith(`${e.ns.nsIp}:`)).toBe(true);

    await page.click("#hangup");
    await waitDemo(page, (s) => s.state === "closed", "closed");
    await page.close();
  }, 90_000);

  it("control: with UDP open the same browser selects UDP", async () => {
    block.lift();
    const page = await openDemo(e, { latitude: "50.1", longitude: "8.7", country: "DE", continent: "EU" });
    await page.click("#start");
    const paired = await waitDemo(
      page,
      (s) => s.state === "connected" && s.pop !== null,
      "connected",
      40_000,
    );
    expect(paired.pop).toBe(e.system.topology.globalVip);
    await waitDemo(page, (s) => s.packetsReceived > 50, "echoed audio over UDP");
    await page.click("#hangup");
    await page.close();
  }, 90_000);
});
