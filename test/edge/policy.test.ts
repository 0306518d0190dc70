// The steering policy, health book and failover loop, pure, with fixed coordinates.
import { describe, expect, it } from "vitest";
import { HealthBook, type HealthView } from "../../edge/health/book.ts";
import { clientLocationFromCf } from "../../edge/steering/client.ts";
import { retryAfterFor, tryInOrder } from "../../edge/steering/failover.ts";
import { greatCircleKm } from "../../edge/steering/geo.ts";
import { DEFAULT_STEERING, loadPenaltyKm, planSteering } from "../../edge/steering/policy.ts";
import type { ClusterSpec } from "../../shared/topology/schema.ts";
import { CITIES, type CityName, topologyFor } from "./fixtures.ts";

const topo = topologyFor({});
const up = (c: ClusterSpec): HealthView => ({
  status: "up",
  load: 0,
  capacity: c.capacity,
  source: "probe",
  checkedAtMs: 0,
});
const order = (city: CityName, health = up) =>
  planSteering(topo, clientLocationFromCf(CITIES[city]), health).candidates.map((c) => c.cluster.name);

describe("great-circle distance", () => {
  it("matches known city pairs within 1 %", () => {
    // Frankfurt–Sydney ≈ 16,480 km; Frankfurt–New York ≈ 6,200 km; same point = 0.
    expect(greatCircleKm(50.11, 8.68, -33.87, 151.21)).toBeGreaterThan(16_300);
    expect(greatCircleKm(50.11, 8.68, -33.87, 151.21)).toBeLessThan(16_650);
    expect(Math.abs(greatCircleKm(50.11, 8.68, 40.71, -74.01) - 6200) / 6200).toBeLessThan(0.01);
    expect(greatCircleKm(1, 2, 1, 2)).toBe(0);
    // Across the antimeridian: Auckland–Fiji is short, not around the world.
    expect(greatCircleKm(-36.85, 174.76, -18.14, 178.44)).toBeLessThan(2200);
  });
});

describe("planSteering with coordinates", () => {
  it.each(Object.keys(CITIES) as CityName[])("%s lands on its expected cluster", (city) => {
    expect(order(city)[0]).toBe(CITIES[city].expect);
  });

  it("orders the rest by distance (Frankfurt: fra, iad, gru, syd)", () => {
    expect(order("frankfurt")).toEqual(["fra", "iad", "gru", "syd"]);
    expect(order("sydney")).toEqual(
      ["syd", "iad", "gru", "fra"].sort(
        (a, b) => greatCircleKm(-33.87, 151.21, ...coords(a)) - greatCircleKm(-33.87, 151.21, ...coords(b)),
      ),
    );
  });

  it("excludes down, draining and full clusters, keeps unknown", () => {
    const plan = planSteering(topo, clientLocationFromCf(CITIES.frankfurt), (c) => {
      const v = up(c);
      if (c.name === "fra") return { ...v, status: "down" };
      if (c.name === "iad") return { ...v, status: "draining" };
      if (c.name === "gru") return { ...v, status: "full", load: 100 };
      return { ...v, status: "unknown" };
    });
    expect(plan.candidates.map((c) => c.cluster.name)).toEqual(["syd"]);
    expect(plan.excluded.map((e) => `${e.cluster.name}:${e.health.status}`).sort()).toEqual([
      "fra:down",
      "gru:full",
      "iad:draining",
    ]);
  });

  it("weighs load: a nearly full cluster loses to a free one nearby, not to one across an ocean", () => {
    // Lisbon: fra 1,900 km, iad 5,900 km. fra at 99 % carries ~2,400 km of penalty: still fra.
    const busy = (name: string, u: number) => (c: ClusterSpec) =>
      c.name === name ? { ...up(c), load: u * c.capacity } : up(c);
    expect(order("lisbon", busy("fra", 0.99))[0]).toBe("fra");
    // With a second cluster next door (Paris), the busy one gives way.
    const withParis = topologyFor({}, { iad: { latitude: 48.86, longitude: 2.35, continent: "EU" } });
    const plan = planSteering(withParis, clientLocationFromCf(CITIES.frankfurt), busy("fra", 0.95));
    expect(plan.candidates[0]!.cluster.name).toBe("iad");
    // Below the knee, load does not reorder.
    expect(order("frankfurt", busy("fra", 0.6))[0]).toBe("fra");
  });

  it("penalty is 0 below the knee and the full penalty at 100 %", () => {
    expect(loadPenaltyKm(0.5, DEFAULT_STEERING)).toBe(0);
    expect(loadPenaltyKm(1, DEFAULT_STEERING)).toBe(DEFAULT_STEERING.loadPenaltyKm);
    expect(loadPenaltyKm(0.85, DEFAULT_STEERING)).toBeCloseTo(DEFAULT_STEERING.loadPenaltyKm / 2);
  });
});

describe("planSteering without coordinates", () => {
  it("falls back to country, then continent, then default", () => {
    const byCountry = planSteering(topo, { country: "BR", continent: "SA" }, up);
    expect(byCountry.basis).toBe("country");
    expect(byCountry.candidates[0]!.cluster.name).toBe("gru");
    const byContinent = planSteering(topo, { country: "NO", continent: "EU" }, up);
    expect(byContinent.basis).toBe("continent");
    expect(byContinent.candidates[0]!.cluster.name).toBe("fra");
    const byDefault = planSteering(topo, { country: "JP", continent: "AS" }, up);
    expect(byDefault.basis).toBe("default");
    expect(byDefault.candidates[0]!.cluster.name).toBe("fra");
    // Asia's next choices follow distance from the continent's centre.
    expect(byDefault.candidates.map((c) => c.cluster.name)).toEqual(["fra", "syd", "iad", "gru"]);
    const nothing = planSteering(topo, {}, up);
    expect(nothing.basis).toBe("default");
    expect(nothing.candidates[0]!.cluster.name).toBe("fra");
  });

  it("skips a down country cluster for the next tier", () => {
    const plan = planSteering(topo, { country: "BR", continent: "SA" }, (c) =>
      c.name === "gru" ? { ...up(c), status: "down" } : up(c),
    );
    expect(plan.candidates[0]!.cluster.name).toBe("fra");
  });

  it("reads cf strings and ignores junk", () => {
    expect(
      clientLocationFromCf({
        latitude: "1.5",
        longitude: "2.5",
        country: "DE",
        continent: "EU",
        colo: "FRA",
      }),
    ).toEqual({
      latitude: 1.5,
      longitude: 2.5,
      country: "DE",
      continent: "EU",
      colo: "FRA",
    });
    expect(clientLocationFromCf({ latitude: "x", longitude: "2", country: "XX", continent: "eu" })).toEqual(
      {},
    );
    expect(clientLocationFromCf({ latitude: "91", longitude: "2" })).toEqual({});
    expect(clientLocationFromCf(undefined)).toEqual({});
  });
});

function coords(name: string): [number, number] {
  const c = topo.clusters.find((x) => x.name === name)!;
  return [c.latitude, c.longitude];
}

describe("HealthBook", () => {
  const timing = { freshMs: 1000, maxAgeMs: 5000, passiveDownMs: 2000 };
  it("probe results, staleness and age-out", () => {
    const b = new HealthBook(timing);
    expect(b.view(1, 100, 0).status).toBe("unknown");
    expect(b.needsProbe(1, 0)).toBe(true);
    b.recordProbe(1, { ok: true, status: "ok", load: 10, capacity: 50, atMs: 0 });
    expect(b.view(1, 100, 10)).toMatchObject({ status: "up", load: 10, capacity: 50 });
    expect(b.needsProbe(1, 999)).toBe(false);
    expect(b.needsProbe(1, 1000)).toBe(true);
    expect(b.view(1, 100, 5001).status).toBe("unknown");
    b.recordProbe(1, { ok: true, status: "draining", load: 0, capacity: 50, atMs: 6000 });
    expect(b.view(1, 100, 6000).status).toBe("draining");
    b.recordProbe(1, { ok: true, status: "ok", load: 50, capacity: 50, atMs: 7000 });
    expect(b.view(1, 100, 7000).status).toBe("full");
    b.recordProbe(1, { ok: false, status: "timeout", load: 0, capacity: 0, atMs: 8000 });
    expect(b.view(1, 100, 8000)).toMatchObject({ status: "down", capacity: 100 });
    // An older probe never overwrites a newer one.
    b.recordProbe(1, { ok: true, status: "ok", load: 0, capacity: 50, atMs: 7500 });
    expect(b.view(1, 100, 8000).status).toBe("down");
  });

  it("passive marks expire, are cleared by success or a later healthy probe", () => {
    const b = new HealthBook(timing);
    b.recordFailure(2, 100, "timeout");
    expect(b.view(2, 100, 200)).toMatchObject({ status: "down", source: "passive:timeout", untilMs: 2100 });
    expect(b.view(2, 100, 2100).status).toBe("unknown");
    b.recordFull(2, 3000, 5);
    expect(b.view(2, 100, 7999).status).toBe("full");
    expect(b.view(2, 100, 8000).status).toBe("unknown");
    b.recordFailure(2, 9000, "unreachable");
    b.recordSuccess(2, 9100);
    expect(b.view(2, 100, 9200).status).toBe("unknown");
    // A 503's Retry-After stands even against a later healthy probe.
    b.recordFull(2, 9300, 5);
    b.recordProbe(2, { ok: true, status: "ok", load: 1, capacity: 100, atMs: 9400 });
    expect(b.view(2, 100, 9500).status).toBe("full");
    b.recordSuccess(2, 9600);
    b.recordFailure(2, 10_000, "unreachable");
    b.recordProbe(2, { ok: true, status: "ok", load: 1, capacity: 100, atMs: 9_999 });
    expect(b.view(2, 100, 10_001).status).toBe("down"); // the probe is older than the failure
    b.recordProbe(2, { ok: true, status: "ok", load: 1, capacity: 100, atMs: 10_500 });
    expect(b.view(2, 100, 10_501).status).toBe("up");
  });

  it("merges entries from elsewhere, newest facts win", () => {
    const a = new HealthBook(timing);
    const b = new HealthBook(timing);
    a.recordProbe(1, { ok: true, status: "ok", load: 1, capacity: 10, atMs: 100 });
    b.recordProbe(1, { ok: true, status: "ok", load: 9, capacity: 10, atMs: 200 });
    b.recordFailure(1, 300, "timeout");
    a.merge(1, JSON.parse(JSON.stringify(b.entry(1))));
    expect(a.view(1, 10, 400)).toMatchObject({ status: "down", load: 9 });
    b.merge(1, { probe: { ok: true, status: "ok", load: 0, capacity: 10, atMs: 50 }, passive: null });
    expect(b.entry(1)!.probe!.atMs).toBe(200);
  });
});

describe("tryInOrder", () => {
  const cl = topo.clusters;
  let clock = 0;
  const now = () => clock;

  it("stops at the first final answer and reports failures before it", async () => {
    const seen: string[] = [];
    const r = await tryInOrder(
      cl,
      async (c) => {
        seen.push(c.name);
        if (c.name === "fra") return { kind: "retry", reason: "full", retryAfterS: 7 };
        if (c.name === "iad") throw new TypeError("connection refused");
        return { kind: "done", value: c.name };
      },
      { maxAttempts: 3, deadlineMs: 1000, attemptTimeoutMs: 100, now },
    );
    expect(r.ok && r.value).toBe("gru");
    expect(r.attempts).toBe(3);
    expect(r.failures.map((f) => f.reason)).toEqual(["full", "unreachable"]);
    expect(retryAfterFor(r.failures)).toBe(7);
    expect(seen).toEqual(["fra", "iad", "gru"]);
  });

  it("bounds attempts", async () => {
    const r = await tryInOrder(cl, async () => ({ kind: "retry", reason: "error" }), {
      maxAttempts: 2,
      deadlineMs: 1000,
      attemptTimeoutMs: 100,
      now,
    });
    expect(r).toMatchObject({ ok: false, attempts: 2 });
    expect(retryAfterFor(r.failures)).toBe(5);
  });

  it("aborts a hanging attempt and moves on", async () => {
    const r = await tryInOrder(
      cl,
      (c, signal) =>
        c.name === "fra"
          ? new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
          : Promise.resolve({ kind: "done" as const, value: c.name }),
      { maxAttempts: 3, deadlineMs: 5000, attemptTimeoutMs: 30, now },
    );
    expect(r.ok && r.value).toBe("iad");
    expect(r.failures[0]!.reason).toBe("timeout");
  });

  it("starts no attempt once the deadline is spent", async () => {
    clock = 0;
    const r = await tryInOrder(
      cl,
      async () => {
        clock += 600;
        return { kind: "retry", reason: "timeout" };
      },
      { maxAttempts: 5, deadlineMs: 1000, attemptTimeoutMs: 600, now },
    );
    expect(r.attempts).toBe(2);
  });
});
