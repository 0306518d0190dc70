// Waits until a stopped program is really gone before anything takes its place. The supervisor
// sees its child's exit when the group leader (the wrapper) is reaped, but a SIGKILLed grandchild
// (the relay itself) may still be tearing down its memory, and its sockets close only after that:
// a replacement started then fails with EADDRINUSE. So: first no live (non-zombie) process left in
// the group, then none of the addresses it bound still bound inside its namespace. Bounded.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** A socket a program binds: protocol and local address, as `ss` prints it. */
export interface Bound {
  proto: "tcp" | "udp";
  addr: string;
}

const POLL_MS = 50;

/** Pids of processes in group `pgid` that have not exited yet (zombies have released everything). */
export function liveInGroup(pgid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${d}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(f[2]) === pgid && f[0] !== "Z" && f[0] !== "X") out.push(Number(d));
  }
  return out;
}

/** Live processes of group `pgid` whose command line contains `needle`. */
export function groupMembers(pgid: number, needle: string): number[] {
  return liveInGroup(pgid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle);
    } catch {
      return false;
    }
  });
}

/** Which of `want` are still bound in namespace `ns`. */
export function stillBound(ns: string, want: Bound[]): Bound[] {
  if (want.length === 0) return [];
  const ss = execFileSync("ip", ["netns", "exec", ns, "ss", "-Hlntun"], { encoding: "utf8" });
  const held = new Set<string>();
  for (const line of ss.split("\n")) {
    const c = line.trim().split(/\s+/);
    if (c.length >= 5) held.add(`${c[0]} ${c[4]}`);
  }
  return want.filter((b) => held.has(`${b.proto} ${b.addr}`));
}

export class StillRunningError extends Error {
  override readonly name = "StillRunningError";
}

/** Resolves once group `pgid` has no live process and `ports` are free in `ns`; throws after `timeoutMs`. */
export async function waitGone(
  what: string,
  pgid: number,
  ns: string | null,
  ports: Bound[],
  timeoutMs = 5_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const live = liveInGroup(pgid);
    const bound = live.length === 0 && ns !== null ? stillBound(ns, ports) : [];
    if (live.length === 0 && bound.length === 0) return;
    if (Date.now() >= until) {
      const why = live.length
        ? `process(es) ${live.join(", ")} of its group still running`
        : `${bound.map((b) => `${b.proto} ${b.addr}`).join(", ")} still bound in ${ns}`;
      throw new StillRunningError(
        `${what}: ${why} ${timeoutMs} ms after it was killed; not starting a replacement`,
      );
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
