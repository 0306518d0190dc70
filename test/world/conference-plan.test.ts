// The world's conference, pure parts: the plan puts each cluster's transceivers at an alias every
// other cluster's namespace holds (inside the cluster's backboneCidrs, as the hub and leg check),
// with one tunnel per pair of clusters at their backbone RTT and the loss asked for; without the
// option nothing changes. The figures: tone onsets, one-way delay samples, loss from counters.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  delaySamples,
  lossPct,
  onsets,
  TONE_PERIOD_MS,
  toneOn,
} from "../../scripts/world/core/conference.ts";
import { clusterLinkem } from "../../scripts/world/core/linkem-configs.ts";
import { netBatches } from "../../scripts/world/core/net.ts";
import { planWorld } from "../../scripts/world/core/plan.ts";
import { publicRttMs } from "../../scripts/world/core/rtt.ts";
import { parseSites } from "../../scripts/world/core/sites.ts";
import { parseLinkemConfig } from "../../scripts/world/linkem/config.ts";
import { parseTopology } from "../../shared/topology/schema.ts";

const dir = join(import.meta.dirname, "..", "..", "scripts", "world");
const topology = parseTopology(readFileSync(join(dir, "topology.json"), "utf8"), "topology.json");
const sites = parseSites(JSON.parse(readFileSync(join(dir, "sites.json"), "utf8")));
if (!sites.ok) throw new Error(sites.errors.join("\n"));
const plain = planWorld("grw1x", topology, sites.file);
const plan = planWorld("grw1x", topology, sites.file, 2, { lossPct: 5 });

describe("world plan with conferences", () => {
  it("changes nothing without the option", () => {
    expect(plain.clusters.every((c) => c.conference === null)).toBe(true);
    expect(plain.clusters.every((c) => !c.spec.backboneCidrs.some((x) => x.startsWith("10.105.")))).toBe(
      true,
    );
    expect(clusterLinkem(plain, 0, 1).tunnels).toBeUndefined();
  });

  it("gives each cluster an alias inside its backbone CIDRs, held by every other cluster's namespace", () => {
    const ns = new Map(netBatches(plan).steps.map(([n, lines]) => [n, lines.join("\n")]));
    for (const c of plan.clusters) {
      expect(c.spec.backboneCidrs).toContain(`${c.conference!.alias}/32`);
      for (const o of plan.clusters) {
        const holds = ns.get(o.ns)!.includes(`addr add ${c.conference!.alias}/32 dev lo`);
        expect(holds, `${o.spec.name} holds ${c.spec.name}'s alias`).toBe(o.index !== c.index);
      }
    }
    const ports = plan.clusters.flatMap((c) => c.transceivers.map((t) => t.conferencePort));
    expect(new Set(ports).size).toBe(ports.length);
  });

  it("links the clusters by a tunnel at their backbone RTT with the loss asked for", () => {
    const [fra, iad] = plan.clusters;
    const rtt = publicRttMs(fra!.spec, iad!.spec).ms * plan.links.backbone.rttFactor;
    expect(fra!.conference!.rttMs[iad!.index]).toBeCloseTo(rtt, 1);
    const cfg = parseLinkemConfig(clusterLinkem(plan, fra!.index, 1));
    expect(cfg.tunnels).toHaveLength(1);
    const t = cfg.tunnels[0]!;
    expect(t).toMatchObject({
      bindIp: fra!.ip,
      remoteIp: iad!.ip,
      aliasIp: iad!.conference!.alias,
      ports: fra!.transceivers.map((x) => x.conferencePort),
      remotePorts: iad!.transceivers.map((x) => x.conferencePort),
    });
    expect(t.out.delayMs).toBeCloseTo(rtt / 2, 1);
    expect(t.out.loss.p).toBeGreaterThan(0);
  });
});

describe("conference figures", () => {
  it("finds burst onsets after quiet frames and pairs each burst sent with the first onset after it", () => {
    const times = Array.from({ length: 100 }, (_, i) => 1_000 + i * 20);
    const levels = times.map((t) => (toneOn(t - 120, 1_000) ? 6_000 : 100));
    const heard = onsets(times, levels);
    expect(heard).toEqual([1_120, 2_120]);
    const sent = [1_000, 1_000 + TONE_PERIOD_MS, 1_000 + 2 * TONE_PERIOD_MS];
    expect(delaySamples(sent, heard)).toEqual(heard.map(() => 120));
    expect(delaySamples([5_000], heard)).toEqual([]);
    // A burst split in two by a loss is heard once.
    expect(delaySamples([1_000], [1_120, 1_260])).toEqual([120]);
  });

  it("reads loss as lost over received plus lost", () => {
    expect(lossPct({ received: 95, lost: 5, repaired: 3, duplicates: 0 })).toBe(5);
    expect(lossPct(undefined)).toBeNull();
    expect(lossPct({ received: 0, lost: 0, repaired: 0, duplicates: 0 })).toBeNull();
  });
});
