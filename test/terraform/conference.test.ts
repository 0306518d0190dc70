// Conferences in the cluster module, which needs the kubernetes provider and so cannot be planned
// here; as for ICE-TCP (ice-tcp.test.ts), the real `terraform` evaluates the module's own
// variables, locals, counts and dynamic for_each (in a provider-free sandbox), and HCL's parser
// reads the resources. Through the root and the preview: conference-root.test.ts.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CONFERENCE_MAX_KEY_ID,
  DEFAULT_CONFERENCE_MAX_PARTICIPANTS,
  loadConfig,
} from "../../regional/transceiver/config.ts";
import { renderTopologyJson } from "../../scripts/terraform/render-topology.ts";
import { TERRAFORM_DIR } from "../../scripts/terraform/run.ts";
import { CLUSTER_DIR, ClusterEvaluator, clusterInputs, KEYS } from "./cluster-eval.ts";
import { type Json, type JsonObject, loadModule, type TfModule } from "./hcl.ts";

/** What the cluster module creates only with conferences on. */
const CONFERENCE_RESOURCES = [
  "kubernetes_network_policy_v1.conference",
  "kubernetes_secret_v1.backbone_keys",
];
/** Locals worth reading whole (the rest are reached through counts and dynamic blocks). */
const SHOWN = ["conference_env", "conference_annotations", "conference_ingress_cidrs"];

const ref = (expr: string): string => `\${${expr}}`;
const blocks = (v: Json | undefined): JsonObject[] => (Array.isArray(v) ? (v as JsonObject[]) : []);

let cluster: TfModule;
let root: TfModule;
let evaluator: ClusterEvaluator;
const evaluate = (inputs: object) => evaluator.evaluate(inputs);

const ON = {
  conference: { port: 3480, max_participants: 8, nack: true, address: "pod" },
  conference_peer_cidrs: ["198.51.100.16/28", "2001:db8:20::/48"],
  backbone_keys: KEYS,
};

const STS = "dynamic__kubernetes_stateful_set_v1__transceiver";

beforeAll(async () => {
  [cluster, root] = await Promise.all([loadModule(CLUSTER_DIR), loadModule(TERRAFORM_DIR)]);
  evaluator = await ClusterEvaluator.create(cluster, SHOWN);
});
afterAll(() => evaluator?.dispose());

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

  it("renders an environment the transceiver's own config loader accepts, as intended", async () => {
    const { outputs, errors } = await evaluate(
      clusterInputs({ ...ON, conference: { ...ON.conference, max_participants: 5, nack: false } }),
    );
    expect(errors).toEqual([]);
    // What Kubernetes hands the process: $(POD_IP) expanded, the keyrings from the Secrets.
    const rendered = Object.fromEntries(
      Object.entries(outputs.conference_env as Record<string, string>).map(([k, v]) => [
        k,
        v.replace("$(POD_IP)", "10.8.3.17"),
      ]),
    );
    const topology = await renderTopologyJson([join(TERRAFORM_DIR, "examples", "global.tfvars")]);
    const cfg = loadConfig(
      {
        CLUSTER_ID: "1",
        TRANSCEIVER_ID: "3",
        TOPOLOGY_FILE: "/etc/global-relay/topology.json",
        TRANSCEIVER_UDP: "0.0.0.0:3479",
        GR_HINT_KEYS: KEYS,
        GR_CALL_ID_KEYS: KEYS,
        GR_CLUSTER_SECRET: KEYS,
        GR_BACKBONE_KEYS: KEYS,
        ...rendered,
      },
      () => topology.json,
    );
    expect(cfg.conference).toMatchObject({
      bind: { host: "0.0.0.0", port: 3480 },
      advertise: { host: "10.8.3.17", port: 3480 },
      maxParticipants: 5,
      nack: false,
    });
    expect(cfg.conference!.keys.active.id).toBe(1);
    // The hub's hello check uses every cluster's backboneCidrs from the same topology.
    expect(cfg.conference!.cidrs.length).toBe(5);
    // The settings' ranges are the transceiver's (key ids; the default limit).
    expect(CONFERENCE_MAX_KEY_ID).toBe(15);
    expect(DEFAULT_CONFERENCE_MAX_PARTICIPANTS).toBe(8);
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
