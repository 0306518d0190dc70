// Finds (or, as root on Debian, installs) the system packages the tests need: redis-server for
// the relay's and transceiver's Redis tests, chromium for the browser tests, GStreamer's WHIP
// client and Firefox for the interop tests, terraform for the Terraform tests. Never skips
// silently: when a package is missing and cannot be installed, it says the exact command to run
// and fails.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

export interface SystemDep {
  /** Debian package name (for a dependency with `manual`, only its name in messages). */
  pkg: string;
  /** Binary the tests run. */
  bin: string;
  why: string;
  /** Not a Debian package here: how to install it by hand (never installed automatically). */
  manual?: string;
}

export const TEST_DEPS: SystemDep[] = [
  {
    pkg: "redis-server",
    bin: "redis-server",
    why: "relay flow mirror and membership tests start their own Redis",
  },
  { pkg: "chromium", bin: "chromium", why: "end-to-end and dashboard tests drive a real browser" },
  { pkg: "curl", bin: "curl", why: "a test runs the curl line `npm start` prints, as a newcomer pastes it" },
  {
    pkg: "prometheus",
    bin: "promtool",
    why: "the alert rules are checked with promtool and the dashboard is compared with a real Prometheus",
  },
  {
    pkg: "simple-whip-client",
    bin: "whip-client",
    why: "interop tests publish with GStreamer's WHIP client (its Depends bring webrtcbin, nice, opus, vp8)",
  },
  {
    pkg: "gcc",
    bin: "gcc",
    why: "the WHIP interop test builds a libgupnp-igd stand-in (Debian 12's whip-client aborts on a libsoup 2/3 clash)",
  },
  { pkg: "firefox-esr", bin: "firefox-esr", why: "interop tests run the demo page in headless Firefox" },
  {
    pkg: "terraform",
    bin: "terraform",
    why: "terraform test, fmt and validate judge terraform/, and render the topology (scripts/terraform)",
    manual:
      "install Terraform >= 1.9 from https://developer.hashicorp.com/terraform/install (a single binary: unzip terraform_<version>_linux_amd64.zip into /usr/local/bin)",
  },
];

export function which(bin: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const p = `${dir}/${bin}`;
    if (dir && existsSync(p)) return p;
  }
  for (const p of [`/usr/bin/${bin}`, `/usr/sbin/${bin}`, `/usr/local/bin/${bin}`])
    if (existsSync(p)) return p;
  return null;
}

function isRootOnDebian(): boolean {
  return process.getuid?.() === 0 && existsSync("/etc/debian_version") && which("apt-get") !== null;
}

export function ensureSystemDeps(deps: SystemDep[], log: (line: string) => void): void {
  ensureDebianPackages(
    deps.filter((d) => d.manual === undefined),
    log,
  );
  const manual = deps.filter((d) => d.manual !== undefined && which(d.bin) === null);
  if (manual.length > 0) {
    const lines = manual.map((d) => `  - ${d.pkg}: ${d.why}\n    ${d.manual}`).join("\n");
    throw new Error(`missing tools that are not Debian packages here:\n${lines}`);
  }
}

function ensureDebianPackages(deps: SystemDep[], log: (line: string) => void): void {
  const missing = deps.filter((d) => which(d.bin) === null);
  if (missing.length === 0) return;
  const pkgs = missing.map((d) => d.pkg).join(" ");
  const command = `apt-get update && apt-get install -y --no-install-recommends ${pkgs}`;
  if (!isRootOnDebian()) {
    const lines = missing.map((d) => `  - ${d.pkg}: ${d.why}`).join("\n");
    throw new Error(`missing system packages:\n${lines}\nInstall them with:\n  sudo ${command}`);
  }
  log(`installing system packages: ${pkgs}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  const r = spawnSync(
    "apt-get",
    ["install", "-y", "-qq", "--no-install-recommends", ...missing.map((d) => d.pkg)],
    {
      stdio: "inherit",
      env,
    },
  );
  if (r.status !== 0) throw new Error(`apt-get install failed (exit ${r.status}); run: ${command}`);
  const still = missing.filter((d) => which(d.bin) === null);
  if (still.length > 0) throw new Error(`still missing after install: ${still.map((d) => d.bin).join(", ")}`);
}
