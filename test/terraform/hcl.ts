// Reading Terraform files for the checks `terraform` cannot run offline (the modules that need
// providers: static.test.ts) and for building test inputs from the example tfvars:
// @cdktf/hcl2json (HCL's own Go parser compiled to WebAssembly) turns .tf and .tfvars text into
// JSON. Literal values come back as JSON values; every expression comes back as its source text
// wrapped in "${...}".
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "@cdktf/hcl2json";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export class HclError extends Error {
  override readonly name = "HclError";
}

/** Parses HCL text (a .tf or .tfvars file); throws HclError with the parser's position on bad syntax. */
export async function parseHcl(filename: string, text: string): Promise<JsonObject> {
  try {
    return (await parse(filename, text)) as JsonObject;
  } catch (e) {
    throw new HclError(`${filename}: ${(e as Error).message}`);
  }
}

export async function parseHclFile(path: string): Promise<JsonObject> {
  return parseHcl(path, readFileSync(path, "utf8"));
}

/** A Terraform module directory: every block of every *.tf file, by kind. */
export interface TfModule {
  dir: string;
  files: string[];
  /** variable name → its block (type, description, default, validation[], sensitive, nullable). */
  variables: Record<string, JsonObject>;
  /** local name → expression or literal. */
  locals: Record<string, Json>;
  /** module name → its call block (source, count/for_each, inputs). */
  modules: Record<string, JsonObject>;
  outputs: Record<string, JsonObject>;
  /** "type.name" → block. */
  resources: Record<string, JsonObject>;
  /** "type.name" → block. */
  data: Record<string, JsonObject>;
  /** terraform { } blocks. */
  terraform: JsonObject[];
  /** Every check block name. */
  checks: string[];
}

const first = (v: Json | undefined): JsonObject => {
  const x = Array.isArray(v) ? v[0] : v;
  return x !== null && typeof x === "object" && !Array.isArray(x) ? x : {};
};

/** Loads every *.tf file of a directory (not recursive: a module is one directory). */
export async function loadModule(dir: string): Promise<TfModule> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".tf"))
    .sort();
  const m: TfModule = {
    dir,
    files,
    variables: {},
    locals: {},
    modules: {},
    outputs: {},
    resources: {},
    data: {},
    terraform: [],
    checks: [],
  };
  for (const f of files) {
    const doc = await parseHclFile(join(dir, f));
    for (const [kind, body] of Object.entries(doc)) {
      const blocks = body as Record<string, Json>;
      switch (kind) {
        case "variable":
          for (const [n, b] of Object.entries(blocks)) m.variables[n] = first(b);
          break;
        case "locals":
          for (const l of body as JsonObject[]) Object.assign(m.locals, l);
          break;
        case "module":
          for (const [n, b] of Object.entries(blocks)) m.modules[n] = first(b);
          break;
        case "output":
          for (const [n, b] of Object.entries(blocks)) m.outputs[n] = first(b);
          break;
        case "resource":
        case "data":
          for (const [type, named] of Object.entries(blocks)) {
            for (const [n, b] of Object.entries(named as JsonObject)) {
              (kind === "resource" ? m.resources : m.data)[`${type}.${n}`] = first(b);
            }
          }
          break;
        case "terraform":
          m.terraform.push(...(body as JsonObject[]));
          break;
        case "check":
          m.checks.push(...Object.keys(blocks));
          break;
        default:
          break;
      }
    }
  }
  return m;
}

/** The validation blocks of a variable, in source order. */
export function validations(variable: JsonObject): { condition: string; error_message: string }[] {
  const v = variable.validation;
  if (!Array.isArray(v)) return [];
  return v.map((x) => {
    const o = x as JsonObject;
    return { condition: String(o.condition ?? ""), error_message: String(o.error_message ?? "") };
  });
}

/** End (exclusive) of the "${...}" that starts at `start`, honouring nested braces and strings. */
function spanEnd(s: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start + 1; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      else if (c === "$" && s[i + 1] === "{") {
        // An interpolation inside a nested string: skip it whole.
        i = spanEnd(s, i) - 1;
      }
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return s.length;
}

/** Every "${...}" interpolation of a template, unwrapped. */
export function interpolations(template: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < template.length; i++) {
    if (template[i] === "$" && template[i + 1] === "{") {
      const end = spanEnd(template, i);
      out.push(template.slice(i + 2, end - 1));
      i = end - 1;
    }
  }
  return out;
}
