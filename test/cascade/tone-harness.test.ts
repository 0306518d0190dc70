// The cascade browser harness proven on today's single-client call: two Chromium pages in two
// cities land on two different clusters; the page sending 440 Hz hears its own echo (440 present,
// 880 absent) and the page sending 880 Hz the reverse. The cascade test
// (test/cascade/browser.test.ts) then only changes what page B does: join A's call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callStatus } from "../support/namespaced-system.ts";
import { ABSENT_SHARE, HEARD, TONE_A_HZ, TONE_B_HZ } from "../support/tone.ts";
import {
  type CascadeBrowser,
  CITIES,
  callIdOf,
  heardTone,
  openTonePage,
  startCascadeBrowser,
} from "./harness.ts";

let h: CascadeBrowser;
beforeAll(async () => {
  h = await startCascadeBrowser();
}, 180_000);
afterAll(async () => {
  await h?.close();
});

describe("cascade browser harness on a single-client call", () => {
  it("two pages in two cities, two clusters, each hears only its own tone echoed", async () => {
    const a = await openTonePage(h, CITIES.frankfurt);
    const b = await openTonePage(h, CITIES.newYork);
    const [sa, sb] = await Promise.all([
      a.connect("/v1/realtime/calls", TONE_A_HZ),
      b.connect("/v1/realtime/calls", TONE_B_HZ),
    ]);
    expect(sa.error, JSON.stringify(sa)).toBeNull();
    expect(sb.error, JSON.stringify(sb)).toBeNull();
    expect(sa.cluster).toBe("fra-local");
    expect(sb.cluster).toBe("iad-local");

    const ea = await a.waitFor((s) => heardTone(s, TONE_A_HZ), "page A hears 440 Hz", 40_000);
    const eb = await b.waitFor((s) => heardTone(s, TONE_B_HZ), "page B hears 880 Hz", 40_000);
    expect(ea.levels[TONE_A_HZ]!).toBeGreaterThanOrEqual(HEARD);
    expect(ea.levels[TONE_B_HZ]!).toBeLessThan(ABSENT_SHARE * ea.levels[TONE_A_HZ]!);
    expect(eb.levels[TONE_A_HZ]!).toBeLessThan(ABSENT_SHARE * eb.levels[TONE_B_HZ]!);

    // The call status agrees on where each call lives.
    const [ca, cb] = await Promise.all([
      callStatus(h, callIdOf(sa.location)),
      callStatus(h, callIdOf(sb.location)),
    ]);
    expect([ca.status, ca.body.clusterId, ca.body.state]).toEqual([200, 1, "connected"]);
    expect([cb.status, cb.body.clusterId, cb.body.state]).toEqual([200, 2, "connected"]);

    expect(await a.request("DELETE", sa.location!)).toBeLessThan(300);
    expect(await b.request("DELETE", sb.location!)).toBeLessThan(300);
    await a.close();
    await b.close();
  }, 120_000);
});
