// The link emulator process on real sockets (loopback), 10,000 datagrams at 1,000/s through a
// 20 ms up + 10 ms down link with 10 % seeded loss up. What must hold on any host: it delays by the
// target within 5 ms at the median (its early-wake window is at most 4 ms, and lateness on a busy
// host is a millisecond or two), which a lost direction (10 or 20 ms short) or a doubled delay
// (30 ms long) is not; it loses the target share. How close to the target it lands (±1 ms at the median on a quiet host) is a
// timing goal, measured by `npm run bench:linkem`, not asserted here: the test suite runs beside
// 180 other files on two cores, and the median then drifts by a millisecond or more.
import { describe, expect, it } from "vitest";
import { probeLinkem } from "../../scripts/world/linkem/probe.ts";
import { freeUdpPort } from "../support/ports.ts";

const UP_MS = 20;
const DOWN_MS = 10;
const LOSS_PCT = 10;
const PACKETS = 10_000;

describe("link emulator on real sockets", () => {
  it("adds the target delay (within 5 ms, not some other delay) and loses the target share within ±10 % at 1,000 pps", async () => {
    const opts = { upMs: UP_MS, downMs: DOWN_MS, lossPct: LOSS_PCT, packets: PACKETS, pps: 1_000, seed: 9 };
    const r = await probeLinkem(opts, await freeUdpPort());
    console.log(JSON.stringify(r));
    // About 950/s with the half-second tail; a floor, since the last timers fire late under load.
    expect(r.rate).toBeGreaterThan(800);
    expect(r.directSamples).toBeGreaterThan(PACKETS / 10 - 10);
    expect(r.addedMs).toBeGreaterThanOrEqual(r.targetMs - 5);
    expect(r.addedMs).toBeLessThanOrEqual(r.targetMs + 5);
    expect(r.lossPct).toBeGreaterThanOrEqual(LOSS_PCT * 0.9);
    expect(r.lossPct).toBeLessThanOrEqual(LOSS_PCT * 1.1);
  }, 60_000);
});
