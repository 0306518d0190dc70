// The real `terraform` binary judges terraform/: formatting, validation of every configuration
// that needs no provider, and `terraform test` of the modules that own every input's type,
// default and validation. A missing binary fails here with how to install it (never a skip).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureSystemDeps, TEST_DEPS } from "../../scripts/lib/system-deps.ts";
import { TERRAFORM_DIR, TerraformSandbox, terraformPath } from "../../scripts/terraform/run.ts";

const OFFLINE = ["modules/topology", "modules/settings", "preview"];
const TESTED = ["modules/topology", "modules/settings"];

let sandbox: TerraformSandbox;
beforeAll(async () => {
  sandbox = await TerraformSandbox.create();
});
afterAll(() => sandbox?.dispose());

/** `run "..."` blocks in a module's tests/*.tftest.hcl: what `terraform test` must report passing. */
function runBlocks(moduleDir: string): number {
  const dir = join(moduleDir, "tests");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".tftest.hcl"))
    .reduce((n, f) => n + [...readFileSync(join(dir, f), "utf8").matchAll(/^run "/gm)].length, 0);
}

describe("the terraform binary", () => {
  it("is installed (scripts/lib/system-deps.ts says how otherwise)", () => {
    expect(terraformPath()).toMatch(/terraform$/);
  });

  it("is a required test dependency: without it `npm test` stops and says how to install it", () => {
    const dep = TEST_DEPS.find((d) => d.bin === "terraform");
    expect(dep?.manual).toContain("https://developer.hashicorp.com/terraform/install");
    const absent = { ...dep!, bin: `terraform-absent-${process.pid}` };
    expect(() => ensureSystemDeps([absent], () => {})).toThrow(
      /not Debian packages here:\n {2}- terraform: .*\n {4}install Terraform >= 1\.9 from https:\/\/developer\.hashicorp\.com/,
    );
  });

  it("is 1.9 or newer (validations that refer to other variables)", async () => {
    const r = await sandbox.run(TERRAFORM_DIR, ["version", "-json"]);
    const version = (JSON.parse(r.stdout) as { terraform_version: string }).terraform_version;
    const [major = 0, minor = 0] = version.split(".").map(Number);
    expect(major > 1 || (major === 1 && minor >= 9), version).toBe(true);
  });
});

describe("terraform fmt", () => {
  it("finds nothing to change in terraform/ (every .tf, .tfvars and .tftest.hcl file)", async () => {
    const r = await sandbox.run(TERRAFORM_DIR, ["fmt", "-check", "-recursive", "-diff", "-no-color"]);
    expect(r.stdout, "run `terraform fmt -recursive terraform/`").toBe("");
    expect(r.code).toBe(0);
  });
});

describe.each(OFFLINE)("terraform validate %s", (dir) => {
  it("initialises without a provider or a backend, and is valid", async () => {
    const cwd = join(TERRAFORM_DIR, dir);
    const init = await sandbox.init(cwd);
    expect(init.stderr).toBe("");
    expect(init.code).toBe(0);
    const r = await sandbox.run(cwd, ["validate", "-json", "-no-color"]);
    const result = JSON.parse(r.stdout) as { valid: boolean; diagnostics: unknown[] };
    expect(result.diagnostics).toEqual([]);
    expect(result.valid).toBe(true);
  });
});

describe.each(TESTED)("terraform test %s", (dir) => {
  it("passes every run block, skipping none", async () => {
    const cwd = join(TERRAFORM_DIR, dir);
    expect((await sandbox.init(cwd)).code).toBe(0);
    const r = await sandbox.run(cwd, ["test", "-no-color"]);
    const runs = runBlocks(cwd);
    expect(runs).toBeGreaterThan(20);
    expect(r.stdout, relative(TERRAFORM_DIR, cwd)).toContain(`Success! ${runs} passed, 0 failed.`);
    expect(r.code).toBe(0);
  });
});

describe("every validation has a terraform test", () => {
  it.each(TESTED)("%s: at least as many runs expect a variable to fail as it has validations", (dir) => {
    const cwd = join(TERRAFORM_DIR, dir);
    const variables = readFileSync(join(cwd, "variables.tf"), "utf8");
    const validations = new Map<string, number>();
    for (const block of variables.split(/^variable "/m).slice(1)) {
      const n = [...block.matchAll(/^ {2}validation \{/gm)].length;
      if (n > 0) validations.set(block.slice(0, block.indexOf('"')), n);
    }
    const tests = readdirSync(join(cwd, "tests"))
      .map((f) => readFileSync(join(cwd, "tests", f), "utf8"))
      .join("\n");
    const runs = new Map<string, number>();
    for (const [, list] of tests.matchAll(/expect_failures = \[([^\]]+)\]/g)) {
      for (const v of list!.split(",").map((s) => s.trim().replace(/^var\./, "")))
        runs.set(v, (runs.get(v) ?? 0) + 1);
    }
    expect(validations.size).toBeGreaterThan(3);
    for (const [name, n] of validations)
      expect(runs.get(name) ?? 0, `runs expecting var.${name} to fail`).toBeGreaterThanOrEqual(n);
  });
});
