// Firefox ESR (nICEr) behind a network that drops UDP: nftables inside the namespace drops every
// UDP datagram to the host, so Gecko must use the answer's passive ICE-TCP candidate. The demo page
// drives itself and reports to the test; the selected pair's remote is the VIP's TCP port, audio
// echoes and the data channel answers a ping. A control call with UDP open selects UDP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchFirefox, type Report, type ReportServer, startReportServer } from "../interop/firefox.ts";
import { type NamespacedSystem, startNamespacedSystem } from "../support/namespaced-system.ts";
import { waitFor } from "../support/wait.ts";
import { blockUdp, type UdpBlock } from "./nft.ts";

describe("Firefox ESR where UDP is blocked", () => {
  let i: NamespacedSystem;
  let rs: ReportServer;
  let block: UdpBlock;
  beforeAll(async () => {
    i = await startNamespacedSystem();
    rs = await startReportServer(i.ns.hostIp);
    block = blockUdp(i.ns.name, i.ns.hostIp);
  }, 120_000);
  afterAll(async () => {
    await rs?.close();
    await i?.close();
  });

  async function call(expectPop: string, withPing: boolean): Promise<void> {
    const q = new URLSearchParams({ autostart: "1", source: "mic", key: i.system.apiKey, report: rs.url });
    const ff = launchFirefox({
      netns: i.ns.name,
      url: `${i.system.edgeUrl}/?${q}`,
      secureHost: i.ns.hostIp,
      maxMs: 60_000,
    });
    const report = (pred: (r: Report) => boolean, what: string, timeoutMs = 25_000): Promise<Report> =>
      waitFor(
        async () => rs.latest,
        (r) => {
          if (r?.state === "failed") throw new Error(`the page failed: ${r.error}`);
          return r !== null && pred(r);
        },
        what,
        timeoutMs,
      ) as Promise<Report>;
    try {
      const connected = await report((r) => r.state === "connected" && r.pop !== null, "connected", 40_000);
      expect(connected.userAgent).toMatch(/Firefox\/\d+/);
      expect(connected.pop).toBe(expectPop);
      const a = await report((r) => r.packetsReceived > 50, "echoed audio");
      await report((r) => r.packetsReceived > a.packetsReceived + 100, "echoed audio still flowing");
      if (withPing) {
        await report((r) => r.dataChannel === "open", "data channel open");
        rs.command({ send: { type: "ping", id: "firefox-tcp" } });
        await report((r) => r.events.some((e) => e.includes('"pong"')), "pong");
      }
      rs.command({ hangup: true });
      await report((r) => r.state === "closed", "closed");
    } catch (e) {
      (e as Error).message +=
        `\n--- last report ---\n${JSON.stringify(rs.latest)}\n--- firefox ---\n${ff.lines.slice(-40).join("\n")}` +
        `\n--- system ---\n${i.logs.slice(-30).join("\n")}`;
      throw e;
    } finally {
      await ff.close();
      rs.latest = null;
    }
  }

  it("connects over ICE-TCP to the VIP: audio comes back and the data channel works", async () => {
    await call(`${i.system.plan.host}:${i.system.plan.vipTcpPort}`, true);
    expect(block.dropped()).toBeGreaterThan(0);
  }, 90_000);

  it("control: with UDP open Firefox selects UDP", async () => {
    block.lift();
    await call(i.system.topology.globalVip, false);
  }, 90_000);
});
