// The planet's plan, pure: nearest POPs from the RTT table, link parameters from the assumptions,
// a valid runtime topology, veths created only inside the run's namespaces, the sites file's
// errors, and the report's histogram reading.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { netBatches } from "../../scripts/world/core/net.ts";
import { backboneLink, planWorld, publicLink } from "../../scripts/world/core/plan.ts";
import {
  histogramMeanMs,
  rttMatches,
  summaryTable,
  type WorldReport,
} from "../../scripts/world/core/report.ts";
import { publicRttMs } from "../../scripts/world/core/rtt.ts";
import { DEFAULT_LINKS, parseSites } from "../../scripts/world/core/sites.ts";
import { parseTopology } from "../../shared/topology/schema.ts";

const dir = join(import.meta.dirname, "..", "..", "scripts", "world");
const topology = parseTopology(readFileSync(join(dir, "topology.json"), "utf8"), "topology.json");
const sites = parseSites(JSON.parse(readFileSync(join(dir, "sites.json"), "utf8")));
if (!sites.ok) throw new Error(sites.errors.join("\n"));
const plan = planWorld("grw1x", topology, sites.file);

describe("world plan", () => {
  it("routes each site's VIP to the POP with the lowest emulated RTT", () => {
    const route = plan.sites.map((s) => [s.site.name, plan.pops[s.popOrder[0]!]!.spec.name]);
    expect(route).toEqual([
      ["sydney", "pop-sin"],
      ["frankfurt", "pop-fra"],
      ["sao-paulo", "pop-gru"],
      ["virginia", "pop-iad"],
    ]);
    // Sydney's next nearest (its route after pop-sin is withdrawn) is Virginia's POP.
    expect(plan.pops[plan.sites[0]!.popOrder[1]!]!.spec.name).toBe("pop-iad");
  });

  it("takes RTTs from the table both ways round, and 0 within a city", () => {
    const syd = { latitude: -33.87, longitude: 151.21 };
    const iad = { latitude: 38.95, longitude: -77.45 };
    expect(publicRttMs(syd, iad)).toEqual(publicRttMs(iad, syd));
    expect(publicRttMs(syd, iad).ms).toBe(251);
    expect(publicRttMs(iad, { latitude: 39.04, longitude: -77.49 })).toEqual({ ms: 0, source: "same city" });
    // A place far from every table city falls back to the distance fit.
    expect(publicRttMs({ latitude: 35.68, longitude: 139.69 }, syd).source).toBe("fit");
  });

  it("adds the last mile to every client path, never to the backbone", () => {
    const syd = plan.sites[0]!;
    expect(syd.popRttMs[2]).toBe(20 + 175); // pop-sin
    expect(syd.clusterRttMs[1]).toBe(20 + 251); // iad
    expect(plan.clusters[1]!.backboneRttMs[2]).toBeCloseTo(217 * 0.9, 6); // pop-sin => iad
    expect(plan.clusters[0]!.backboneRttMs[0]).toBe(1); // pop-fra => fra, same city
  });

  it("gives public links distance-scaled jitter and bursty loss, the backbone less", () => {
    const pub = publicLink(200, DEFAULT_LINKS).up;
    const bb = backboneLink(200, DEFAULT_LINKS).up;
    expect(pub.delayMs).toBe(100);
    expect(pub.jitterMs).toBeCloseTo(1 + 0.02 * 100, 6);
    expect(pub.lossPct).toBeCloseTo(0.2 + 0.005 * 100, 6);
    expect(pub.burst).toBe(3);
    expect(bb.jitterMs!).toBeLessThan(pub.jitterMs!);
    expect(bb.lossPct!).toBeLessThan(pub.lossPct!);
  });

  it("renders a valid topology: one VIP for every POP, emulated addresses, a direct entry per cluster", () => {
    const t = plan.topology;
    expect(t.globalVip).toBe("10.255.255.1:3478");
    expect(t.pops.filter((p) => p.clusterId === undefined).map((p) => p.vip)).toEqual(
      Array(4).fill("10.250.0.1:3478"),
    );
    expect(t.pops.filter((p) => p.clusterId !== undefined).map((p) => p.name)).toEqual([
      "fra-direct",
      "iad-direct",
    ]);
    expect(t.clusters.map((c) => c.signallingUrl)).toEqual(["http://10.4.0.2:7100", "http://10.4.1.2:7100"]);
    // Ids, names and coordinates are the input's.
    expect(t.clusters.map((c) => [c.id, c.name, c.latitude])).toEqual(
      topology.clusters.map((c) => [c.id, c.name, c.latitude]),
    );
  });

  it("creates every veth inside the run's namespaces, never in the caller's", () => {
    const b = netBatches(plan);
    expect(b.namespaces.every((n) => n.startsWith("grw1x"))).toBe(true);
    expect(b.namespaces).toHaveLength(1 + 4 + 4 + 2);
    for (const [ns, lines] of b.steps) {
      expect(b.namespaces).toContain(ns);
      for (const l of lines.filter((x) => x.startsWith("link add"))) expect(l).toMatch(/ netns grw1x\S+$/);
    }
  });

  it("refuses worlds it cannot hold", () => {
    const many = {
      ...topology,
      pops: Array.from({ length: 9 }, (_, i) => ({ ...topology.pops[0]!, id: i + 1, name: `p${i}` })),
    };
    expect(() => planWorld("grw1x", many as typeof topology, sites.file)).toThrow(/1-8 POPs, got 9/);
  });
});

describe("sites file", () => {
  it.each([
    [{ sites: [] }, "sites: must hold 1-12 sites"],
    [
      { sites: [{ name: "A", latitude: 0, longitude: 0, country: "DE", continent: "EU", colo: "FRA" }] },
      "sites[0].name: must be a lowercase name",
    ],
    [
      { sites: [{ name: "a", latitude: 91, longitude: 0, country: "DE", continent: "EU", colo: "FRA" }] },
      "sites[0].latitude",
    ],
    [
      { sites: [{ name: "a", latitude: 0, longitude: 0, country: "DE", continent: "XX", colo: "FRA" }] },
      "sites[0].continent",
    ],
    [
      {
        sites: [{ name: "a", latitude: 0, longitude: 0, country: "DE", continent: "EU", colo: "FRA" }],
        links: { public: { lossPct: -1 } },
      },
      "links.public.lossPct: must be a number >= 0",
    ],
  ])("rejects %j naming the field", (raw, msg) => {
    const r = parseSites(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join("\n")).toContain(msg);
  });
});

describe("report", () => {
  it("reads a histogram's mean over all label sets", () => {
    const text = [
      "# TYPE gr_relay_first_hop_rtt_seconds histogram",
      'gr_relay_first_hop_rtt_seconds_bucket{pop="1",cluster="1",le="0.01"} 1',
      'gr_relay_first_hop_rtt_seconds_sum{pop="1",cluster="1"} 0.03',
      'gr_relay_first_hop_rtt_seconds_count{pop="1",cluster="1"} 2',
      'gr_relay_first_hop_rtt_seconds_sum{pop="1",cluster="2"} 0.05',
      'gr_relay_first_hop_rtt_seconds_count{pop="1",cluster="2"} 2',
      'gr_relay_backbone_rtt_seconds_sum{pop="1",cluster="1"} 9',
    ].join("\n");
    const h = histogramMeanMs(text, "gr_relay_first_hop_rtt_seconds");
    expect(h.count).toBe(4);
    expect(h.meanMs).toBeCloseTo(20, 9);
    expect(histogramMeanMs("", "gr_relay_first_hop_rtt_seconds")).toEqual({ meanMs: null, count: 0 });
  });

  it("matches within ±20 % and not beyond", () => {
    expect(rttMatches(100, 119.9)).toBe(true);
    expect(rttMatches(100, 80.1)).toBe(true);
    expect(rttMatches(100, 121)).toBe(false);
    expect(rttMatches(100, 79)).toBe(false);
  });

  it("prints a failed call as failed, and the rest of the table as usual", () => {
    const p = {
      connectMs: 400,
      firstAudioMs: 600,
      rttMs: 25,
      jitterMs: 2,
      lossPct: 0,
      expectedRttMs: 21,
      transceiver: null,
    };
    const r: WorldReport = {
      sites: [
        { name: "sao-paulo", pop: "pop-gru", cluster: "iad", relay: p, direct: { ...p, error: "connect" } },
      ],
      pops: [],
      popRttMatch: false,
      failover: [],
      clusterDown: null,
      assumptions: DEFAULT_LINKS,
      links: {},
      durationS: 1,
      host: { cpus: 2, loadAtStart: 1, loadAtEnd: 3 },
    };
    const t = summaryTable(r);
    expect(t).toMatch(/sao-paulo +pop-gru +iad +relay +21\.0 +25\.0/);
    expect(t).toMatch(/direct FAILED: connect/);
    expect(t).toContain("load average 1.0 at start, 3.0 at end (above the core count");
  });
});
