// scripts/lib/system-deps.ts: what `npm run setup:system` installs, pinned where the archive allows.
import { describe, expect, it } from "vitest";
import {
  missingDeps,
  parseAptPolicy,
  planInstall,
  SYSTEM_DEPS,
  type SystemDep,
  TEST_DEPS,
} from "../../scripts/lib/system-deps.ts";

// `apt-cache policy redis-server nftables coturn` on Debian 12 (coturn cut to one version).
const POLICY = `redis-server:
  Installed: 5:7.0.15-1~deb12u10
  Candidate: 5:7.0.15-1~deb12u10
  Version table:
 *** 5:7.0.15-1~deb12u10 500
        500 http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
        100 /var/lib/dpkg/status
     5:7.0.15-1~deb12u7 500
        500 http://deb.debian.org/debian bookworm/main amd64 Packages
nftables:
  Installed: (none)
  Candidate: 1.0.6-2+deb12u2
  Version table:
     1.0.6-2+deb12u2 500
        500 http://deb.debian.org/debian bookworm/main amd64 Packages
coturn:
  Installed: (none)
  Candidate: 4.6.1-1+deb12u1
  Version table:
     4.6.1-1+deb12u1 500
        500 http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
`;

const dep = (pkg: string): SystemDep => SYSTEM_DEPS.find((d) => d.pkg === pkg)!;

describe("system packages", () => {
  it("reads apt-cache policy: installed, candidate and every version offered", () => {
    const p = parseAptPolicy(POLICY);
    expect(p.get("redis-server")).toEqual({
      installed: "5:7.0.15-1~deb12u10",
      candidate: "5:7.0.15-1~deb12u10",
      versions: ["5:7.0.15-1~deb12u10", "5:7.0.15-1~deb12u7"],
    });
    expect(p.get("nftables")).toEqual({
      installed: null,
      candidate: "1.0.6-2+deb12u2",
      versions: ["1.0.6-2+deb12u2"],
    });
  });

  it("pins the tested version while the archive has it, else installs the candidate and says so", () => {
    const plan = planInstall(
      [dep("nftables"), dep("coturn"), { pkg: "gone", bin: "gone", why: "w", for: "test" }],
      parseAptPolicy(POLICY),
    );
    expect(plan.args).toEqual(["nftables=1.0.6-2+deb12u2", "coturn", "gone"]);
    expect(plan.lines[0]).toBe(`  nftables=1.0.6-2+deb12u2: ${dep("nftables").why}`);
    expect(plan.lines[1]).toContain("coturn 4.6.1-1+deb12u1 (pinned 4.6.1-1 is no longer in the archive)");
    expect(plan.lines[2]).toContain("gone (not in the configured archives");
  });

  it("says why for every package; the tests never need a benchmark-only one", () => {
    for (const d of SYSTEM_DEPS) expect(d.why.length, d.pkg).toBeGreaterThan(10);
    expect(TEST_DEPS.map((d) => d.pkg)).not.toContain("coturn");
    expect(TEST_DEPS.map((d) => d.pkg)).toEqual(
      expect.arrayContaining(["redis-server", "chromium", "gcc", "make", "python3", "nftables", "terraform"]),
    );
    expect(dep("coturn").for).toBe("bench");
  });

  it("finds what is missing by its binary", () => {
    const present = new Set(["redis-server", "chromium"]);
    const missing = missingDeps([dep("redis-server"), dep("chromium"), dep("nftables")], (b) =>
      present.has(b) ? `/usr/bin/${b}` : null,
    );
    expect(missing.map((d) => d.pkg)).toEqual(["nftables"]);
  });
});
