// With Redis on, a POP killed mid-call and started again restores the browser's flow from Redis on
// the first media datagram: media resumes within a second, before any STUN check could help.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2E, openDemo, startE2E, waitDemo } from "./harness.ts";

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(url)).text();
  let sum = 0;
  for (const line of text.split("\n")) if (line.startsWith(name)) sum += Number(line.split(" ").pop());
  return sum;
}

describe("browser end to end with Redis", () => {
  let e: E2E;
  beforeAll(async () => {
    e = await startE2E(true);
  }, 120_000);
  afterAll(async () => {
    await e?.close();
  });

  it("resumes media within one second of a POP restart, restored from Redis", async () => {
    const page = await openDemo(e, { latitude: "50.1", longitude: "8.7", country: "DE", continent: "EU" });
    await page.click("#start");
    await waitDemo(page, (s) => s.state === "connected" && s.packetsReceived > 100, "audio", 30_000);
    // Let the flow's mirror write reach Redis (it is refreshed coarsely, never per packet).
    await new Promise((r) => setTimeout(r, 1500));

    await e.system.kill("pop");
    const down = (await waitDemo(page, () => true, "state")).packetsReceived;
    await new Promise((r) => setTimeout(r, 300));
    await e.system.startAgain("pop");
    const readyAt = Date.now();
    const base = (await waitDemo(page, () => true, "state")).packetsReceived;
    // 25 packets = 0.5 s of 20 ms audio must arrive within one second of the POP being ready.
    const resumed = await waitDemo(page, (s) => s.packetsReceived > base + 25, "media after restart", 15_000);
    const resumedMs = Date.now() - readyAt;
    expect(resumed.packetsReceived).toBeGreaterThan(down);
    expect(resumedMs).toBeLessThan(1000);

    const admin = `http://${e.system.plan.host}:${e.system.plan.popAdminPort}/metrics`;
    expect(await metric(admin, "gr_relay_flows_restored_total")).toBeGreaterThanOrEqual(1);
    await page.click("#hangup");
    await page.close();
  }, 90_000);
});
