// The deployment's root module, planned by the real `terraform` with its provider-needing modules
// stubbed (stub-root.ts): the wiring is valid, it renders the same topology as the preview, the
// stack guard refuses the wrong workspace, and an operator's mistakes come back as the modules'
// messages, with the module path, and never with a secret's value.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderTopologyJson, TERRAFORM_DIR } from "../../scripts/terraform/render-topology.ts";
import { describeDiagnostic } from "../../scripts/terraform/run.ts";
import { type PlanResult, StubRoot, TEST_SECRETS } from "./stub-root.ts";

const EXAMPLE = join(TERRAFORM_DIR, "examples", "global.tfvars");

let root: StubRoot;
beforeAll(async () => {
  root = await StubRoot.create();
  await root.workspace("global");
});
afterAll(() => root?.dispose());

/** A tfvars file in the sandbox. */
function tfvars(name: string, text: string): string {
  const p = join(root.sandbox.dir, name);
  writeFileSync(p, text);
  return p;
}

const messages = (r: PlanResult): string[] => r.errors.map(describeDiagnostic).sort();
type TcpTopology = { globalVipTcpPort?: number; pops: { vipTcpPort?: number }[] };

describe("the root module, providers stubbed (real terraform)", () => {
  it("is valid: every module call matches the modules' variables, every reference resolves", async () => {
    const r = await root.run(["validate", "-json", "-no-color"]);
    const result = JSON.parse(r.stdout) as { valid: boolean; diagnostics: unknown[] };
    expect(result.diagnostics).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("plans the global stack from the example and renders the preview's topology byte for byte", async () => {
    const plan = join(root.sandbox.dir, "global.tfplan");
    const r = await root.plan([EXAMPLE], {}, TEST_SECRETS, plan);
    expect(r.errors.map(describeDiagnostic)).toEqual([]);
    expect(r.code).toBe(0);
    const shown = await root.run(["show", "-json", plan]);
    const doc = JSON.parse(shown.stdout) as {
      planned_values: { outputs: { topology_json: { value: string } } };
    };
    const preview = await renderTopologyJson([EXAMPLE]);
    expect(doc.planned_values.outputs.topology_json.value).toBe(preview.json);
  });

  it("plans ICE-TCP on 443: the topology carries the port, every POP's TCP inputs pass its validations", async () => {
    const plan = join(root.sandbox.dir, "tcp.tfplan");
    const r = await root.plan([EXAMPLE], { vip_tcp_port: "443" }, TEST_SECRETS, plan);
    expect(r.errors.map(describeDiagnostic)).toEqual([]);
    const shown = await root.run(["show", "-json", plan]);
    const doc = JSON.parse(shown.stdout) as {
      planned_values: { outputs: { topology: { value: TcpTopology } } };
    };
    const topology = doc.planned_values.outputs.topology.value;
    expect(topology.globalVipTcpPort).toBe(443);
    expect(topology.pops.map((p) => p.vipTcpPort)).toEqual(topology.pops.map(() => 443));
  });

  it("refuses an ICE-TCP port on the VIP's UDP port, once per POP (one load balancer cannot take both)", async () => {
    const r = await root.plan([EXAMPLE], { vip_tcp_port: "3478" });
    const errors = messages(r);
    expect(errors.length).toBeGreaterThanOrEqual(5);
    for (const e of errors)
      expect(e).toMatch(
        /^POP [a-z0-9]+: vip_tcp_port \(3478\) must differ from the UDP ports of its load balancer/,
      );
  });

  it("refuses to plan a cluster stack in the global workspace (the stack guard)", async () => {
    const r = await root.plan([EXAMPLE], { deploy_cluster: "fra1" });
    expect(r.code).not.toBe(0);
    expect(messages(r).join("\n")).toContain(
      'This run applies the cluster stack of fra1, whose state is workspace "cluster-fra1", but the selected workspace is "global": run `terraform workspace select cluster-fra1`',
    );
  });
});

describe("an operator's mistakes, as the root reports them (real terraform)", () => {
  it("every settings validation, each with its own message naming the field", async () => {
    const bad = tfvars(
      "bad-settings.tfvars",
      `name_prefix     = "Global_Relay"
kubeconfig_path = " "
anycast         = { client_affinity = "ANY" }
edge = {
  account_id         = "0123456789abcdef0123456789abcdef"
  zone_id            = "FEDCBA"
  worker_name        = "Edge!"
  compatibility_date = "2026-07-01"
  rate_limit         = { namespace_id = "1001", limit = 600, period = 30 }
  analytics_dataset  = "global-relay"
}
images = { relay = "ghcr.io/example/relay:latest", transceiver = "ghcr.io/example/transceiver" }
`,
    );
    const r = await root.plan([EXAMPLE, bad], { deploy_cluster: "ams1" });
    expect(messages(r)).toEqual(
      [
        "name_prefix must be lower-case letters, digits and '-', 2-20 characters, starting with a letter; got Global_Relay.",
        "deploy_cluster must be null (the global stack) or a key of clusters; got ams1.",
        "kubeconfig_path must be a non-empty path.",
        "anycast.client_affinity must be NONE or SOURCE_IP; got ANY.",
        "edge.account_id and edge.zone_id must be 32 lower-case hex characters (Cloudflare dashboard, Overview); got 0123456789abcdef0123456789abcdef and FEDCBA.",
        "edge.worker_name must be lower-case letters, digits and '-', edge.compatibility_date a date YYYY-MM-DD, and edge.script_path non-empty; got Edge!, 2026-07-01, ../dist/edge/index.js.",
        "edge needs at least one route pattern or a custom_domain, or no request reaches the worker.",
        "edge.rate_limit needs a positive integer namespace_id, a whole limit of at least 1 and a period of 10 or 60 seconds; got namespace_id 1001, limit 600, period 30.",
        "edge.analytics_dataset must be letters, digits and '_', 1-64 characters; got global-relay.",
        "images must be pinned references (a tag other than latest, or an @sha256 digest); not valid: images.relay = ghcr.io/example/relay:latest, images.transceiver = ghcr.io/example/transceiver.",
      ].sort(),
    );
    // Each names the module call it came through (the operator's view: `module "settings"`).
    for (const d of r.errors) expect(d.range?.filename).toBe("main.tf");
  });

  it("a bad secret is refused without its value appearing anywhere in Terraform's output", async () => {
    const secret = Buffer.alloc(40, 9).toString("base64");
    const r = await root.plan(
      [EXAMPLE],
      {},
      {
        TF_VAR_hint_keys: `16:${secret}`,
        TF_VAR_call_id_keys: secret,
        TF_VAR_cluster_secret: "c2hvcnQ=",
        TF_VAR_edge_secrets: '{ TOPOLOGY = "x" }',
      },
    );
    expect(messages(r)).toEqual(
      [
        'hint_keys must be "id:base64,id:base64" with ids 0-15 and secrets of at least 32 bytes (44 base64 characters).',
        'call_id_keys must be "id:base64,id:base64" with ids 0-15 and secrets of at least 32 bytes (44 base64 characters).',
        'cluster_secret must be a keyring "id:base64,id:base64" with ids 0-255 and secrets of at least 32 bytes (44 base64 characters), or one such base64 secret.',
        "edge_secrets names must be upper-case letters, digits and '_' (starting with a letter) and must not reuse a binding the module sets itself (GR_CLUSTER_SECRET, GR_CALL_ID_KEYS, TOPOLOGY, TOPOLOGY_JSON, TOPOLOGY_KV, TOPOLOGY_KEY, RATE_LIMITER, ANALYTICS).",
      ].sort(),
    );
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.stdout + r.stderr).not.toContain("c2hvcnQ=");
  });

  it("a topology mistake is the topology module's message, as the preview reports it", async () => {
    const bad = tfvars("bad-vip.tfvars", 'global_vip = "192.0.2.10:99999"\n');
    const r = await root.plan([EXAMPLE, bad]);
    expect(messages(r)).toEqual([
      'global_vip must be "ip:port" or "[ipv6]:port" with a literal IP and a port from 1 to 65535; got 192.0.2.10:99999.',
    ]);
    const snippet = (r.errors[0] as unknown as { snippet?: { code: string } }).snippet;
    expect(snippet?.code).toContain("global_vip      = var.global_vip");
  });

  it("a misspelt optional attribute of the settings is an error (the topology's: messages.test.ts)", async () => {
    const bad = tfvars(
      "misspelt.tfvars",
      `edge = {
  account_id         = "0123456789abcdef0123456789abcdef"
  zone_id            = "fedcba9876543210fedcba9876543210"
  compatibility_date = "2026-07-01"
  routes             = ["relay.example.net/v1/*"]
  custom_domian      = "relay.example.net"
}
`,
    );
    const r = await root.plan([EXAMPLE, bad], {}, TEST_SECRETS);
    expect(messages(r)).toEqual([
      "anycast, edge, images and conference may only set the attributes their types declare (Terraform would drop any other silently, so a misspelt optional attribute would take its default); unknown: edge.custom_domian (expected one of account_id, analytics_dataset, compatibility_date, compatibility_flags, custom_domain, rate_limit, routes, script_path, worker_name, zone_id).",
    ]);
  });
});
