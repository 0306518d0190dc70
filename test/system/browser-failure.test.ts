// Chromium on the demo page, through the whole local system: a hangup from the server side reaches
// the browser at once (DTLS close_notify: its DTLS transport is `closed` within a round trip; it
// does not wait for consent to fail. Chrome then reports connectionState `disconnected`), and the
// demo page survives kill -9 of its transceiver: the API says the call ended, the page resumes it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callStatus, type E2E, openDemo, startE2E, waitDemo } from "../e2e/harness.ts";

const FRA = { latitude: "50.1", longitude: "8.7", country: "DE", continent: "EU", colo: "FRA" };

describe("a browser when the server ends the call", () => {
  let e: E2E;
  beforeAll(async () => {
    e = await startE2E(false);
  }, 120_000);
  afterAll(async () => {
    await e?.close();
  });

  it("a server-side hangup closes the browser's connection at once (close_notify)", async () => {
    const page = await openDemo(e, FRA);
    // Keep a handle on the page's peer connections, then load the page again with it.
    await page.addInitScript(() => {
      const Native = RTCPeerConnection;
      const all: RTCPeerConnection[] = [];
      (window as unknown as { grPcs: RTCPeerConnection[] }).grPcs = all;
      window.RTCPeerConnection = class extends Native {
        constructor(c?: RTCConfiguration) {
          super(c);
          all.push(this);
        }
      };
    });
    await page.reload();
    await page.fill("#key", e.system.apiKey);
    await page.click("#start");
    const s = await waitDemo(page, (x) => x.state === "connected" && x.callId !== null, "connected", 30_000);
    const del = await fetch(`${e.system.edgeUrl}/v1/realtime/calls/${s.callId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${e.system.apiKey}` },
    });
    expect(del.status).toBe(204);
    // The alert closes the browser's DTLS transport within a round trip; without it Chrome
    // would only see ICE go quiet (disconnected after seconds, failed after consent, ~30 s).
    const t0 = Date.now();
    let dtls = "";
    while (Date.now() - t0 < 3_000) {
      dtls = await page.evaluate<string>("String(window.grPcs.at(-1)?.getSenders()[0]?.transport?.state)");
      if (dtls === "closed") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(dtls).toBe("closed");
    console.log(JSON.stringify({ measured: "browser DTLS closed after server hangup", ms: Date.now() - t0 }));
    await page.close();
  }, 90_000);

  it("kill -9 of the call's transceiver: GET answers ended, the demo page resumes and plays audio again", async () => {
    const page = await openDemo(e, FRA);
    await page.click("#start");
    const s = await waitDemo(page, (x) => x.state === "connected" && x.callId !== null, "connected", 30_000);
    const proc = e.system.supervisor.running.find((r) => r.name === "fra-local-transceiver-1")!;
    const killedAt = Date.now();
    process.kill(proc.child.pid!, "SIGKILL");
    let st = await callStatus(e, s.callId!);
    for (let i = 0; i < 50 && st.body.state !== "ended"; i++) {
      expect(st.status).not.toBe(500);
      await new Promise((r) => setTimeout(r, 100));
      st = await callStatus(e, s.callId!);
    }
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({ state: "ended", endReason: "transceiver_failed" });
    // The page notices its audio stopped, asks, and resumes the call (new offer on its URL) as
    // soon as a transceiver can take it (here: the one killed, restarted by the supervisor).
    const back = await waitDemo(
      page,
      (x) => x.resumes >= 1 && x.state === "connected",
      "the page resumed",
      30_000,
    );
    expect(back.callId).toBe(s.callId);
    const before = back.packetsReceived;
    const playing = await waitDemo(
      page,
      (x) => x.packetsReceived > before + 50 && x.audioEnergy > 0,
      "audio again",
      20_000,
    );
    expect(playing.callId).toBe(s.callId);
    // Includes the supervisor's restart of the only transceiver of the cluster (about a second).
    console.log(
      JSON.stringify({ measured: "demo page: kill -9 to audio again (resumed)", ms: Date.now() - killedAt }),
    );
    expect((await callStatus(e, s.callId!)).body).toMatchObject({ callId: s.callId, state: "connected" });
    await page.click("#hangup");
    await page.close();
  }, 90_000);
});
