// The system packages this repository needs, and why: found on PATH, or (as root on Debian)
// installed by `npm run setup:system` (scripts/setup-system.ts), which `npm test` runs only when a
// test dependency is missing. Versions are the Debian 12 ones the suite was run with; they are
// installed as `pkg=version` while the archive still has them (a point release or a security
// update replaces them, and then the candidate is installed and the change is said). Never skips
// silently: a missing package that cannot be installed fails with the exact command to run.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

export interface SystemDep {
  /** Debian package name (for a dependency with `manual`, only its name in messages). */
  pkg: string;
  /** Binary that shows the package is there. */
  bin: string;
  why: string;
  /** "test": `npm test` needs it; "bench": only a benchmark does (installed by setup:system alone). */
  for: "test" | "bench";
  /** Debian 12 version the suite was run with. */
  version?: string;
  /** Not a Debian package here: how to install it by hand (never installed automatically). */
  manual?: string;
}

export const SYSTEM_DEPS: readonly SystemDep[] = [
  {
    pkg: "redis-server",
    bin: "redis-server",
    why: "relay flow mirror and membership tests start their own Redis",
    for: "test",
    version: "5:7.0.15-1~deb12u10",
  },
  {
    pkg: "curl",
    bin: "curl",
    why: "a test runs the curl line `npm start` prints, as a newcomer pastes it",
    for: "test",
  },
  {
    pkg: "chromium",
    bin: "chromium",
    why: "end-to-end and dashboard tests drive a real browser",
    for: "test",
    version: "156.0.8078.114-1~deb12u1",
  },
  {
    pkg: "firefox-esr",
    bin: "firefox-esr",
    why: "interop tests run the demo page in headless Firefox",
    for: "test",
    version: "153.8.0esr-1~deb12u1",
  },
  {
    pkg: "simple-whip-client",
    bin: "whip-client",
    why: "interop tests publish with GStreamer's WHIP client (its Depends bring webrtcbin, nice, opus, vp8)",
    for: "test",
    version: "0.0~git20230131-1",
  },
  {
    pkg: "prometheus",
    bin: "promtool",
    why: "the alert rules are checked with promtool and the dashboard is compared with a real Prometheus",
    for: "test",
    version: "2.42.0+ds-5+deb12u1",
  },
  {
    pkg: "gcc",
    bin: "gcc",
    why: "the WHIP interop test builds a libgupnp-igd stand-in; node-gyp builds the relay's native addon",
    for: "test",
    version: "4:12.2.0-3",
  },
  {
    pkg: "make",
    bin: "make",
    why: "node-gyp builds the relay's native addon",
    for: "test",
    version: "4.3-4.1",
  },
  {
    pkg: "python3",
    bin: "python3",
    why: "node-gyp (the native addon's build) runs on Python",
    for: "test",
    version: "3.11.2-1+b1",
  },
  {
    pkg: "nftables",
    bin: "nft",
    why: "TCP tests filter traffic inside their own network namespace",
    for: "test",
    version: "1.0.6-2+deb12u2",
  },
  {
    pkg: "coturn",
    bin: "turnserver",
    why: "bench:relay compares the relay with coturn's forwarding (benchmark only, no test needs it)",
    for: "bench",
    version: "4.6.1-1",
  },
  {
    pkg: "terraform",
    bin: "terraform",
    why: "terraform test, fmt and validate judge terraform/, and render the topology (scripts/terraform)",
    for: "test",
    manual:
      "install Terraform >= 1.9 from https://developer.hashicorp.com/terraform/install (a single binary: unzip terraform_<version>_linux_amd64.zip into /usr/local/bin)",
  },
];

/** What `npm test` needs. */
export const TEST_DEPS: readonly SystemDep[] = SYSTEM_DEPS.filter((d) => d.for === "test");

export function which(bin: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const p = `${dir}/${bin}`;
    if (dir && existsSync(p)) return p;
  }
  for (const p of [`/usr/bin/${bin}`, `/usr/sbin/${bin}`, `/usr/local/bin/${bin}`])
    if (existsSync(p)) return p;
  return null;
}

export function missingDeps(
  deps: readonly SystemDep[],
  find: (bin: string) => string | null = which,
): SystemDep[] {
  return deps.filter((d) => find(d.bin) === null);
}

export interface AptPolicy {
  installed: string | null;
  candidate: string | null;
  /** Every version the configured archives offer. */
  versions: string[];
}

/** Reads `apt-cache policy PKG...` output. */
export function parseAptPolicy(text: string): Map<string, AptPolicy> {
  const out = new Map<string, AptPolicy>();
  let cur: AptPolicy | null = null;
  for (const line of text.split("\n")) {
    const head = /^(\S+):$/.exec(line);
    if (head) {
      cur = { installed: null, candidate: null, versions: [] };
      out.set(head[1]!, cur);
      continue;
    }
    if (!cur) continue;
    const field = /^ {2}(Installed|Candidate): (.+)$/.exec(line);
    if (field) {
      const v = field[2]!.trim() === "(none)" ? null : field[2]!.trim();
      if (field[1] === "Installed") cur.installed = v;
      else cur.candidate = v;
      continue;
    }
    // " *** 1.2-3 500" (the installed one) or "     1.2-3 500".
    const version = /^ (?:\*\*\*| {3}) (\S+) -?\d+$/.exec(line);
    if (version) cur.versions.push(version[1]!);
  }
  return out;
}

export interface InstallPlan {
  /** `apt-get install` arguments: `pkg=version` where pinned, else `pkg`. */
  args: string[];
  /** One line per package: what is installed and why. */
  lines: string[];
}

/** Pure: what to install for `missing`, given what the archives offer. */
export function planInstall(missing: readonly SystemDep[], policy: Map<string, AptPolicy>): InstallPlan {
  const args: string[] = [];
  const lines: string[] = [];
  for (const d of missing) {
    const p = policy.get(d.pkg);
    if (d.version && p?.versions.includes(d.version)) {
      args.push(`${d.pkg}=${d.version}`);
      lines.push(`  ${d.pkg}=${d.version}: ${d.why}`);
    } else if (p?.candidate) {
      args.push(d.pkg);
      const note = d.version ? ` (pinned ${d.version} is no longer in the archive)` : "";
      lines.push(`  ${d.pkg} ${p.candidate}${note}: ${d.why}`);
    } else {
      args.push(d.pkg);
      lines.push(`  ${d.pkg} (not in the configured archives: apt-get update first): ${d.why}`);
    }
  }
  return { args, lines };
}

function isRootOnDebian(): boolean {
  return process.getuid?.() === 0 && existsSync("/etc/debian_version") && which("apt-get") !== null;
}

function aptPolicy(pkgs: string[]): Map<string, AptPolicy> {
  if (which("apt-cache") === null || pkgs.length === 0) return new Map();
  const r = spawnSync("apt-cache", ["policy", ...pkgs], { encoding: "utf8" });
  return parseAptPolicy(r.stdout ?? "");
}

/** Installs what is missing of `deps` (root on Debian) or throws saying what to run. */
export function ensureSystemDeps(deps: readonly SystemDep[], log: (line: string) => void): void {
  ensureDebianPackages(
    deps.filter((d) => d.manual === undefined),
    log,
  );
  const manual = missingDeps(deps.filter((d) => d.manual !== undefined));
  if (manual.length > 0) {
    const lines = manual.map((d) => `  - ${d.pkg}: ${d.why}\n    ${d.manual}`).join("\n");
    throw new Error(`missing tools that are not Debian packages here:\n${lines}`);
  }
}

function ensureDebianPackages(deps: readonly SystemDep[], log: (line: string) => void): void {
  const missing = missingDeps(deps);
  if (missing.length === 0) return;
  if (!isRootOnDebian()) {
    const plan = planInstall(missing, aptPolicy(missing.map((d) => d.pkg)));
    const command = `apt-get update && apt-get install -y --no-install-recommends ${plan.args.join(" ")}`;
    throw new Error(
      `missing system packages:\n${plan.lines.join("\n")}\nInstall them with:\n  sudo ${command}`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  log("apt-get update");
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  const plan = planInstall(missing, aptPolicy(missing.map((d) => d.pkg)));
  log(`installing ${missing.length} system package(s):\n${plan.lines.join("\n")}`);
  const argv = ["install", "-y", "-qq", "--no-install-recommends", ...plan.args];
  log(`apt-get ${argv.join(" ")}`);
  const r = spawnSync("apt-get", argv, { stdio: "inherit", env });
  if (r.status !== 0)
    throw new Error(`apt-get install failed (exit ${r.status}); run: apt-get ${argv.join(" ")}`);
  const still = missingDeps(missing);
  if (still.length > 0) throw new Error(`still missing after install: ${still.map((d) => d.bin).join(", ")}`);
}
