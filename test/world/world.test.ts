// A small emulated planet (2 sites, 2 POPs behind one anycast VIP, 1 cluster; root needed for its
// network namespaces), asserting correctness, not timing: each site's call enters at its nearest
// POP (the POP holds the flow, the other does not, the transceiver names that POP); an anycast route
// change mid-call keeps the call, now through the other POP; and nothing is left behind, neither
// after a clean stop nor after the runner is SIGKILLed.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PORT } from "../../scripts/world/core/plan.ts";
import { parseSites } from "../../scripts/world/core/sites.ts";
import { listWorldNamespaces } from "../../scripts/world/netns.ts";
import { type CallEvent, type RunningWorld, startWorld } from "../../scripts/world/runner.ts";
import { parseTopology } from "../../shared/topology/schema.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const FIX = join(import.meta.dirname, "fixtures");
const topology = parseTopology(readFileSync(join(FIX, "small-topology.json"), "utf8"), "small-topology.json");
const parsed = parseSites(JSON.parse(readFileSync(join(FIX, "small-sites.json"), "utf8")));
if (!parsed.ok) throw new Error(parsed.errors.join("\n"));
const sites = parsed.file;

let w: RunningWorld;
const logs: string[] = [];
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const nsPids = (ns: string): number[] =>
  execFileSync("ip", ["netns", "pids", ns], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
const until = async (cond: () => boolean, what: string, ms = 15_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

beforeAll(async () => {
  if (process.getuid?.() !== 0)
    throw new Error("the world test creates network namespaces and needs root (as CI runs)");
  w = await startWorld({
    topology,
    sites,
    redis: false,
    transceivers: 1,
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

/** The POP whose admin endpoint holds a flow for the client's address (as POPs see it). */
const popsHolding = (client: string): string[] =>
  w.plan.pops
    .filter((p) => {
      // A hit spreads the flow's fields ({client, state, clusterId, ...}); a miss says flow: null.
      const body = JSON.parse(w.scrape(p.ns, `http://${p.ip}:${ADMIN_PORT}/flows?client=${client}`)) as {
        state?: unknown;
      };
      return typeof body.state === "string";
    })
    .map((p) => p.spec.name);

describe("a small world", () => {
  it("plans each site's VIP route to its nearest POP", () => {
    const names = w.plan.sites.map((s) => [s.site.name, w.plan.pops[w.route[s.index]!]!.spec.name]);
    expect(names).toEqual([
      ["frankfurt", "pop-fra"],
      ["virginia", "pop-iad"],
    ]);
  });

  it("carries each site's call through its nearest POP", async () => {
    for (const s of w.plan.sites) {
      const nearest = w.plan.pops[s.popOrder[0]!]!;
      let holding: Promise<string[]> | null = null;
      const r = await w.call(s.index, "relay", 1_500, (e: CallEvent) => {
        if (e.event === "answered")
          holding = new Promise((res) =>
            setTimeout(() => res(popsHolding(`${s.seenAs}:${e.localPort}`)), 1_500),
          );
      });
      expect(await holding!, `POPs holding ${s.site.name}'s flow`).toEqual([nearest.spec.name]);
      const t = r.transceiver as { popId: number; clientAddress: string };
      expect(t.popId).toBe(nearest.spec.id);
      expect(t.clientAddress).toBe(`${s.seenAs}:${r.localPort}`);
      expect(r.echoes as number).toBeGreaterThan(20);
    }
  }, 60_000);

  it("keeps the call when the site's POP is withdrawn mid-call: media resumes through the next POP", async () => {
    const site = 0;
    const from = w.route[site]!;
    let moved: { to: number }[] = [];
    const r = await w.call(site, "relay", 9_000, (e) => {
      if (e.event === "connected") setTimeout(() => (moved = w.withdraw(from)), 1_500);
    });
    w.restore(from);
    expect(moved).toHaveLength(1);
    const to = w.plan.pops[moved[0]!.to]!;
    expect(to.index).not.toBe(from);
    const t = r.transceiver as { popId: number };
    expect(t.popId, "the transceiver's path at the end of the call").toBe(to.spec.id);
    expect(r.lastEchoAgoMs as number, "echoes still arriving at the end").toBeLessThan(500);
    expect(r.echoes as number).toBeGreaterThan(200);
  }, 60_000);

  it("restarts every POP relay: each replacement binds the ports its predecessor held", async () => {
    const pid = (name: string): number | undefined =>
      w.world.sup.running.find((r) => r.name === name)?.child.pid;
    const before = w.plan.pops.map((p) => pid(p.spec.name));
    await w.restartPops(false); // throws if a relay exited during start (EADDRINUSE) or never let go
    const after = w.plan.pops.map((p) => pid(p.spec.name));
    for (const [i, p] of w.plan.pops.entries()) {
      expect(after[i]).toBeDefined();
      expect(after[i]).not.toBe(before[i]);
      expect(alive(before[i]!)).toBe(false);
      expect(w.scrape(p.ns, `http://${p.ip}:${ADMIN_PORT}/metrics`)).toContain("gr_relay");
    }
    // Every other program is still there (the old kill dropped the last running entry by mistake).
    expect(w.world.sup.running.some((r) => r.name.startsWith("linkem-"))).toBe(true);
  }, 60_000);

  it("leaves no namespace and no process behind after stop()", async () => {
    const tag = w.plan.tag;
    const pids = w.plan.sites
      .concat([])
      .map((s) => s.ns)
      .concat(
        w.plan.pops.map((p) => p.ns),
        w.plan.clusters.map((c) => c.ns),
        [w.plan.netNs],
      )
      .flatMap(nsPids);
    expect(pids.length).toBeGreaterThan(5);
    await w.stop();
    expect(listWorldNamespaces().filter((n) => n.startsWith(tag))).toEqual([]);
    await until(() => pids.every((p) => !alive(p)), "every process of the world to exit", 5_000);
  }, 30_000);

  it("is cleaned up by its watchdog when the runner is SIGKILLed", async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      [
        join(ROOT, "scripts/world/main.ts"),
        ...["--topology", join(FIX, "small-topology.json"), "--sites", join(FIX, "small-sites.json")],
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const tag = `grw${child.pid}x`;
    await new Promise<void>((res, rej) => {
      const t = setTimeout(() => rej(new Error("the runner did not come up in 60 s")), 60_000);
      createInterface({ input: child.stdout! }).on("line", (l) => {
        if (l.startsWith("world up")) {
          clearTimeout(t);
          res();
        }
      });
      child.once("exit", (c) => rej(new Error(`runner exited early (${c})`)));
    });
    const mine = listWorldNamespaces().filter((n) => n.startsWith(tag));
    expect(mine.length).toBe(6);
    const pids = mine.flatMap(nsPids);
    child.kill("SIGKILL");
    await until(
      () => listWorldNamespaces().every((n) => !n.startsWith(tag)),
      "the watchdog to remove the namespaces",
    );
    await until(() => pids.every((p) => !alive(p)), "every process of the killed run to exit", 5_000);
  }, 90_000);
});
