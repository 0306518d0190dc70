// The pure session timers and ufrag bookkeeping, on virtual time: when a session ends by itself
// (maximum duration, setup timeout, consent lost, an ICE restart suspending consent) and how old
// local ufrags retire after a restart.
import { describe, expect, it } from "vitest";
import { type LifetimeMarks, lifetimeEnd } from "../../regional/transceiver/core/lifetime.ts";
import { OLD_UFRAG_GRACE_MS, UfragSet } from "../../regional/transceiver/core/ufrags.ts";

const LIMITS = { maxSessionMs: 3_600_000, setupTimeoutMs: 30_000, consentTimeoutMs: 30_000 };
const T0 = 1_000_000;
const marks = (m: Partial<LifetimeMarks> = {}): LifetimeMarks => ({
  createdAt: T0,
  dtlsConnectedAt: 0,
  lastConsentAt: 0,
  restarting: false,
  ...m,
});

describe("lifetimeEnd", () => {
  it("a session that never connects ends at the setup timeout, not a millisecond before", () => {
    expect(lifetimeEnd(T0 + 29_999, marks(), LIMITS)).toBeUndefined();
    expect(lifetimeEnd(T0 + 30_000, marks(), LIMITS)).toBe("setup_timeout");
  });

  it("a connected session lives while consent is fresh, and ends when it goes stale", () => {
    const m = marks({ dtlsConnectedAt: T0 + 500, lastConsentAt: T0 + 500 });
    expect(lifetimeEnd(T0 + 30_499, m, LIMITS)).toBeUndefined();
    expect(lifetimeEnd(T0 + 30_500, m, LIMITS)).toBe("consent_lost");
    // Each consent moves the deadline.
    for (let t = T0 + 1000; t < T0 + 600_000; t += 10_000) {
      expect(lifetimeEnd(t + 29_999, { ...m, lastConsentAt: t }, LIMITS)).toBeUndefined();
    }
  });

  it("an ICE restart in progress suspends the consent timer, not the maximum duration", () => {
    const m = marks({ dtlsConnectedAt: T0 + 1, lastConsentAt: T0 + 1, restarting: true });
    expect(lifetimeEnd(T0 + 120_000, m, LIMITS)).toBeUndefined();
    expect(lifetimeEnd(T0 + LIMITS.maxSessionMs, m, LIMITS)).toBe("max_duration");
  });

  it("the maximum duration wins over every other reason", () => {
    expect(lifetimeEnd(T0 + LIMITS.maxSessionMs, marks(), LIMITS)).toBe("max_duration");
  });
});

describe("UfragSet", () => {
  it("keeps the current ufrag forever and retires the old ones after the grace", () => {
    const u = new UfragSet();
    u.use("a", T0);
    expect(u.retire(T0 + 10 * OLD_UFRAG_GRACE_MS)).toEqual([]);
    u.use("b", T0 + 1000); // ICE restart: "a" retires at T0 + 1000 + grace
    expect(u.all).toEqual(["a", "b"]);
    expect(u.retire(T0 + 1000 + OLD_UFRAG_GRACE_MS - 1)).toEqual([]);
    expect(u.retire(T0 + 1000 + OLD_UFRAG_GRACE_MS)).toEqual(["a"]);
    expect(u.all).toEqual(["b"]);
  });

  it("a second restart within the grace does not extend an older ufrag's life", () => {
    const u = new UfragSet();
    u.use("a", T0);
    u.use("b", T0 + 1000);
    u.use("c", T0 + 20_000);
    expect(u.retire(T0 + 1000 + OLD_UFRAG_GRACE_MS)).toEqual(["a"]);
    expect(u.retire(T0 + 20_000 + OLD_UFRAG_GRACE_MS)).toEqual(["b"]);
    expect(u.all).toEqual(["c"]);
  });
});
