// Builds and removes the planet's namespaces (root needed). Names carry the runner's pid
// (grw<pid>x…), so a later run can tell a dead run's leftovers from a live one's and remove them.
import { execFileSync } from "node:child_process";
import { type NetBatches, vipRoute } from "./core/net.ts";
import type { WorldPlan } from "./core/plan.ts";

const NAME = /^grw(\d+)x\S*$/;

const ip = (args: string[], input?: string): string =>
  execFileSync("ip", args, { input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });

export function listWorldNamespaces(): string[] {
  return ip(["netns", "list"])
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter((n) => NAME.test(n));
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Kills every process inside a namespace, then deletes it. Never throws. */
export function removeNamespace(name: string): void {
  try {
    for (const pid of ip(["netns", "pids", name]).split("\n").filter(Boolean)) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {}
    }
  } catch {}
  try {
    ip(["netns", "del", name]);
  } catch {}
}

/** Removes the namespaces of runs whose runner is gone (killed before it could clean up). */
export function removeStale(): string[] {
  const gone = listWorldNamespaces().filter((n) => !alive(Number(NAME.exec(n)![1])));
  for (const n of gone) removeNamespace(n);
  return gone;
}

export function removeRun(tag: string): void {
  for (const n of listWorldNamespaces()) if (n.startsWith(tag)) removeNamespace(n);
}

export function buildNetwork(b: NetBatches): void {
  if (process.getuid?.() !== 0) throw new Error("the world creates network namespaces and needs root");
  ip(["-batch", "-"], `${b.namespaces.map((n) => `netns add ${n}`).join("\n")}\n`);
  for (const [ns, lines] of b.steps) {
    if (lines.length === 0) continue;
    try {
      ip(["-n", ns, "-batch", "-"], `${lines.join("\n")}\n`);
    } catch (e) {
      throw new Error(`network setup failed in ${ns}: ${(e as { stderr?: string }).stderr ?? e}`);
    }
  }
  const fabric = b.namespaces[0]!;
  execFileSync("ip", ["netns", "exec", fabric, "sysctl", "-qw", "net.ipv4.ip_forward=1"]);
}

/** Points one site's VIP route at a POP (an anycast route change as that site sees it). */
export function routeVip(w: WorldPlan, site: number, pop: number): void {
  ip(["-n", w.sites[site]!.ns, ...vipRoute(w, site, pop).split(" ")]);
}

/** Runs a command inside a namespace and returns its stdout (for scraping admin endpoints). */
export function nsExec(ns: string, cmd: string[], timeoutMs = 5_000): string {
  return execFileSync("ip", ["netns", "exec", ns, ...cmd], { encoding: "utf8", timeout: timeoutMs });
}
