// Renders the topology JSON from tfvars files exactly as terraform/outputs.tf does
// (`terraform output -raw topology_json`), without Terraform: the variable types come from
// terraform/variables.tf, every validation there is mirrored (scripts/terraform/rules.ts, same
// messages), and the result is checked against shared/topology/schema.ts.
//
//   npx node scripts/terraform/render-topology.ts terraform/examples/global.tfvars [more.tfvars]
//        [--pretty] [--out FILE] [--env] [--terraform-dir DIR]
//
// --env also reads TF_VAR_<name> for variables no tfvars file sets (as Terraform does), so the
// secrets' validations can be checked before an apply. Exit 0 and the JSON on stdout (or FILE);
// exit 1 and one problem per line on stderr.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ClusterId, PopId, Topology } from "../../shared/topology/schema.ts";
import { parseTopology, validateTopology } from "../../shared/topology/schema.ts";
import { type Json, type JsonObject, loadModule, parseHcl, parseHclFile } from "./hcl.ts";
import { formatRule, type Inputs, RULES } from "./rules.ts";
import { convert, parseType, type TfType } from "./tf-types.ts";

export const TERRAFORM_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "terraform");

/** Variables the topology is made of: without them nothing can be rendered. */
const TOPOLOGY_VARIABLES = ["global_vip", "default_cluster", "clusters", "pops"] as const;

export interface VariableSpec {
  type: TfType;
  default?: Json;
  sensitive: boolean;
  nullable: boolean;
}

export type RenderResult =
  | { ok: true; json: string; topology: Topology; inputs: Partial<Inputs> }
  | { ok: false; errors: string[] };

/** Reads the declared variables (type, default, sensitivity) of a Terraform module directory. */
export async function loadVariables(dir = TERRAFORM_DIR): Promise<Record<string, VariableSpec>> {
  const m = await loadModule(dir);
  const out: Record<string, VariableSpec> = {};
  for (const [name, block] of Object.entries(m.variables)) {
    const spec: VariableSpec = {
      type: typeof block.type === "string" ? parseType(block.type) : { kind: "any" },
      sensitive: block.sensitive === true,
      nullable: block.nullable !== false,
    };
    if ("default" in block) spec.default = block.default ?? null;
    out[name] = spec;
  }
  return out;
}

/** Merges tfvars files in order; a later file overrides an earlier one, as with several -var-file. */
export async function readTfvars(paths: string[]): Promise<JsonObject> {
  const out: JsonObject = {};
  for (const p of paths) Object.assign(out, await parseHclFile(p));
  return out;
}

export interface ResolveOptions {
  /** Environment to read TF_VAR_<name> from for variables no tfvars file sets. */
  env?: Record<string, string | undefined>;
}

/**
 * Turns raw tfvars values into the validated inputs Terraform would see. Errors are Terraform's
 * own (missing required variable, type conversion) or the validations' messages.
 */
export async function resolveInputs(
  raw: JsonObject,
  variables: Record<string, VariableSpec>,
  options: ResolveOptions = {},
): Promise<{ inputs: Partial<Inputs>; errors: string[] }> {
  const errors: string[] = [];
  const values: Record<string, Json> = {};
  for (const name of Object.keys(raw)) {
    if (!(name in variables)) {
      errors.push(`${name}: is not a variable of terraform/variables.tf (a typo?)`);
    } else if (variables[name]!.sensitive) {
      errors.push(
        `${name}: is a secret; set it in the environment (TF_VAR_${name}) or a secret store, never in a tfvars file`,
      );
    }
  }
  for (const [name, spec] of Object.entries(variables)) {
    let value: Json | undefined = raw[name];
    const fromEnv = options.env?.[`TF_VAR_${name}`];
    if (value === undefined && fromEnv !== undefined) {
      value = spec.type.kind === "string" ? fromEnv : await parseEnvValue(name, fromEnv, errors);
    }
    if ((value === undefined || (value === null && !spec.nullable)) && "default" in spec)
      value = spec.default;
    if (value === undefined) {
      if ((TOPOLOGY_VARIABLES as readonly string[]).includes(name)) {
        errors.push(`${name}: is required (no default) and no tfvars file sets it`);
      }
      continue;
    }
    values[name] = convert(value, spec.type, name, errors);
  }
  if (errors.length > 0) return { inputs: values as Partial<Inputs>, errors };
  // Terraform runs every validation of every variable and reports every failure.
  for (const rule of RULES) {
    if (values[rule.variable] === undefined) continue;
    const slots = rule.check(values as unknown as Inputs);
    if (slots !== null) errors.push(formatRule(rule, slots));
  }
  return { inputs: values as Partial<Inputs>, errors };
}

async function parseEnvValue(name: string, text: string, errors: string[]): Promise<Json | undefined> {
  try {
    const doc = await parseHcl(`TF_VAR_${name}`, `v = ${text}\n`);
    return doc.v;
  } catch (e) {
    errors.push(`TF_VAR_${name}: ${(e as Error).message}`);
    return undefined;
  }
}

// ---------------------------------------------------------------- the output expression

/** terraform/outputs.tf `local.topology`, for validated inputs. */
export function topologyObject(
  v: Pick<Inputs, "global_vip" | "default_cluster" | "clusters" | "pops">,
): JsonObject {
  const keys = (m: object): string[] => Object.keys(m).sort();
  return {
    version: 1,
    globalVip: v.global_vip,
    defaultClusterId: v.clusters[v.default_cluster]!.id,
    clusters: keys(v.clusters).map((name) => {
      const c = v.clusters[name]!;
      const o: JsonObject = {
        id: c.id,
        name,
        region: c.region,
        continent: c.continent,
        countries: c.countries,
        latitude: c.latitude,
        longitude: c.longitude,
        signallingUrl: c.signalling_url,
        backbone: c.backbone,
        backboneCidrs: c.backbone_cidrs,
        capacity: c.capacity,
      };
      if (c.vip !== null) o.vip = c.vip;
      return o;
    }),
    pops: keys(v.pops).map((name) => {
      const p = v.pops[name]!;
      const o: JsonObject = {
        id: p.id,
        name,
        region: p.region,
        latitude: p.latitude,
        longitude: p.longitude,
        vip: p.vip ?? v.global_vip,
        backbone: p.backbone,
        backboneCidrs: p.backbone_cidrs,
      };
      const cluster = p.cluster === null ? undefined : v.clusters[p.cluster];
      if (cluster) o.clusterId = cluster.id;
      return o;
    }),
  };
}

// ---------------------------------------------------------------- jsonencode()

/** A number as Terraform's jsonencode writes it: plain decimal, never exponent notation. */
function tfNumber(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`jsonencode: ${n} is not a number Terraform can hold`);
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, lead, frac = "", expText] = m;
  const digits = lead! + frac;
  const exp = Number(expText);
  const point = 1 + exp;
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A string as Go's encoding/json writes it (HTML-safe: <, > and & escaped, as jsonencode does). */
function tfStringLiteral(s: string): string {
  return JSON.stringify(s).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Terraform's jsonencode(): compact, object keys in lexical order. */
export function terraformJsonEncode(v: Json): string {
  if (v === null) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return tfNumber(v);
  if (typeof v === "string") return tfStringLiteral(v);
  if (Array.isArray(v)) return `[${v.map(terraformJsonEncode).join(",")}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${tfStringLiteral(k)}:${terraformJsonEncode(v[k]!)}`).join(",")}}`;
}

// ---------------------------------------------------------------- all together

export async function renderTopology(
  raw: JsonObject,
  options: ResolveOptions & { terraformDir?: string } = {},
): Promise<RenderResult> {
  const variables = await loadVariables(options.terraformDir);
  const { inputs, errors } = await resolveInputs(raw, variables, options);
  if (errors.length > 0) return { ok: false, errors };
  const v = inputs as Inputs;
  const json = terraformJsonEncode(topologyObject(v));
  // The schema every component loads: a failure here is a gap in the mirrored validations.
  const checked = validateTopology(JSON.parse(json));
  if (!checked.ok) {
    return {
      ok: false,
      errors: checked.errors.map((e) => `rendered topology rejected by shared/topology: ${e}`),
    };
  }
  return { ok: true, json, topology: parseTopology(json, "rendered topology"), inputs };
}

export async function renderTopologyFiles(
  tfvarsPaths: string[],
  options: ResolveOptions & { terraformDir?: string } = {},
): Promise<RenderResult> {
  let raw: JsonObject;
  try {
    raw = await readTfvars(tfvarsPaths);
  } catch (e) {
    return { ok: false, errors: [(e as Error).message] };
  }
  return renderTopology(raw, options);
}

/** Branded ids of a rendered topology, for callers that index by them. */
export const topologyIds = (t: Topology): { clusters: ClusterId[]; pops: PopId[] } => ({
  clusters: t.clusters.map((c) => c.id),
  pops: t.pops.map((p) => p.id),
});

async function main(argv: string[]): Promise<number> {
  const files: string[] = [];
  let pretty = false;
  let out: string | undefined;
  let terraformDir: string | undefined;
  let useEnv = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--pretty") pretty = true;
    else if (a === "--env") useEnv = true;
    else if (a === "--out") out = argv[++i];
    else if (a === "--terraform-dir") terraformDir = argv[++i];
    else if (a === "--help" || a === "-h") {
      process.stdout.write(
        `${readFileSync(fileURLToPath(import.meta.url), "utf8")
          .split("\n")
          .slice(0, 12)
          .join("\n")}\n`,
      );
      return 0;
    } else if (a.startsWith("--")) {
      process.stderr.write(`unknown option ${a}\n`);
      return 2;
    } else files.push(a);
  }
  if (files.length === 0) {
    process.stderr.write("usage: render-topology.ts FILE.tfvars [...] [--pretty] [--out FILE] [--env]\n");
    return 2;
  }
  const options: ResolveOptions & { terraformDir?: string } = {};
  if (terraformDir !== undefined) options.terraformDir = terraformDir;
  if (useEnv) options.env = process.env;
  const r = await renderTopologyFiles(files, options);
  if (!r.ok) {
    process.stderr.write(`${files.join(", ")}: ${r.errors.length} problem(s)\n`);
    for (const e of r.errors) process.stderr.write(`  - ${e}\n`);
    return 1;
  }
  const text = pretty ? `${JSON.stringify(JSON.parse(r.json), null, 2)}\n` : r.json;
  if (out !== undefined) writeFileSync(out, text);
  else process.stdout.write(pretty ? text : `${text}\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
