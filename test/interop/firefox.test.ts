// Firefox ESR (Gecko's WebRTC stack: nICEr, NSS DTLS, usrsctp) runs the demo page headless inside
// a private network namespace and calls through the whole local system. The page drives itself
// (?autostart=1) and reports window.grDemo to the test's HTTP server, whose replies send the
// data-channel ping and the hang-up.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callStatus, type NamespacedSystem, startNamespacedSystem } from "../support/namespaced-system.ts";
import { waitFor } from "../support/wait.ts";
import { launchFirefox, type Report, type ReportServer, startReportServer } from "./firefox.ts";

describe("Firefox ESR through the local system (demo page, memory only)", () => {
  let i: NamespacedSystem;
  let rs: ReportServer;
  beforeAll(async () => {
    i = await startNamespacedSystem();
    rs = await startReportServer(i.ns.hostIp);
  }, 120_000);
  afterAll(async () => {
    await rs?.close();
    await i?.close();
  });

  it("connects through the VIP, echoes audio, answers a data-channel ping, and hangs up", async () => {
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
      expect(connected.error).toBeNull();
      // The selected pair's remote candidate is the Global Relay VIP, nothing else.
      expect(connected.pop).toBe(i.system.topology.globalVip);

      // Fake-microphone audio goes out and the echo comes back: inbound RTP keeps growing.
      const a = await report((r) => r.packetsReceived > 50, "echoed audio");
      const b = await report(
        (r) => r.packetsReceived > a.packetsReceived + 100,
        "echoed audio still flowing",
      );
      expect(b.packetsSent).toBeGreaterThan(100);

      // The transceiver saw the browser's own address and fed its audio to the backend.
      const callId = b.callId!;
      const st = await callStatus(i, callId);
      expect(st.status).toBe(200);
      expect(st.body.state).toBe("connected");
      expect(String(st.body.clientAddress).startsWith(`${i.ns.nsIp}:`)).toBe(true);
      expect((st.body.backend as { framesToBackend: number }).framesToBackend).toBeGreaterThan(50);

      // A data-channel event round-trips on oai-events (SCTP over DTLS between Gecko and werift).
      await report((r) => r.dataChannel === "open", "data channel open");
      rs.command({ send: { type: "ping", id: "firefox-1" } });
      const ponged = await report((r) => r.events.some((e) => e.includes('"pong"')), "pong");
      expect(ponged.events.filter((e) => (JSON.parse(e) as { type?: string }).type === "pong")).toHaveLength(
        1,
      );

      // Hang-up: the page DELETEs the call and closes; the session ends.
      rs.command({ hangup: true });
      await report((r) => r.state === "closed", "closed");
      const ended = await waitFor(
        () => callStatus(i, callId),
        (r) => r.status === 404 || r.body.state === "ended",
        "the session ended",
      );
      if (ended.status === 200) expect(ended.body.endReason).toBe("hangup");
    } catch (e) {
      (e as Error).message +=
        `\n--- last report ---\n${JSON.stringify(rs.latest)}\n--- firefox ---\n${ff.lines.slice(-40).join("\n")}` +
        `\n--- system ---\n${i.logs.slice(-30).join("\n")}`;
      throw e;
    } finally {
      await ff.close();
    }
  }, 90_000);
});
