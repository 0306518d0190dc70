// Runs the real `terraform` binary on the repository's provider-free configurations
// (terraform/preview, terraform/modules/topology, terraform/modules/settings) without writing
// anything into the repository or the user's home: every run gets a temporary TF_DATA_DIR, CLI
// configuration and HOME, and no TF_VAR_* from the caller's environment.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { TEST_DEPS, which } from "../lib/system-deps.ts";

export const TERRAFORM_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "terraform");

/** How to get the binary (scripts/lib/system-deps.ts): it is not a Debian package here. */
export const TERRAFORM_INSTALL = TEST_DEPS.find((d) => d.bin === "terraform")?.manual ?? "install Terraform";

export class TerraformNotFoundError extends Error {
  override readonly name = "TerraformNotFoundError";
  constructor() {
    super(`terraform is not on PATH (nor in /usr/local/bin): ${TERRAFORM_INSTALL}`);
  }
}

/** Absolute path of the terraform binary, or TerraformNotFoundError. */
export function terraformPath(): string {
  const p = which("terraform");
  if (p === null) throw new TerraformNotFoundError();
  return p;
}

export interface TerraformResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** One Terraform diagnostic of a `-json` run (plan, validate, test). */
export interface Diagnostic {
  severity: "error" | "warning";
  summary: string;
  detail: string;
  range?: { filename: string; start: { line: number } };
}

/** A scratch area for Terraform runs; dispose() removes it. */
export class TerraformSandbox {
  readonly dir: string;
  readonly #env: Record<string, string>;
  readonly #bin: string;

  private constructor(dir: string, env: Record<string, string>, bin: string) {
    this.dir = dir;
    this.#env = env;
    this.#bin = bin;
  }

  static async create(): Promise<TerraformSandbox> {
    const bin = terraformPath();
    const dir = await mkdtemp(join(tmpdir(), "gr-terraform-"));
    const rc = join(dir, "terraformrc");
    await writeFile(rc, "disable_checkpoint = true\n");
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      TF_CLI_CONFIG_FILE: rc,
      TF_DATA_DIR: join(dir, "data"),
      CHECKPOINT_DISABLE: "1",
      TF_IN_AUTOMATION: "1",
      TF_INPUT: "0",
    };
    return new TerraformSandbox(dir, env, bin);
  }

  /** Runs `terraform -chdir=<cwd> <args>`; never rejects on a non-zero exit. */
  run(cwd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<TerraformResult> {
    return new Promise((resolve, reject) => {
      execFile(
        this.#bin,
        [`-chdir=${cwd}`, ...args],
        { env: { ...this.#env, ...extraEnv }, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (err && typeof err.code !== "number") reject(err);
          else resolve({ code: typeof err?.code === "number" ? err.code : 0, stdout, stderr });
        },
      );
    });
  }

  /** `init -backend=false`: provider-free configurations only need their local modules noted. */
  async init(cwd: string): Promise<TerraformResult> {
    return this.run(cwd, ["init", "-backend=false", "-input=false", "-no-color"]);
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** The diagnostics of a `terraform plan -json` (or apply) stream. */
export function streamDiagnostics(stdout: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const m = JSON.parse(line) as { type?: string; diagnostic?: Diagnostic };
    if (m.type === "diagnostic" && m.diagnostic) out.push(m.diagnostic);
  }
  return out;
}

/**
 * One line an operator can act on. A failed validation is its error_message alone (the range
 * points at a module call, not at the operator's file); anything else keeps its summary and, when
 * it points into a tfvars file, where.
 */
export function describeDiagnostic(d: Diagnostic): string {
  const detail = (d.detail ?? "")
    .split("\n\n")[0]!
    .replace(/\s*\n\s*/g, " ")
    .trim();
  if (d.summary === "Invalid value for variable" && detail) return detail;
  const inTfvars = d.range !== undefined && /\.tfvars(\.json)?$/.test(d.range.filename);
  const where = inTfvars ? `${d.range!.filename}:${d.range!.start.line}: ` : "";
  return `${where}${d.summary}${detail ? `: ${detail}` : ""}`;
}
