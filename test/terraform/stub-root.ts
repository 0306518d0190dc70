// The deployment's root module with its provider-needing modules stubbed, so the real `terraform`
// can validate and plan it offline. Copied into a sandbox: the root's main.tf, variables.tf and
// outputs.tf as they are, modules/topology and modules/settings as they are, and for edge,
// anycast, pop and cluster their variables.tf as they are with every output declared as null but
// `summary`, which echoes the module's non-sensitive inputs (so a plan shows what the root passed).
// What this checks with the real binary: every module call's arguments against the modules'
// variables (names, types, validations), every reference and function in the root, the stack
// guard, and that the root renders the same topology as terraform/preview. What it cannot check:
// providers.tf and everything inside the stubbed modules (static.test.ts reads those).
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type Diagnostic,
  streamDiagnostics,
  TERRAFORM_DIR,
  type TerraformResult,
  TerraformSandbox,
} from "../../scripts/terraform/run.ts";
import { loadModule } from "./hcl.ts";

export const PROVIDER_MODULES = ["edge", "anycast", "pop", "cluster"] as const;
const ROOT_FILES = ["main.tf", "variables.tf", "outputs.tf"];
const OFFLINE_MODULES = ["topology", "settings"];

/** Test-only secrets: 32 bytes each, in the formats modules/settings accepts. */
export const TEST_SECRETS = {
  TF_VAR_hint_keys: `1:${Buffer.alloc(32, 1).toString("base64")}`,
  TF_VAR_call_id_keys: `1:${Buffer.alloc(32, 2).toString("base64")}`,
  TF_VAR_cluster_secret: Buffer.alloc(32, 3).toString("base64"),
  TF_VAR_edge_secrets: "{}",
};

export interface PlanResult extends TerraformResult {
  diagnostics: Diagnostic[];
  errors: Diagnostic[];
}

export class StubRoot {
  readonly sandbox: TerraformSandbox;
  readonly dir: string;

  private constructor(sandbox: TerraformSandbox, dir: string) {
    this.sandbox = sandbox;
    this.dir = dir;
  }

  static async create(): Promise<StubRoot> {
    const sandbox = await TerraformSandbox.create();
    const dir = join(sandbox.dir, "root");
    await mkdir(join(dir, "modules"), { recursive: true });
    for (const f of ROOT_FILES) await cp(join(TERRAFORM_DIR, f), join(dir, f));
    // versions.tf without required_providers, and no backend (local state in the sandbox).
    await writeFile(join(dir, "versions.tf"), 'terraform {\n  required_version = ">= 1.9.0"\n}\n');
    for (const m of OFFLINE_MODULES) {
      await cp(join(TERRAFORM_DIR, "modules", m), join(dir, "modules", m), {
        recursive: true,
        filter: (src) => !src.includes(`${m}/tests`),
      });
    }
    for (const m of PROVIDER_MODULES) {
      const from = join(TERRAFORM_DIR, "modules", m);
      const to = join(dir, "modules", m);
      await mkdir(to);
      await cp(join(from, "variables.tf"), join(to, "variables.tf"));
      const outputs = [...(await readFile(join(from, "outputs.tf"), "utf8")).matchAll(/^output "(\w+)"/gm)];
      const inputs = Object.entries((await loadModule(from)).variables)
        .filter(([, v]) => v.sensitive !== true)
        .map(([name]) => `    ${name} = var.${name}\n`)
        .join("");
      const value = (name: string) => (name === "summary" ? `{\n${inputs}  }` : "null");
      await writeFile(
        join(to, "outputs.tf"),
        outputs.map(([, name]) => `output "${name}" {\n  value = ${value(name!)}\n}\n`).join("\n"),
      );
    }
    const root = new StubRoot(sandbox, dir);
    const init = await sandbox.init(dir);
    if (init.code !== 0) throw new Error(`terraform init of the stub root failed:\n${init.stderr}`);
    return root;
  }

  run(args: string[], env: Record<string, string> = {}): Promise<TerraformResult> {
    return this.sandbox.run(this.dir, args, env);
  }

  /** Creates a workspace (local state in the sandbox) and selects it. */
  async workspace(name: string): Promise<void> {
    const r = await this.run(["workspace", "select", "-or-create", "-no-color", name]);
    if (r.code !== 0) throw new Error(`terraform workspace select ${name}: ${r.stderr}`);
  }

  /** `terraform plan -json` with these var files and -var settings, the test secrets in TF_VAR_*. */
  async plan(
    varFiles: string[],
    vars: Record<string, string> = {},
    env: Record<string, string> = TEST_SECRETS,
    out?: string,
  ): Promise<PlanResult> {
    const args = ["plan", "-input=false", "-lock=false", "-json"];
    if (out !== undefined) args.push(`-out=${out}`);
    for (const f of varFiles) args.push(`-var-file=${f}`);
    for (const [k, v] of Object.entries(vars)) args.push("-var", `${k}=${v}`);
    const r = await this.run(args, env);
    const diagnostics = streamDiagnostics(r.stdout);
    return { ...r, diagnostics, errors: diagnostics.filter((d) => d.severity === "error") };
  }

  dispose(): Promise<void> {
    return this.sandbox.dispose();
  }
}
