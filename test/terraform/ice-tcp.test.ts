// ICE-TCP in the cloud modules (anycast, pop), which need the aws provider and so cannot be planned
// here. Two kinds of check: the real `terraform` evaluates the pop module's own count, for_each and
// variable validations (its variables.tf and locals, as they are, in a provider-free sandbox), so
// "nothing of it exists when vip_tcp_port is null" is computed, not read; and HCL's parser reads
// the resources for what evaluation cannot reach (protocols, health checks, security groups).
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

const POP_DIR = join(TERRAFORM_DIR, "modules", "pop");
/** What the pop module creates only with ICE-TCP on. */
const TCP_RESOURCES = [
  "aws_globalaccelerator_endpoint_group.tcp",
  "aws_lb_listener.vip_tcp",
  "aws_lb_target_group.vip_tcp",
];
const WORLD = { cidr_blocks: ["0.0.0.0/0"], ipv6_cidr_blocks: ["::/0"] };

let pop: TfModule;
let anycast: TfModule;
let root: TfModule;
let sandbox: TerraformSandbox;
let evalDir: string;

/** An expression as HCL's parser returns it: its source text wrapped in "${...}". */
const ref = (expr: string): string => `\${${expr}}`;
const blocks = (v: Json | undefined): JsonObject[] => (Array.isArray(v) ? (v as JsonObject[]) : []);
const usesOnlyInputs = (expr: string): boolean => !/\b(aws_|data\.|module\.)/.test(expr);

/**
 * The pop module's variables.tf and locals as they are, plus one output per count and per
 * dynamic block's for_each (those that read only variables and locals), in Terraform's JSON syntax.
 */
async function writeEvaluator(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await cp(join(POP_DIR, "variables.tf"), join(dir, "variables.tf"));
  const output: Record<string, { value: Json }> = {};
  for (const [key, r] of Object.entries(pop.resources)) {
    const id = key.replace(".", "__");
    if (r.count !== undefined) output[`count__${id}`] = { value: r.count };
    for (const [name, list] of Object.entries((r.dynamic ?? {}) as JsonObject)) {
      blocks(list).forEach((d, i) => {
        if (typeof d.for_each === "string" && usesOnlyInputs(d.for_each))
          output[`dynamic__${id}__${name}__${i}`] = { value: d.for_each };
      });
    }
  }
  await writeFile(join(dir, "main.tf.json"), JSON.stringify({ locals: pop.locals, output }, null, 2));
}

/** Every input of the pop module, with these ICE-TCP settings. */
function popInputs(tcp: { tcp_listener_arn?: string; global_vip_tcp_port?: number; vip_tcp_port?: number }) {
  return {
    name_prefix: "gr",
    pop_name: "fra",
    pop_id: 1,
    region: "eu-central-1",
    listener_arn: "arn:aws:globalaccelerator::111122223333:accelerator/a/listener/udp",
    global_vip_port: 3478,
    vip_port: 3478,
    tcp_listener_arn: null,
    global_vip_tcp_port: null,
    vip_tcp_port: null,
    backbone: "198.51.100.10:4478",
    peer_cidrs: ["203.0.113.0/29", "2001:db8::/64"],
    vpc_id: "vpc-0a1b2c3d4e5f60001",
    public_subnet_ids: ["subnet-0a1b2c3d4e5f60011"],
    private_subnet_ids: ["subnet-0a1b2c3d4e5f60021"],
    instance_type: "c6in.large",
    min_size: 2,
    max_size: 6,
    traffic_dial: 100,
    redis_url: null,
    relay_image: "ghcr.io/example/relay:1.0.0",
    topology_json: "{}",
    hint_keys: `1:${Buffer.alloc(32, 1).toString("base64")}`,
    ...tcp,
  };
}

let scenario = 0;
/** Applies the evaluator (outputs only, local state in the sandbox): its outputs, or the errors. */
async function evaluate(inputs: object): Promise<{ outputs: Record<string, Json>; errors: string[] }> {
  const vars = join(sandbox.dir, `pop-${scenario++}.tfvars.json`);
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

beforeAll(async () => {
  [pop, anycast, root] = await Promise.all([
    loadModule(POP_DIR),
    loadModule(join(TERRAFORM_DIR, "modules", "anycast")),
    loadModule(TERRAFORM_DIR),
  ]);
  sandbox = await TerraformSandbox.create();
  evalDir = join(sandbox.dir, "pop-eval");
  await writeEvaluator(evalDir);
  const init = await sandbox.init(evalDir);
  if (init.code !== 0) throw new Error(`terraform init of the evaluator failed:\n${init.stderr}`);
});
afterAll(() => sandbox?.dispose());

describe("the pop module's ICE-TCP resources, counted by the real terraform", () => {
  it("with vip_tcp_port null: no TCP resource, no TCP ingress rule, and only TCP resources have a count", async () => {
    const { outputs, errors } = await evaluate(popInputs({}));
    expect(errors).toEqual([]);
    const counted = Object.keys(outputs)
      .filter((k) => k.startsWith("count__"))
      .map((k) => k.slice(7).replace("__", "."))
      .sort();
    expect(counted).toEqual(TCP_RESOURCES);
    for (const r of TCP_RESOURCES) expect(outputs[`count__${r.replace(".", "__")}`], r).toBe(0);
    expect(outputs.dynamic__aws_security_group__nlb__ingress__0).toEqual([]);
    expect(outputs.dynamic__aws_globalaccelerator_endpoint_group__tcp__port_override__0).toEqual([]);
    // The UDP endpoint group's override is untouched (same ports: none).
    expect(outputs.dynamic__aws_globalaccelerator_endpoint_group__this__port_override__0).toEqual([]);
  });

  it("with 443: one of each, the ingress rule on 443, and no port override where the ports agree", async () => {
    const arn = "arn:aws:globalaccelerator::111122223333:accelerator/a/listener/tcp";
    const { outputs, errors } = await evaluate(
      popInputs({ tcp_listener_arn: arn, global_vip_tcp_port: 443, vip_tcp_port: 443 }),
    );
    expect(errors).toEqual([]);
    for (const r of TCP_RESOURCES) expect(outputs[`count__${r.replace(".", "__")}`], r).toBe(1);
    expect(outputs.dynamic__aws_security_group__nlb__ingress__0).toEqual([443]);
    expect(outputs.dynamic__aws_globalaccelerator_endpoint_group__tcp__port_override__0).toEqual([]);
  });

  it("a POP port unlike the listener's gets a port override to it", async () => {
    const { outputs, errors } = await evaluate(
      popInputs({ tcp_listener_arn: "arn:tcp", global_vip_tcp_port: 443, vip_tcp_port: 8443 }),
    );
    expect(errors).toEqual([]);
    expect(outputs.dynamic__aws_globalaccelerator_endpoint_group__tcp__port_override__0).toEqual([8443]);
    expect(outputs.dynamic__aws_security_group__nlb__ingress__0).toEqual([8443]);
  });

  it("refuses a half-set, out-of-range or UDP-colliding port, naming the POP", async () => {
    const half = await evaluate(popInputs({ vip_tcp_port: 443 }));
    expect(half.errors).toEqual([
      "POP fra: vip_tcp_port and global_vip_tcp_port must both be set (ICE-TCP on) or both null; got 443 and null.",
    ]);
    const listener = await evaluate(popInputs({ global_vip_tcp_port: 70000, vip_tcp_port: 443 }));
    expect(listener.errors).toEqual([
      "POP fra: global_vip_tcp_port must be null or a whole port number from 1 to 65535; got 70000.",
    ]);
    const fraction = await evaluate(popInputs({ global_vip_tcp_port: 443, vip_tcp_port: 443.5 }));
    expect(fraction.errors).toEqual([
      "POP fra: vip_tcp_port must be null or a whole port number from 1 to 65535; got 443.5.",
    ]);
    for (const port of [3478, 4478]) {
      const clash = await evaluate(popInputs({ global_vip_tcp_port: port, vip_tcp_port: port }));
      expect(clash.errors).toEqual([
        `POP fra: vip_tcp_port (${port}) must differ from the UDP ports of its load balancer, the VIP port (3478) and the backbone port (198.51.100.10:4478): a network load balancer takes a TCP and a UDP listener on one port only as a single TCP_UDP listener.`,
      ]);
    }
  });
});

describe("the pop module's ICE-TCP resources (static)", () => {
  it("no other resource mentions TCP, except through a splat of a counted one", () => {
    for (const [key, r] of Object.entries(pop.resources)) {
      if (TCP_RESOURCES.includes(key)) continue;
      const { dynamic: _dynamic, ...body } = r;
      const text = JSON.stringify(body).replace(/\b[a-z_]+\.[a-z_]*tcp\[\*\]/g, "");
      expect(text, key).not.toMatch(/tcp/i);
    }
    // The relay group registers with the TCP target group when there is one.
    expect(String(pop.resources["aws_autoscaling_group.relay"]!.target_group_arns)).toContain(
      "aws_lb_target_group.vip_tcp[*].arn",
    );
  });

  it("the load balancer passes TCP through (no TLS), preserving client IPs, drained and health-checked as UDP", () => {
    const udp = pop.resources["aws_lb_target_group.vip"]!;
    const tcp = pop.resources["aws_lb_target_group.vip_tcp"]!;
    expect(tcp.protocol).toBe("TCP");
    expect(tcp.port).toBe(ref("var.vip_tcp_port"));
    expect(tcp.preserve_client_ip).toBe(true);
    expect(tcp.deregistration_delay).toBe(udp.deregistration_delay);
    expect(tcp.health_check).toEqual(udp.health_check);
    expect(blocks(tcp.health_check)[0]).toMatchObject({ protocol: "HTTP", path: "/readyz" });
    expect(blocks(tcp.health_check)[0]!.port).toBe(ref("tostring(local.admin_port)"));
    const listener = pop.resources["aws_lb_listener.vip_tcp"]!;
    expect(listener).toMatchObject({ protocol: "TCP", port: ref("var.vip_tcp_port") });
    expect(listener.certificate_arn).toBeUndefined();
    expect(blocks(listener.default_action)[0]).toMatchObject({
      type: "forward",
      target_group_arn: ref("aws_lb_target_group.vip_tcp[0].arn"),
    });
  });

  it("the TCP endpoint group joins the accelerator's TCP listener like the UDP one joins UDP", () => {
    const udp = pop.resources["aws_globalaccelerator_endpoint_group.this"]!;
    const tcp = pop.resources["aws_globalaccelerator_endpoint_group.tcp"]!;
    expect(tcp.listener_arn).toBe(ref("var.tcp_listener_arn"));
    expect(tcp.endpoint_group_region).toBe(udp.endpoint_group_region);
    expect(tcp.traffic_dial_percentage).toBe(udp.traffic_dial_percentage);
    expect(tcp.endpoint_configuration).toEqual(udp.endpoint_configuration);
    expect(blocks(tcp.endpoint_configuration)[0]!.client_ip_preservation_enabled).toBe(true);
    const override = blocks((tcp.dynamic as JsonObject).port_override)[0]!;
    expect(blocks(override.content)[0]).toEqual({
      listener_port: ref("var.global_vip_tcp_port"),
      endpoint_port: ref("port_override.value"),
    });
  });

  it("security groups open to the world only the UDP VIP port and the ICE-TCP port, one port each", () => {
    // Inline rules only: a separate rule resource would escape this check.
    expect(Object.keys(pop.resources).filter((k) => /security_group_(rule|ingress|egress)/.test(k))).toEqual(
      [],
    );
    const world: string[] = [];
    for (const [key, r] of Object.entries(pop.resources)) {
      if (!key.startsWith("aws_security_group.")) continue;
      const rules = [
        ...blocks(r.ingress).map((b) => ({ b, each: "" })),
        ...blocks((r.dynamic as JsonObject | undefined)?.ingress).flatMap((d) =>
          blocks(d.content).map((b) => ({ b, each: String(d.for_each) })),
        ),
      ];
      for (const { b, each } of rules) {
        const open = JSON.stringify([b.cidr_blocks, b.ipv6_cidr_blocks]).match(/0\.0\.0\.0\/0|::\/0/g);
        if (!open) continue;
        expect(b, `${key}: a world-open rule names both families`).toMatchObject(WORLD);
        expect(b.from_port, `${key}: one port`).toBe(b.to_port);
        world.push(`${key} ${b.protocol} ${b.from_port}${each ? ` for_each ${each}` : ""}`);
      }
    }
    expect(world.sort()).toEqual([
      `aws_security_group.nlb tcp ${ref("ingress.value")} for_each ${ref("local.tcp_ports")}`,
      `aws_security_group.nlb udp ${ref("var.vip_port")}`,
    ]);
    expect(pop.locals.tcp_ports).toBe(ref("var.vip_tcp_port == null ? [] : [var.vip_tcp_port]"));
  });
});

describe("the anycast module and the root (static)", () => {
  it("the accelerator has a TCP listener on vip_tcp_port only when it is set, and outputs its ARN", () => {
    const tcp = anycast.resources["aws_globalaccelerator_listener.tcp"]!;
    const udp = anycast.resources["aws_globalaccelerator_listener.udp"]!;
    expect(tcp.count).toBe(ref("var.vip_tcp_port == null ? 0 : 1"));
    expect(tcp.protocol).toBe("TCP");
    expect(udp.protocol).toBe("UDP");
    expect(tcp.client_affinity).toBe(udp.client_affinity);
    expect(tcp.port_range).toEqual([
      { from_port: ref("var.vip_tcp_port"), to_port: ref("var.vip_tcp_port") },
    ]);
    expect(anycast.outputs.tcp_listener_arn!.value).toBe(
      ref("one(aws_globalaccelerator_listener.tcp[*].id)"),
    );
    expect(anycast.variables.vip_tcp_port!.validation).toBeDefined();
  });

  it("the root passes the topology's ports and the TCP listener to the accelerator and every POP", () => {
    expect(root.modules.anycast!.vip_tcp_port).toBe(ref("local.vip_tcp_port"));
    expect(root.modules.pop).toMatchObject({
      tcp_listener_arn: ref("module.anycast[0].tcp_listener_arn"),
      global_vip_tcp_port: ref("local.vip_tcp_port"),
      vip_tcp_port: ref("local.pop_vip_tcp_ports[each.key]"),
    });
    // From the rendered topology (root.test.ts plans it with the real binary).
    expect(String(root.locals.vip_tcp_port)).toContain('module.topology.topology, "globalVipTcpPort"');
    expect(String(root.locals.pop_vip_tcp_ports)).toContain('"vipTcpPort"');
  });
});
