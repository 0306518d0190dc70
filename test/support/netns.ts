// A private network namespace for browser tests: Chromium runs inside it, so the only address it
// can gather is its end of a veth pair (198.18.0.0/15, the benchmarking range), and every packet
// it sends goes to the host end, where the test's own system listens. Nothing reaches the
// machine's real interfaces. Needs root (as CI runs); fails loudly otherwise.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { which } from "../../scripts/lib/system-deps.ts";

export interface NetnsHandle {
  name: string;
  /** Host end: where the system under test listens. */
  hostIp: string;
  /** Namespace end: the browser's only address. */
  nsIp: string;
  /** An executable that runs chromium inside the namespace (for playwright's executablePath). */
  chromiumWrapper: string;
  destroy(): void;
}

const ip = (...args: string[]): void => {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
};

let counter = 0;

export function createNetns(): NetnsHandle {
  if (process.getuid?.() !== 0)
    throw new Error("browser tests create a network namespace and need root (as CI runs)");
  const chromium = which("chromium");
  if (!chromium) throw new Error("chromium is not installed: run `npm run setup:system`");
  const slot = (process.pid * 7 + counter++) % 16000;
  const name = `gr${process.pid % 100000}x${counter}`;
  const hostIf = `${name}h`.slice(0, 15);
  const nsIf = `${name}n`.slice(0, 15);
  // 198.18.0.0/15 split into /30s: slot → 198.18.a.b/30.
  const base = 198 * 2 ** 24 + 18 * 2 ** 16 + slot * 4;
  const fmt = (n: number): string => `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  const hostIp = fmt(base + 1);
  const nsIp = fmt(base + 2);
  try {
    ip("netns", "add", name);
    ip("link", "add", hostIf, "type", "veth", "peer", "name", nsIf);
    ip("link", "set", nsIf, "netns", name);
    ip("addr", "add", `${hostIp}/30`, "dev", hostIf);
    ip("link", "set", hostIf, "up");
    ip("netns", "exec", name, "ip", "addr", "add", `${nsIp}/30`, "dev", nsIf);
    ip("netns", "exec", name, "ip", "link", "set", nsIf, "up");
    ip("netns", "exec", name, "ip", "link", "set", "lo", "up");
    execFileSync("ip", ["netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
  } catch (e) {
    try {
      ip("netns", "del", name);
    } catch {}
    throw new Error(`could not create network namespace ${name}: ${(e as Error).message}`);
  }
  const dir = mkdtempSync(join(tmpdir(), "gr-netns-"));
  const chromiumWrapper = join(dir, "chromium");
  writeFileSync(chromiumWrapper, `#!/bin/sh\nexec ip netns exec ${name} ${chromium} "$@"\n`);
  chmodSync(chromiumWrapper, 0o755);
  return {
    name,
    hostIp,
    nsIp,
    chromiumWrapper,
    destroy() {
      try {
        ip("link", "del", hostIf);
      } catch {}
      try {
        ip("netns", "del", name);
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
