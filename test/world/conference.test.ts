// A conference across a small emulated planet (2 sites, 2 POPs, 2 clusters linked by the link
// emulator's tunnels at their backbone RTT with 5 % loss each way; root needed for the
// namespaces), asserting behaviour, not timing: the owner's call lands on its nearest cluster and
// the joiner, through the edge, on the other; each hears the other's tone; the hub measures the
// backbone round trip; and with NACK repair on, fewer frames are lost across the backbone than
// with it off (every transceiver restarted with CONFERENCE_NACK=0); and two participants in one
// city, hub and leg on one transceiver, hear each other.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conferencePass } from "../../scripts/world/conference-phase.ts";
import type { ConferencePass } from "../../scripts/world/core/conference.ts";
import { parseSites } from "../../scripts/world/core/sites.ts";
import { type RunningWorld, startWorld } from "../../scripts/world/runner.ts";
import { parseTopology } from "../../shared/topology/schema.ts";

const FIX = join(import.meta.dirname, "fixtures");
const topology = parseTopology(
  readFileSync(join(FIX, "conference-topology.json"), "utf8"),
  "conference-topology.json",
);
const parsed = parseSites(JSON.parse(readFileSync(join(FIX, "small-sites.json"), "utf8")));
if (!parsed.ok) throw new Error(parsed.errors.join("\n"));

let w: RunningWorld;
const logs: string[] = [];

beforeAll(async () => {
  if (process.getuid?.() !== 0)
    throw new Error("the world test creates network namespaces and needs root (as CI runs)");
  w = await startWorld({
    topology,
    sites: parsed.file,
    redis: false,
    transceivers: 1,
    conference: { lossPct: 5 },
    log: () => {},
    onChildLine: (n, l) => {
      logs.push(`[${n}] ${l}`);
      if (logs.length > 2000) logs.splice(0, 500);
    },
  });
}, 90_000);

afterAll(async () => {
  await w?.stop();
});

/** Frames lost of every stream the backbone carried (the owner's at the leg, the joiner's at the hub). */
const lost = (p: ConferencePass): { lost: number; frames: number } =>
  p.directions.reduce(
    (a, d) => ({ lost: a.lost + (d.repair?.lost ?? 0), frames: a.frames + (d.repair?.received ?? 0) }),
    { lost: 0, frames: 0 },
  );

describe("a conference across two clusters", () => {
  let withNack: ConferencePass;

  it("joins a participant on the other cluster through the edge; each hears the other", async () => {
    const [frankfurt, virginia] = [0, 1];
    withNack = await conferencePass(w, frankfurt, virginia, 8_000, true);
    console.log(JSON.stringify(withNack));
    expect(withNack.error, logs.slice(-30).join("\n")).toBeUndefined();
    expect(withNack.owner.cluster).toBe("fra");
    expect(withNack.joiner.cluster).toBe("iad");
    for (const d of withNack.directions) {
      expect(d.bursts, `${d.from}->${d.to} bursts sent`).toBeGreaterThanOrEqual(5);
      expect(d.heard, `${d.from}->${d.to} bursts heard`).toBeGreaterThanOrEqual(d.bursts - 2);
      expect(d.repair, `${d.from}->${d.to} repair counters`).not.toBeNull();
      expect(d.repair!.received).toBeGreaterThan(200);
    }
    expect(withNack.hubRttMs).toBeGreaterThan(0);
    expect(withNack.directions.reduce((a, d) => a + d.repair!.repaired, 0)).toBeGreaterThan(0);
  }, 120_000);

  it("loses fewer frames across the backbone with NACK than without (5 % loss each way)", async () => {
    await w.restartTransceivers(false);
    const without = await conferencePass(w, 0, 1, 8_000, false);
    console.log(JSON.stringify(without));
    expect(without.error, logs.slice(-30).join("\n")).toBeUndefined();
    expect(without.directions.every((d) => d.heard > 0)).toBe(true);
    expect(without.directions.reduce((a, d) => a + (d.repair?.repaired ?? 0), 0)).toBe(0);
    const a = lost(withNack);
    const b = lost(without);
    expect(b.lost).toBeGreaterThan(0);
    expect(a.lost / a.frames).toBeLessThan(b.lost / b.frames);
  }, 120_000);

  it("two participants in one city: the leg lands on the hub's own transceiver, and each hears the other", async () => {
    // Both nearest to iad, whose one transceiver holds the call: hub and leg share its conference
    // socket, whose address (the tunnels' alias, what fra reaches) this cluster cannot route to.
    const virginia = 1;
    const local = await conferencePass(w, virginia, virginia, 6_000, false);
    console.log(JSON.stringify(local));
    expect(local.error, logs.slice(-30).join("\n")).toBeUndefined();
    expect([local.owner.cluster, local.joiner.cluster]).toEqual(["iad", "iad"]);
    for (const d of local.directions) {
      expect(d.bursts, `${d.from}->${d.to} bursts sent`).toBeGreaterThanOrEqual(4);
      expect(d.heard, `${d.from}->${d.to} bursts heard`).toBeGreaterThanOrEqual(d.bursts - 2);
    }
  }, 120_000);
});
