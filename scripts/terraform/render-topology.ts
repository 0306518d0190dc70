// Renders the topology JSON from tfvars files with the real `terraform` binary: it plans
// terraform/preview (a root module with no provider, so it runs offline), which passes the inputs
// to terraform/modules/topology exactly as the deployment does. The bytes are those of
// `terraform output -raw topology_json` after an apply; every validation is Terraform's own. The
// result is then checked against shared/topology/schema.ts, which Terraform cannot do.
//
//   npx node scripts/terraform/render-topology.ts terraform/examples/global.tfvars [more.tfvars]
//        [--pretty] [--out FILE]
//
// Later files override earlier ones (as several -var-file). Secrets must not be in these files
// (refused) and are not read from the environment. Exit 0 and the JSON on stdout (or FILE);
// exit 1 and one problem per line on stderr; exit 2 on a usage error.
import { writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseTopology, type Topology, validateTopology } from "../../shared/topology/schema.ts";
import {
  describeDiagnostic,
  streamDiagnostics,
  TERRAFORM_DIR,
  TerraformNotFoundError,
  TerraformSandbox,
} from "./run.ts";

export { TERRAFORM_DIR } from "./run.ts";

export const PREVIEW_DIR = join(TERRAFORM_DIR, "preview");

/** Why a topology could not be rendered: one operator-readable problem per entry. */
export class TopologyRenderError extends Error {
  override readonly name = "TopologyRenderError";
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join("\n"));
    this.problems = problems;
  }
}

export interface RenderedTopology {
  /** Exactly Terraform's jsonencode() of the topology (compact, keys sorted). */
  json: string;
  topology: Topology;
}

/** The topology Terraform renders from these tfvars files, or TopologyRenderError. */
export async function renderTopology(tfvarsFiles: string[]): Promise<Topology> {
  return (await renderTopologyJson(tfvarsFiles)).topology;
}

/** renderTopology, with the exact JSON text as well. */
export async function renderTopologyJson(tfvarsFiles: string[]): Promise<RenderedTopology> {
  if (tfvarsFiles.length === 0) throw new TopologyRenderError(["no tfvars file given"]);
  let sandbox: TerraformSandbox;
  try {
    sandbox = await TerraformSandbox.create();
  } catch (e) {
    if (e instanceof TerraformNotFoundError) throw new TopologyRenderError([e.message]);
    throw e;
  }
  try {
    const init = await sandbox.init(PREVIEW_DIR);
    if (init.code !== 0) throw new TopologyRenderError([`terraform init failed: ${init.stderr.trim()}`]);
    const plan = join(sandbox.dir, "topology.tfplan");
    const varFiles = tfvarsFiles.map((f) => `-var-file=${resolve(f)}`);
    const planned = await sandbox.run(PREVIEW_DIR, [
      "plan",
      "-input=false",
      "-lock=false",
      "-json",
      `-out=${plan}`,
      ...varFiles,
    ]);
    const errors = streamDiagnostics(planned.stdout).filter((d) => d.severity === "error");
    if (planned.code !== 0) {
      const problems = errors.map(describeDiagnostic);
      throw new TopologyRenderError(problems.length > 0 ? problems : [planned.stderr.trim()]);
    }
    const shown = await sandbox.run(PREVIEW_DIR, ["show", "-json", plan]);
    if (shown.code !== 0) throw new TopologyRenderError([`terraform show failed: ${shown.stderr.trim()}`]);
    const doc = JSON.parse(shown.stdout) as {
      planned_values?: { outputs?: { topology_json?: { value?: unknown } } };
    };
    const json = doc.planned_values?.outputs?.topology_json?.value;
    if (typeof json !== "string") throw new TopologyRenderError(["the plan has no topology_json output"]);
    // The schema every component loads: a failure here is a gap in the Terraform validations.
    const checked = validateTopology(JSON.parse(json));
    if (!checked.ok) {
      throw new TopologyRenderError(
        checked.errors.map((e) => `rendered topology rejected by shared/topology: ${e}`),
      );
    }
    return { json, topology: parseTopology(json, "rendered topology") };
  } finally {
    await sandbox.dispose();
  }
}

const USAGE = "usage: render-topology.ts FILE.tfvars [...] [--pretty] [--out FILE]";

async function main(argv: string[]): Promise<number> {
  const files: string[] = [];
  let pretty = false;
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--pretty") pretty = true;
    else if (a === "--out") {
      out = argv[++i];
      if (out === undefined) {
        process.stderr.write(`--out needs a file\n${USAGE}\n`);
        return 2;
      }
    } else if (a === "--help" || a === "-h") {
      const text = await readFile(fileURLToPath(import.meta.url), "utf8");
      process.stdout.write(`${text.split("\n").slice(0, 12).join("\n")}\n`);
      return 0;
    } else if (a.startsWith("--")) {
      process.stderr.write(`unknown option ${a}\n${USAGE}\n`);
      return 2;
    } else files.push(a);
  }
  if (files.length === 0) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let rendered: RenderedTopology;
  try {
    rendered = await renderTopologyJson(files);
  } catch (e) {
    if (!(e instanceof TopologyRenderError)) throw e;
    process.stderr.write(`${files.join(", ")}: ${e.problems.length} problem(s)\n`);
    for (const p of e.problems) process.stderr.write(`  - ${p}\n`);
    return 1;
  }
  const text = pretty ? `${JSON.stringify(JSON.parse(rendered.json), null, 2)}\n` : `${rendered.json}\n`;
  if (out !== undefined) writeFileSync(out, pretty ? text : rendered.json);
  else process.stdout.write(text);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
