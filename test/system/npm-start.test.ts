// `npm start` behaves like the fleet: a component killed with kill -9 is restarted, and however
// `npm start` ends (SIGTERM, SIGKILL of npm, SIGKILL of the supervisor itself) no component
// process is left and every port is free again. Runs the real local system on free ports.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { type LocalPlan, planPorts } from "../../scripts/lib/local-system.ts";
import { portFree, waitFor } from "./support.ts";

const ROOT = resolve(import.meta.dirname, "../..");

interface Started {
  npm: ChildProcess;
  /** The supervisor (scripts/start.ts) process. */
  pid: number;
  components: { name: string; pid: number }[];
  plan: LocalPlan;
  lines: string[];
}

const started: Started[] = [];

function start(): Promise<Started> {
  const npm = spawn("npm", ["start", "--silent", "--", "--free-ports", "--no-dashboard"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, LOG_LEVEL: "warn" },
  });
  const lines: string[] = [];
  return new Promise((res, rej) => {
    const timer = setTimeout(
      () => rej(new Error(`npm start not ready:\n${lines.slice(-30).join("\n")}`)),
      90_000,
    );
    const onLine = (line: string): void => {
      lines.push(line);
      if (!line.startsWith('{"msg":"ready","svc":"local-system"')) return;
      clearTimeout(timer);
      const j = JSON.parse(line) as Omit<Started, "npm" | "lines">;
      const s = { ...j, npm, lines };
      started.push(s);
      res(s);
    };
    createInterface({ input: npm.stdout! }).on("line", onLine);
    createInterface({ input: npm.stderr! }).on("line", onLine);
    npm.once("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`npm start exited (${code}):\n${lines.slice(-30).join("\n")}`));
    });
  });
}

/** Every process below `root`, and every member of the components' process groups. */
function processTree(roots: number[], groups: number[]): number[] {
  const parent = new Map<number, number>();
  const group = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      // pid (comm) state ppid pgrp …; comm may hold spaces, so split after the last ")".
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parent.set(Number(d), Number(f[1]));
      group.set(Number(d), Number(f[2]));
    } catch {
      /* exited meanwhile */
    }
  }
  const out = new Set<number>(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parent)
      if (!out.has(pid) && (out.has(ppid) || groups.includes(group.get(pid) ?? -1))) {
        out.add(pid);
        grew = true;
      }
  }
  return [...out];
}

const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
};

async function expectAllGone(s: Started, pids: number[], how: string): Promise<void> {
  const t0 = Date.now();
  await waitFor(
    async () => pids.filter(alive),
    (left) => left.length === 0,
    "every component process to exit",
    15_000,
  );
  // The goal is 2 s: printed for the record, not asserted (no timing assertions in tests).
  console.log(
    JSON.stringify({ measured: `npm start ended by ${how}: every component gone`, ms: Date.now() - t0 }),
  );
  const { tcp, udp } = planPorts(s.plan);
  const busy: string[] = [];
  for (const [port, what] of tcp)
    if (!(await portFree("tcp", s.plan.host, port))) busy.push(`${port} ${what}`);
  for (const [port, what] of udp)
    if (!(await portFree("udp", s.plan.host, port))) busy.push(`${port} ${what}`);
  expect(busy).toEqual([]);
}

afterEach(() => {
  for (const s of started.splice(0)) {
    for (const pid of processTree(
      [s.npm.pid!, s.pid],
      s.components.map((c) => c.pid),
    ))
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone */
      }
  }
});

describe("npm start", { timeout: 180_000 }, () => {
  it("restarts a component killed with kill -9, then SIGTERM leaves no process and no port behind", async () => {
    const s = await start();
    expect(s.components.map((c) => c.name)).toContain("fra-local-transceiver-1");
    const victim = s.components.find((c) => c.name === "fra-local-transceiver-1")!;
    process.kill(victim.pid, "SIGKILL");
    const restarted = await waitFor(
      async () =>
        s.lines
          .filter((l) => l.includes('"component restarted"'))
          .map((l) => JSON.parse(l) as { component: string; pid: number })
          .find((e) => e.component === victim.name),
      (e) => e !== undefined,
      "the transceiver to be restarted",
      30_000,
    );
    expect(restarted!.pid).not.toBe(victim.pid);
    expect(alive(restarted!.pid)).toBe(true);
    expect(s.lines.some((l) => l.includes('"component exited"') && l.includes('"signal":"SIGKILL"'))).toBe(
      true,
    );
    const t = s.plan.clusters[0]!.transceivers[0]!;
    const health = await fetch(`http://${s.plan.host}:${t.httpPort}/healthz`);
    expect(health.status).toBe(200);

    const pids = processTree([s.npm.pid!], [...s.components.map((c) => c.pid), restarted!.pid]);
    expect(pids.length).toBeGreaterThan(s.components.length);
    s.npm.kill("SIGTERM");
    await expectAllGone(s, pids, "SIGTERM of npm");
  });

  it("SIGKILL of npm leaves no process and no port behind", async () => {
    const s = await start();
    const pids = processTree(
      [s.npm.pid!],
      s.components.map((c) => c.pid),
    );
    s.npm.kill("SIGKILL");
    await expectAllGone(s, pids, "SIGKILL of npm");
  });

  it("SIGKILL of the supervisor itself leaves no process and no port behind", async () => {
    const s = await start();
    const pids = processTree(
      [s.npm.pid!],
      s.components.map((c) => c.pid),
    );
    process.kill(s.pid, "SIGKILL");
    await expectAllGone(s, pids, "SIGKILL of the supervisor");
  });
});
