// What the terraform binary cannot check offline: the modules that need providers (edge, anycast,
// pop, cluster) cannot be initialised without downloading them, so `terraform validate` cannot run
// on them or on the root's providers.tf. These checks read those files with HCL's own parser
// (hcl.ts): every module input typed and described, secrets sensitive, every reference and
// function resolvable, every resource from a pinned provider, the user-data template's variables.
// The root's wiring is checked by the real binary with these modules stubbed (root.test.ts).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { TERRAFORM_DIR } from "../../scripts/terraform/run.ts";
import {
  interpolations,
  type Json,
  type JsonObject,
  loadModule,
  parseHclFile,
  type TfModule,
  validations,
} from "./hcl.ts";

const MODULES = ["edge", "anycast", "pop", "cluster"];
const OFFLINE_MODULES = ["topology", "settings"];
const SECRETS = ["hint_keys", "call_id_keys", "cluster_secret", "edge_secrets", "backbone_keys"];
/** Secrets only some stacks need: null by default (backbone_keys: only with conference). */
const OPTIONAL_SECRETS = ["backbone_keys"];

// Terraform's built-in functions (language reference, "Functions").
const TF_FUNCTIONS = new Set(
  `abs ceil floor log max min parseint pow signum chomp endswith format formatlist indent join lower
  regex regexall replace split startswith strcontains strrev substr templatestring title trim trimprefix
  trimsuffix trimspace upper alltrue anytrue chunklist coalesce coalescelist compact concat contains
  distinct element flatten index keys length lookup matchkeys merge one range reverse setintersection
  setproduct setsubtract setunion slice sort sum transpose values zipmap base64decode base64encode
  base64gzip csvdecode jsondecode jsonencode textdecodebase64 textencodebase64 urlencode yamldecode
  yamlencode abspath dirname pathexpand basename file fileexists fileset filebase64 templatefile
  formatdate plantimestamp timeadd timecmp timestamp base64sha256 base64sha512 bcrypt filebase64sha256
  filebase64sha512 filemd5 filesha1 filesha256 filesha512 md5 rsadecrypt sha1 sha256 sha512 uuid uuidv5
  cidrhost cidrnetmask cidrsubnet cidrsubnets can ephemeralasnull issensitive nonsensitive sensitive
  tobool tolist tomap tonumber toset tostring try`.split(/\s+/),
);

/** Every expression text in a parsed document (interpolations of templates, unwrapped). */
function expressions(v: Json, skipKeys: ReadonlySet<string> = new Set()): string[] {
  if (typeof v === "string") return v.includes("${") ? interpolations(v) : [];
  if (Array.isArray(v)) return v.flatMap((x) => expressions(x, skipKeys));
  if (v !== null && typeof v === "object")
    return Object.entries(v).flatMap(([k, x]) => (skipKeys.has(k) ? [] : expressions(x, skipKeys)));
  return [];
}

/** All parsed documents of a module directory, as one list. */
async function documents(dir: string): Promise<JsonObject[]> {
  const files = readdirSync(dir).filter((f) => f.endsWith(".tf"));
  return Promise.all(files.map((f) => parseHclFile(join(dir, f))));
}

let root: TfModule;
const mods: Record<string, TfModule> = {};

beforeAll(async () => {
  root = await loadModule(TERRAFORM_DIR);
  for (const m of [...MODULES, ...OFFLINE_MODULES])
    mods[m] = await loadModule(join(TERRAFORM_DIR, "modules", m));
});

describe("inputs (static)", () => {
  it("root variables only pass values through: described, and validated in a module, never here", () => {
    const names = Object.keys(root.variables);
    expect(names).toEqual(
      expect.arrayContaining(["pops", "clusters", "global_vip", "default_cluster", ...SECRETS]),
    );
    for (const [name, v] of Object.entries(root.variables)) {
      expect(String(v.description ?? "").length, `${name}.description`).toBeGreaterThan(20);
      // Terraform 1.11 prints a root variable's value next to its failed validation even when it
      // is sensitive; the modules' validations do not (root.test.ts checks the secrets).
      expect(validations(v), `${name}: validations belong in modules/topology or modules/settings`).toEqual(
        [],
      );
    }
  });

  it("secrets are sensitive and have no default (but null for an optional one); no other variable looks like a secret", () => {
    for (const name of SECRETS) {
      const v = root.variables[name]!;
      expect(v.sensitive, name).toBe(true);
      if (OPTIONAL_SECRETS.includes(name)) expect(v.default, `${name}'s default`).toBeNull();
      else expect("default" in v, `${name} has a default`).toBe(false);
    }
    for (const [name, v] of Object.entries(root.variables)) {
      if (/key|secret|token|password/i.test(name)) expect(v.sensitive, name).toBe(true);
    }
    // Inside modules, every variable or output carrying a secret is sensitive too.
    for (const [mod, m] of Object.entries(mods)) {
      for (const [name, v] of Object.entries(m.variables)) {
        if (/keys$|secret/i.test(name)) expect(v.sensitive, `${mod}.${name}`).toBe(true);
      }
      for (const [name, o] of Object.entries(m.outputs)) {
        if (/keys$|secret/i.test(name)) expect(o.sensitive, `${mod} output ${name}`).toBe(true);
      }
    }
  });

  it("every module variable has a type and a description", () => {
    for (const [mod, m] of Object.entries(mods)) {
      expect(Object.keys(m.variables).length, mod).toBeGreaterThan(3);
      for (const [name, v] of Object.entries(m.variables)) {
        expect(typeof v.type, `${mod}.${name}.type`).toBe("string");
        expect(String(v.description ?? "").length, `${mod}.${name}.description`).toBeGreaterThan(5);
      }
    }
  });
});

describe("wiring (static)", () => {
  it("every var., local., module., data. and resource reference resolves, in the root and every module", async () => {
    const check = async (dir: string, m: TfModule, label: string): Promise<number> => {
      const docs = await documents(dir);
      const exprs = docs.flatMap((d) => expressions(d as Json, new Set(["type"])));
      const problems: string[] = [];
      for (const e of exprs) {
        for (const [, n] of e.matchAll(/(?<![\w.-])var\.([a-z_][a-z0-9_]*)/g))
          if (!(n! in m.variables)) problems.push(`var.${n}`);
        for (const [, n] of e.matchAll(/(?<![\w.-])local\.([a-z_][a-z0-9_]*)/g))
          if (!(n! in m.locals)) problems.push(`local.${n}`);
        for (const [, n] of e.matchAll(/(?<![\w.-])module\.([a-z_][a-z0-9_]*)/g))
          if (!(n! in m.modules)) problems.push(`module.${n}`);
        for (const [, t, n] of e.matchAll(/(?<![\w.-])data\.([a-z0-9_]+)\.([a-z0-9_]+)/g))
          if (!(`${t}.${n}` in m.data)) problems.push(`data.${t}.${n}`);
        for (const [, t, n] of e.matchAll(
          /(?<![.\w])((?:aws|cloudflare|kubernetes|terraform)_[a-z0-9_]+)\.([a-z0-9_]+)/g,
        ))
          if (!(`${t}.${n}` in m.resources)) problems.push(`${t}.${n}`);
      }
      expect(problems, `${label}: unresolved references`).toEqual([]);
      return exprs.length;
    };
    expect(await check(TERRAFORM_DIR, root, "root")).toBeGreaterThan(50);
    for (const name of MODULES) {
      expect(await check(join(TERRAFORM_DIR, "modules", name), mods[name]!, name)).toBeGreaterThan(5);
    }
  });

  it("every function called is a Terraform built-in", async () => {
    const dirs = [TERRAFORM_DIR, ...MODULES.map((m) => join(TERRAFORM_DIR, "modules", m))];
    const unknown = new Set<string>();
    let calls = 0;
    for (const dir of dirs) {
      for (const d of await documents(dir)) {
        for (const e of expressions(d as Json, new Set(["type"]))) {
          for (const [, fn] of e.matchAll(/(?<![.\w])([a-z][a-z0-9_]*)\(/g)) {
            calls++;
            if (!TF_FUNCTIONS.has(fn!)) unknown.add(fn!);
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(50);
    expect([...unknown]).toEqual([]);
  });

  it("every resource and data source belongs to a provider the module requires", () => {
    for (const [label, m] of [["root", root] as const, ...Object.entries(mods)]) {
      const providers = new Set(
        m.terraform.flatMap((t) =>
          Array.isArray(t.required_providers) ? Object.keys(t.required_providers[0] as JsonObject) : [],
        ),
      );
      // terraform_data is built into Terraform itself.
      providers.add("terraform");
      for (const key of [...Object.keys(m.resources), ...Object.keys(m.data)]) {
        expect(providers.has(key.split("_")[0]!), `${label}: ${key}`).toBe(true);
      }
    }
  });

  it("the pop user-data template uses only the variables templatefile() passes", () => {
    const lt = mods.pop!.resources["aws_launch_template.relay"]!;
    const call = String(lt.user_data);
    const passed = new Set([...call.matchAll(/^\s*([a-z0-9_]+)\s*=/gm)].map((x) => x[1]!));
    const tpl = readFileSync(join(TERRAFORM_DIR, "modules", "pop", "user-data.sh.tftpl"), "utf8");
    const used = new Set(
      [...tpl.matchAll(/(?<!\$)[$%]\{~?\s*(?:if\s+)?([a-z0-9_]+)/g)]
        .map((x) => x[1]!)
        .filter((x) => x !== "endif" && x !== "else"),
    );
    expect(used.size).toBeGreaterThan(5);
    for (const u of used) expect(passed.has(u), `template variable ${u}`).toBe(true);
    // The hint keyring is read on the instance, never rendered into user data.
    expect(passed.has("hint_keys")).toBe(false);
  });
});

describe("providers are pinned; the offline modules need none (static)", () => {
  it("root and modules pin Terraform and every provider, and agree on the constraints", () => {
    const rootReq = root.terraform.find((t) => "required_providers" in t)!;
    expect(String(rootReq.required_version)).toMatch(/^>= 1\.9/);
    const rootProviders = (rootReq.required_providers as JsonObject[])[0] as Record<string, JsonObject>;
    expect(Object.keys(rootProviders).sort()).toEqual(["aws", "cloudflare", "kubernetes"]);
    for (const [p, spec] of Object.entries(rootProviders)) {
      expect(String(spec.source), p).toMatch(/^[a-z]+\/[a-z]+$/);
      expect(String(spec.version), p).toMatch(/^(~> \d+\.\d+(\.\d+)?|= ?\d+\.\d+\.\d+)$/);
    }
    for (const mod of OFFLINE_MODULES) {
      // No provider, so terraform test and the preview run offline.
      expect(mods[mod]!.terraform.map((t) => t.required_version)).toEqual([rootReq.required_version]);
      expect(
        mods[mod]!.terraform.some((t) => "required_providers" in t),
        mod,
      ).toBe(false);
    }
    for (const mod of MODULES) {
      const req = mods[mod]!.terraform.find((t) => "required_providers" in t)!;
      expect(req.required_version, mod).toBe(rootReq.required_version);
      for (const [p, spec] of Object.entries(
        (req.required_providers as JsonObject[])[0] as Record<string, JsonObject>,
      )) {
        expect(spec, `${mod}: ${p}`).toEqual(rootProviders[p]);
      }
    }
  });
});
