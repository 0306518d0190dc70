// Conferences in the cluster module, which needs the kubernetes provider and so cannot be planned
// here; as for ICE-TCP (ice-tcp.test.ts), the real `terraform` evaluates the module's own
// variables, locals, counts and dynamic for_each (in a provider-free sandbox), and HCL's parser
// reads the resources. Through the root and the preview: conference-root.test.ts.
import { cp, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  describeDiagnostic,
  streamDiagnostics,
  TERRAFORM_DIR,
  TerraformSandbox,
} from "../../scripts/terraform/run.ts";
import { type Json, type JsonObject, loadModule, type TfModule } from "./hcl.ts";

const CLUSTER_DIR = join(TERRAFORM_DIR, "modules", "cluster");
/** What the cluster module creates only with conferences on. */
const CONFERENCE_RESOURCES = [
  "kubernetes_network_policy_v1.conference",
  "kubernetes_secret_v1.backbone_keys",
];
const KEYS = `1:${Buffer.alloc(32, 7).toString("base64")}`;
/** Locals worth reading whole (the rest are reached through counts and dynamic blocks). */
const SHOWN = ["conference_env", "conference_annotations", "conference_ingress_cidrs"];

const ref = (expr: string): string => `\${${expr}}`;
const blocks = (v: Json | undefined): JsonObject[] => (Array.isArray(v) ? (v as JsonObject[]) : []);
const usesOnlyInputs = (expr: string): boolean => !/\b(kubernetes_|data\.|module\.)/.test(expr);

let cluster: TfModule;
let root: TfModule;
let sandbox: TerraformSandbox;
let evalDir: string;

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
async function writeEvaluator(dir: string): Promise<void> {
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
  for (const l of SHOWN) output[l] = { value: ref(`local.${l}`) };
  await writeFile(join(dir, "main.tf.json"), JSON.stringify({ locals, output }, null, 2));
}

/** Every input of the cluster module, with these conference settings. */
function clusterInputs(over: object) {
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

const ON = {
  conference: { port: 3480, max_participants: 8, nack: true, address: "pod" },
  conference_peer_cidrs: ["198.51.100.16/28", "2001:db8:20::/48"],
  backbone_keys: KEYS,
};

let scenario = 0;
/** Applies the evaluator (outputs only, local state in the sandbox): its outputs, or the errors. */
async function evaluate(inputs: object): Promise<{ outputs: Record<string, Json>; errors: string[] }> {
  const vars = join(sandbox.dir, `cluster-${scenario++}.tfvars.json`);
  await writeFile(vars, JSON.stringify(inputs));
  const r = await sandbox.run(evalDir, [
    "apply",
    "-auto-approve",
    "-input=false",
    "-json",
    `-var-file=${vars}`,
  ]);
  const errors = streamDiagnostics(r.stdout)
    .filter((d) => d.severity === "error")
    .map(describeDiagnostic);
  if (errors.length > 0 || r.code !== 0) return { outputs: {}, errors: errors.length ? errors : [r.stderr] };
  const out = await sandbox.run(evalDir, ["output", "-json"]);
  const parsed = JSON.parse(out.stdout) as Record<string, { value: Json }>;
  return { outputs: Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, v.value])), errors: [] };
}

const STS = "dynamic__kubernetes_stateful_set_v1__transceiver";

beforeAll(async () => {
  [cluster, root] = await Promise.all([loadModule(CLUSTER_DIR), loadModule(TERRAFORM_DIR)]);
  sandbox = await TerraformSandbox.create();
  evalDir = join(sandbox.dir, "cluster-eval");
  await writeEvaluator(evalDir);
  const init = await sandbox.init(evalDir);
  if (init.code !== 0) throw new Error(`terraform init of the evaluator failed:\n${init.stderr}`);
});
afterAll(() => sandbox?.dispose());

describe("the cluster module's conference resources, evaluated by the real terraform", () => {
  it("with conference null: nothing of it, the transceiver pods as before", async () => {
    const { outputs, errors } = await evaluate(clusterInputs({}));
    expect(errors).toEqual([]);
    const counted = Object.keys(outputs)
      .filter((k) => k.startsWith("count__"))
      .map((k) => k.slice(7).replace("__", "."))
      .sort();
    expect(counted).toEqual(CONFERENCE_RESOURCES);
    for (const r of CONFERENCE_RESOURCES) expect(outputs[`count__${r.replace(".", "__")}`], r).toBe(0);
    expect(outputs[`${STS}__port__0`]).toEqual([]);
    expect(outputs[`${STS}__env__0`]).toEqual([]);
    expect(outputs.conference_env).toEqual({});
    expect(outputs.conference_annotations).toEqual({});
  });

  it("on, pod address: the port, the environment, the keyring's digest and the peer networks", async () => {
    const { outputs, errors } = await evaluate(clusterInputs(ON));
    expect(errors).toEqual([]);
    for (const r of CONFERENCE_RESOURCES) expect(outputs[`count__${r.replace(".", "__")}`], r).toBe(1);
    expect(outputs[`${STS}__port__0`]).toEqual([3480]);
    expect(outputs[`${STS}__env__0`]).toEqual([]);
    expect(outputs.conference_env).toEqual({
      TRANSCEIVER_CONFERENCE_PORT: "3480",
      TRANSCEIVER_CONFERENCE_ADDR: "$(POD_IP):3480",
      CONFERENCE_MAX_PARTICIPANTS: "8",
      CONFERENCE_NACK: "1",
    });
    expect(outputs.conference_ingress_cidrs).toEqual(ON.conference_peer_cidrs);
    // A digest, never the keyring itself.
    const digest = (outputs.conference_annotations as Record<string, string>)[
      "global-relay/backbone-keys-sha256"
    ];
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(outputs)).not.toContain(KEYS.slice(2));
  });

  it("on, node address: the node's IP from the downward API, the port as a hostPort", async () => {
    const { outputs, errors } = await evaluate(
      clusterInputs({
        ...ON,
        conference: { ...ON.conference, address: "node", nack: false, max_participants: 3 },
      }),
    );
    expect(errors).toEqual([]);
    expect(outputs[`${STS}__env__0`]).toEqual(["status.hostIP"]);
    expect(outputs.conference_env).toMatchObject({
      TRANSCEIVER_CONFERENCE_ADDR: "$(HOST_IP):3480",
      CONFERENCE_MAX_PARTICIPANTS: "3",
      CONFERENCE_NACK: "0",
    });
  });

  it("refuses a peer network open to the world, naming the cluster", async () => {
    const { errors } = await evaluate(clusterInputs({ ...ON, conference_peer_cidrs: ["0.0.0.0/0"] }));
    expect(errors).toEqual([
      "Cluster fra1: conference_peer_cidrs must be CIDRs narrower than /0 (the conference port is never open to the world); got 0.0.0.0/0.",
    ]);
  });
});

describe("the cluster module's conference resources (static)", () => {
  it("the NetworkPolicy admits UDP on the conference port from the peer networks and this cluster's transceivers only", () => {
    const np = cluster.resources["kubernetes_network_policy_v1.conference"]!;
    const spec = blocks(np.spec)[0]!;
    expect(spec.policy_types).toEqual(["Ingress"]);
    expect(blocks(spec.pod_selector)[0]!.match_labels).toBe(ref("local.selector.transceiver"));
    const ingress = blocks(spec.ingress);
    expect(ingress).toHaveLength(1);
    const rule = ingress[0]!;
    expect(blocks(rule.ports)).toEqual([{ port: ref("tostring(var.conference.port)"), protocol: "UDP" }]);
    const dyn = blocks((rule.dynamic as JsonObject).from);
    expect(dyn).toHaveLength(1);
    expect(dyn[0]!.for_each).toBe(ref("local.conference_ingress_cidrs"));
    expect(blocks(dyn[0]!.content)).toEqual([{ ip_block: [{ cidr: ref("from.value") }] }]);
    expect(blocks(rule.from)).toEqual([
      { pod_selector: [{ match_labels: ref("local.selector.transceiver") }] },
    ]);
    expect(cluster.locals.conference_ingress_cidrs).toBe(
      ref("local.conference_on ? var.conference_peer_cidrs : []"),
    );
  });

  it("the transceivers' environment, port and keyring come from the conference locals", () => {
    const text = JSON.stringify(cluster.resources["kubernetes_stateful_set_v1.transceiver"]);
    expect(text).toContain("local.conference_env)");
    expect(text).toContain("kubernetes_secret_v1.backbone_keys[*].metadata[0].name");
    expect(text).toContain("local.conference_annotations");
    expect(text).toContain("local.conference_node ? port.value : null");
    for (const other of ["kubernetes_deployment_v1.gateway", "kubernetes_deployment_v1.relay"])
      expect(JSON.stringify(cluster.resources[other]), other).not.toMatch(/conference/);
  });

  it("nothing in the cluster module opens to 0.0.0.0/0 or ::/0, and the conference port has no Service", () => {
    for (const [key, r] of Object.entries(cluster.resources)) {
      expect(JSON.stringify(r), key).not.toMatch(/0\.0\.0\.0\/0|::\/0/);
      if (key.startsWith("kubernetes_service_v1.")) expect(JSON.stringify(r), key).not.toMatch(/conference/);
    }
  });

  it("the keyring has its own Secret, mounted by the transceivers only", () => {
    const secret = cluster.resources["kubernetes_secret_v1.backbone_keys"]!;
    expect(secret.data).toEqual({ GR_BACKBONE_KEYS: ref("var.backbone_keys") });
    expect(JSON.stringify(cluster.resources["kubernetes_secret_v1.keys"])).not.toMatch(/BACKBONE/);
    for (const [key, r] of Object.entries(cluster.resources)) {
      if (key === "kubernetes_secret_v1.backbone_keys") continue;
      const mentions = JSON.stringify(r).includes("backbone_keys");
      expect(mentions, key).toBe(key === "kubernetes_stateful_set_v1.transceiver");
    }
    expect(cluster.variables.backbone_keys!.sensitive).toBe(true);
  });

  it("the root passes the other clusters' backbone_cidrs, the settings' conference and keyring", () => {
    expect(root.modules.cluster).toMatchObject({
      conference: ref("module.settings.conference"),
      backbone_keys: ref("module.settings.backbone_keys"),
      conference_peer_cidrs: ref(
        "distinct(flatten([for k, c in local.clusters : c.backbone_cidrs if k != each.key]))",
      ),
    });
  });
});
