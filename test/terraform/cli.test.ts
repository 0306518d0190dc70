// scripts/terraform/render-topology.ts as an operator runs it (real terraform underneath): exit
// codes, stdout, stderr, --out.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TERRAFORM_DIR } from "../../scripts/terraform/render-topology.ts";
import { parseTopology } from "../../shared/topology/schema.ts";

const SCRIPT = join(TERRAFORM_DIR, "..", "scripts", "terraform", "render-topology.ts");
const EXAMPLE = join(TERRAFORM_DIR, "examples", "global.tfvars");
const dir = mkdtempSync(join(tmpdir(), "gr-render-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (...args: string[]) =>
  spawnSync(process.execPath, [SCRIPT, ...args], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });

describe("render-topology CLI", () => {
  it("prints the compact topology for the example, exits 0, and writes nothing into the repository", () => {
    // Terraform's working files live in a temporary directory.
    const status = () =>
      spawnSync("git", ["status", "--porcelain", "--ignored", "--untracked-files=all", "terraform"], {
        cwd: join(TERRAFORM_DIR, ".."),
        encoding: "utf8",
      }).stdout;
    const before = status();
    const r = run(EXAMPLE);
    expect(status()).toBe(before);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const text = r.stdout.trim();
    expect(text.startsWith('{"clusters":[')).toBe(true);
    expect(parseTopology(text, "stdout").pops.length).toBeGreaterThanOrEqual(5);
  });

  it("writes a pretty file with --out that parseTopology loads", () => {
    const out = join(dir, "topology.json");
    const r = run(EXAMPLE, "--pretty", "--out", out);
    expect(r.status).toBe(0);
    const text = readFileSync(out, "utf8");
    expect(text).toContain('\n  "clusters": [');
    expect(parseTopology(text, out).clusters.length).toBeGreaterThanOrEqual(4);
  });

  it("a later tfvars file overrides an earlier one, and a bad value exits 1 with the message on stderr", () => {
    const override = join(dir, "override.tfvars");
    writeFileSync(override, 'global_vip = "192.0.2.10:99999"\n');
    const r = run(EXAMPLE, override);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      'global_vip must be "ip:port" or "[ipv6]:port" with a literal IP and a port from 1 to 65535; got 192.0.2.10:99999.',
    );
  });

  it("a syntax error names the file and line", () => {
    const broken = join(dir, "broken.tfvars");
    writeFileSync(broken, "pops = {\n  fra = { id = 1,\n");
    const r = run(broken);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${broken}:3: Missing expression`);
  });

  it("a secret in a tfvars file is refused, and its value is not printed", () => {
    const secret = Buffer.alloc(40, 9).toString("base64");
    const withSecret = join(dir, "secret.tfvars");
    writeFileSync(withSecret, `cluster_secret = "${secret}"\n`);
    const r = run(EXAMPLE, withSecret);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("cluster_secret is a secret: set TF_VAR_cluster_secret in the environment");
    expect(r.stderr).not.toContain(secret);
  });

  it("an unknown option or no file is a usage error (exit 2)", () => {
    const unknown = run(EXAMPLE, "--env");
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown option --env");
    const none = run();
    expect(none.status).toBe(2);
    expect(none.stderr).toContain("usage: render-topology.ts FILE.tfvars");
  });
});
