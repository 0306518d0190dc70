// The cluster module evaluated by the real `terraform` without its provider: its variables.tf
// and the locals that read only inputs (not the namespace resource), with one output per count,
// per dynamic block's for_each that those can compute, and per local asked for, applied in a
// sandbox (outputs only, local state). What conference.test.ts reads the module's decisions from.
import { cp, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  describeDiagnostic,
  streamDiagnostics,
  TERRAFORM_DIR,
  TerraformSandbox,
} from "../../scripts/terraform/run.ts";
import type { Json, JsonObject, TfModule } from "./hcl.ts";

export const CLUSTER_DIR = join(TERRAFORM_DIR, "modules", "cluster");
/** Test-only keyring (32 bytes), in the format modules/settings accepts. */
export const KEYS = `1:${Buffer.alloc(32, 7).toString("base64")}`;

const blocks = (v: Json | undefined): JsonObject[] => (Array.isArray(v) ? (v as JsonObject[]) : []);
const usesOnlyInputs = (expr: string): boolean => !/\b(kubernetes_|data\.|module\.)/.test(expr);

/** Every dynamic block's for_each in a resource body, however deep, with a path naming it. */
function dynamics(v: Json, path: string, out: Record<string, string>): void {
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) dynamics(x, `${path}${v.length > 1 ? i : ""}`, out);
  } else if (v !== null && typeof v === "object")
    for (const [k, x] of Object.entries(v)) {
      if (k === "dynamic")
        for (const [name, list] of Object.entries(x as JsonObject))
          blocks(list).forEach((d, i) => {
            if (typeof d.for_each === "string") out[`${path}__${name}__${i}`] = d.for_each;
          });
      else dynamics(x, path, out);
    }
}

/**
 * The module's variables.tf and the locals that read only inputs (not the namespace resource),
 * with one output per count, per dynamic for_each that reads only inputs, and per SHOWN local.
 */
async function writeEvaluator(cluster: TfModule, shown: string[], dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await cp(join(CLUSTER_DIR, "variables.tf"), join(dir, "variables.tf"));
  const locals: Record<string, Json> = {};
  const pending = new Map(Object.entries(cluster.locals));
  for (let changed = true; changed; ) {
    changed = false;
    for (const [k, v] of pending) {
      const text = JSON.stringify(v);
      const needs = [...text.matchAll(/local\.([a-z_0-9]+)/g)].map((m) => m[1]!);
      if (!usesOnlyInputs(text)) pending.delete(k);
      else if (needs.every((n) => n in locals)) {
        locals[k] = v;
        pending.delete(k);
        changed = true;
      }
    }
  }
  const output: Record<string, { value: Json }> = {};
  for (const [key, r] of Object.entries(cluster.resources)) {
    const id = key.replace(".", "__");
    if (r.count !== undefined) output[`count__${id}`] = { value: r.count };
    const found: Record<string, string> = {};
    dynamics(r, `dynamic__${id}`, found);
    for (const [name, each] of Object.entries(found)) {
      const needs = [...each.matchAll(/local\.([a-z_0-9]+)/g)].map((m) => m[1]!);
      if (usesOnlyInputs(each) && needs.every((n) => n in locals)) output[name] = { value: each };
    }
  }
  for (const l of shown) output[l] = { value: `\${local.${l}}` };
  await writeFile(join(dir, "main.tf.json"), JSON.stringify({ locals, output }, null, 2));
}

/** Every input of the cluster module, with these conference settings. */
export function clusterInputs(over: object) {
  return {
    cluster_name: "fra1",
    cluster_id: 1,
    namespace: "global-relay",
    backbone: "198.51.100.10:5100",
    signalling_url: "https://fra1.signal.example.net",
    backend_url: "wss://agent.example.net/v1/voice",
    peer_cidrs: ["203.0.113.0/29"],
    capacity: 1000,
    transceivers_min: 2,
    transceivers_max: 16,
    sessions_per_pod: 200,
    relay_replicas: 2,
    gateway_replicas: 2,
    service_annotations: {},
    drain_seconds: 300,
    relay_image: "ghcr.io/example/relay:1.0.0",
    transceiver_image: "ghcr.io/example/transceiver:1.0.0",
    redis_image: "redis:7.4-alpine",
    topology_json: "{}",
    hint_keys: KEYS,
    call_id_keys: KEYS,
    cluster_secret: KEYS,
    conference: null,
    conference_peer_cidrs: [],
    backbone_keys: null,
    ...over,
  };
}

export interface Evaluation {
  outputs: Record<string, Json>;
  errors: string[];
}

export class ClusterEvaluator {
  readonly sandbox: TerraformSandbox;
  readonly #dir: string;
  #scenario = 0;

  private constructor(sandbox: TerraformSandbox, dir: string) {
    this.sandbox = sandbox;
    this.#dir = dir;
  }

  /** An evaluator of this parsed module that also outputs the `shown` locals whole. */
  static async create(cluster: TfModule, shown: string[]): Promise<ClusterEvaluator> {
    const sandbox = await TerraformSandbox.create();
    const dir = join(sandbox.dir, "cluster-eval");
    await writeEvaluator(cluster, shown, dir);
    const init = await sandbox.init(dir);
    if (init.code !== 0) throw new Error(`terraform init of the evaluator failed:\n${init.stderr}`);
    return new ClusterEvaluator(sandbox, dir);
  }

  /** Applies the evaluator with these inputs: its outputs, or the errors. */
  async evaluate(inputs: object): Promise<Evaluation> {
    const vars = join(this.sandbox.dir, `cluster-${this.#scenario++}.tfvars.json`);
    await writeFile(vars, JSON.stringify(inputs));
    const r = await this.sandbox.run(this.#dir, [
      "apply",
      "-auto-approve",
      "-input=false",
      "-json",
      `-var-file=${vars}`,
    ]);
    const errors = streamDiagnostics(r.stdout)
      .filter((d) => d.severity === "error")
      .map(describeDiagnostic);
    if (errors.length > 0 || r.code !== 0)
      return { outputs: {}, errors: errors.length ? errors : [r.stderr] };
    const out = await this.sandbox.run(this.#dir, ["output", "-json"]);
    const parsed = JSON.parse(out.stdout) as Record<string, { value: Json }>;
    return { outputs: Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, v.value])), errors: [] };
  }

  dispose(): Promise<void> {
    return this.sandbox.dispose();
  }
}
