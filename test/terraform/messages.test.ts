// Every validation of modules/topology, as an operator meets it through the preview
// (scripts/terraform/render-topology.ts running the real terraform): each bad entry breaks one
// rule, and the messages must be exactly one per rule, naming exactly that entry and field.
// (terraform test in the module proves each rule fails alone; this proves what it says.)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  renderTopologyJson,
  TERRAFORM_DIR,
  TopologyRenderError,
} from "../../scripts/terraform/render-topology.ts";
import { type JsonObject, parseHclFile } from "./hcl.ts";

const EXAMPLE = join(TERRAFORM_DIR, "examples", "global.tfvars");
const dir = mkdtempSync(join(tmpdir(), "gr-tf-messages-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let example: { clusters: JsonObject; pops: JsonObject };
beforeAll(async () => {
  example = (await parseHclFile(EXAMPLE)) as typeof example;
});

/** The sorted problems of rendering the example with these variables overridden. */
async function problems(name: string, overrides: JsonObject): Promise<string[]> {
  const file = join(dir, `${name}.tfvars.json`);
  writeFileSync(file, JSON.stringify(overrides));
  try {
    await renderTopologyJson([EXAMPLE, file]);
  } catch (e) {
    if (e instanceof TopologyRenderError) return [...e.problems].sort();
    throw e;
  }
  throw new Error("rendered, but should have been refused");
}

const cluster = (id: number, patch: JsonObject = {}): JsonObject => ({
  id,
  region: "af-south",
  continent: "AF",
  countries: ["ZA"],
  latitude: -26.2,
  longitude: 28.05,
  capacity: 1000,
  signalling_url: "https://jnb1.signal.example.net",
  backend_url: "wss://agent.jnb1.example.net/v1/voice",
  backbone: "198.51.100.90:5100",
  backbone_cidrs: ["198.51.100.80/28"],
  kubernetes: { context: "jnb1" },
  ...patch,
});

let region = 0;
const pop = (id: number, patch: JsonObject = {}): JsonObject => ({
  id,
  region: `xx-test-${++region}`,
  latitude: -26.14,
  longitude: 28.25,
  backbone: "203.0.113.74:4478",
  backbone_cidrs: ["203.0.113.72/29"],
  aws: { vpc_id: "vpc-0a1b2c", public_subnet_ids: ["subnet-0a1"], private_subnet_ids: ["subnet-0b1"] },
  ...patch,
});

describe("modules/topology's messages through the preview (real terraform)", () => {
  it("every clusters validation names its entry", async () => {
    const clusters = {
      ...example.clusters,
      C_Key: cluster(11),
      "c-id": cluster(2.5),
      "c-dup": cluster(1),
      "c-region": cluster(13, { region: "Eu West" }),
      "c-continent": cluster(14, { continent: "EURO" }),
      "c-country": cluster(15, { countries: ["ZA", "za"] }),
      "c-coords": cluster(16, { latitude: 123 }),
      "c-capacity": cluster(17, { capacity: 5000 }),
      "c-signal": cluster(18, { signalling_url: "ftp://jnb1.example.net" }),
      "c-backend": cluster(19, { backend_url: "https://agent.example.net" }),
      "c-backbone": cluster(20, { backbone: "198.51.100.90:70000" }),
      "c-cidr": cluster(21, { backbone_cidrs: ["198.51.100.80/33", "::/0"] }),
      "c-nocidr": cluster(22, { backbone_cidrs: [] }),
      "c-k8s": cluster(23, { kubernetes: { context: " " } }),
    };
    expect(await problems("clusters", { clusters })).toEqual(
      [
        "Cluster keys (the cluster name) must be lower-case letters, digits and '-', 1-63 characters, starting with a letter or digit; not valid: clusters.C_Key.",
        "Cluster ids must be whole numbers from 1 to 65535; not valid: clusters.c-id.id = 2.5.",
        "Cluster ids must be unique (the id is carried in every hint and call id); repeated: id 1 in clusters.c-dup and clusters.fra1.",
        "Cluster regions must be lower-case letters, digits and '-', 1-63 characters; not valid: clusters.c-region.region = Eu West.",
        "Cluster continents must be one of AF, AN, AS, EU, NA, OC, SA; not valid: clusters.c-continent.continent = EURO.",
        'Cluster countries must be ISO 3166 alpha-2 codes in capitals such as "DE"; not valid: clusters.c-country.countries za.',
        "Cluster latitude must be between -90 and 90 and longitude between -180 and 180; not valid: clusters.c-coords (latitude 123, longitude 28.05).",
        "Cluster capacity must be a whole number of sessions from 1 to 10000000, and at most kubernetes.transceivers_max times kubernetes.sessions_per_pod; not valid: clusters.c-capacity.capacity = 5000.",
        'Cluster signalling_url must be an http(s) URL such as "https://fra1.signal.example.net"; not valid: clusters.c-signal.signalling_url = ftp://jnb1.example.net.',
        "Cluster backend_url must be a ws:// or wss:// URL of the voice backend; not valid: clusters.c-backend.backend_url = https://agent.example.net.",
        'Cluster backbone and vip must be "ip:port" or "[ipv6]:port" with a literal IP and a port from 1 to 65535; not valid: clusters.c-backbone.backbone = 198.51.100.90:70000.',
        'Cluster backbone_cidrs must be a non-empty list of CIDRs narrower than /0, such as "203.0.113.0/24" or "2001:db8::/48"; not valid: clusters.c-cidr.backbone_cidrs 198.51.100.80/33, clusters.c-cidr.backbone_cidrs ::/0, clusters.c-nocidr.backbone_cidrs (empty).',
        "Cluster kubernetes settings need a non-empty context, a namespace of lower-case letters, digits and '-', 1 <= transceivers_min <= transceivers_max <= 65535, sessions_per_pod, relay_replicas and gateway_replicas of at least 1, and drain_seconds from 0 to 3600; not valid: clusters.c-k8s.kubernetes.",
      ].sort(),
    );
  });

  it("every pops validation names its entry", async () => {
    const pops = {
      ...example.pops,
      P_Key: pop(31),
      "p-id": pop(9.5),
      "p-dup": pop(1),
      "p-region": pop(33, { region: "xx-test" }),
      "p-shared": pop(34, { region: "eu-central-1" }),
      "p-coords": pop(35, { latitude: 123 }),
      "p-backbone": pop(36, { backbone: "203.0.113.74:70000" }),
      "p-port": pop(37, { backbone: "203.0.113.74:3478" }),
      "p-cidr": pop(38, { backbone_cidrs: ["203.0.113.72/33", "10.0.0.0/0"] }),
      "p-nocidr": pop(39, { backbone_cidrs: [] }),
      "p-cluster": pop(40, {
        cluster: "nope",
        aws: {
          vpc_id: "vpc-0a",
          public_subnet_ids: ["subnet-1"],
          private_subnet_ids: ["subnet-2"],
          redis_url: "redis://10.0.0.5:6379",
        },
      }),
      "p-redis": pop(41, { cluster: "fra1" }),
      "p-aws": pop(42, {
        aws: { vpc_id: "vpc-XYZ", public_subnet_ids: ["subnet-1"], private_subnet_ids: ["subnet-2"] },
      }),
    };
    expect(await problems("pops", { pops })).toEqual(
      [
        "POP keys (the POP name) must be lower-case letters, digits and '-', 1-63 characters, starting with a letter or digit; not valid: pops.P_Key.",
        "POP ids must be whole numbers from 1 to 65535; not valid: pops.p-id.id = 9.5.",
        "POP ids must be unique (the id is carried in every backbone frame); repeated: id 1 in pops.fra and pops.p-dup.",
        'POP regions must be AWS region names such as "eu-central-1"; not valid: pops.p-region.region = xx-test.',
        "Only one POP per AWS region (Global Accelerator takes one endpoint group per region and listener); shared: eu-central-1 by pops.fra and pops.p-shared.",
        "POP latitude must be between -90 and 90 and longitude between -180 and 180; not valid: pops.p-coords (latitude 123, longitude 28.25).",
        'POP backbone and vip must be "ip:port" or "[ipv6]:port" with a literal IP and a port from 1 to 65535; not valid: pops.p-backbone.backbone = 203.0.113.74:70000.',
        "A POP's vip port and backbone port must differ (both listen on the POP's load balancer); same port: pops.p-port.",
        'POP backbone_cidrs must be a non-empty list of CIDRs narrower than /0, such as "203.0.113.0/24" or "2001:db8::/48"; not valid: pops.p-cidr.backbone_cidrs 203.0.113.72/33, pops.p-cidr.backbone_cidrs 10.0.0.0/0, pops.p-nocidr.backbone_cidrs (empty).',
        "POP cluster must be a key of clusters (the cluster co-located with the POP); unknown: pops.p-cluster.cluster = nope.",
        "A POP co-located with a cluster forwards straight to its transceivers and needs aws.redis_url (that cluster's Redis, where transceivers announce themselves); missing: pops.p-redis.",
        'POP aws settings need vpc_id "vpc-...", at least one public and one private subnet "subnet-...", an instance_type such as "c6in.large", 1 <= min_size <= max_size <= 100, traffic_dial from 0 to 100, and redis_url (if set) starting with redis:// or rediss://; not valid: pops.p-aws.aws.',
      ].sort(),
    );
  });

  it("global_vip, default_cluster and secrets in the file", async () => {
    const secret = Buffer.alloc(32, 5).toString("base64");
    const overrides = {
      global_vip: "192.0.2.10:99999",
      default_cluster: "nope",
      hint_keys: `1:${secret}`,
      edge_secrets: { API_KEY_HASHES: secret },
    };
    const got = await problems("scalars", overrides);
    expect(got).toEqual(
      [
        'global_vip must be "ip:port" or "[ipv6]:port" with a literal IP and a port from 1 to 65535; got 192.0.2.10:99999.',
        "default_cluster must be a key of clusters; got nope.",
        "hint_keys is a secret: set TF_VAR_hint_keys in the environment of terraform apply, never in a tfvars file.",
        "edge_secrets is a secret: set TF_VAR_edge_secrets in the environment of terraform apply, never in a tfvars file.",
      ].sort(),
    );
    expect(got.join("\n")).not.toContain(secret);
  });

  // Terraform checks a variable whose validations refer to an invalid variable only once that one
  // is valid: these come one at a time.
  it("a misspelt optional attribute, at the top of an entry or nested", async () => {
    const fra = example.pops.fra as JsonObject;
    const fra1 = example.clusters.fra1 as JsonObject;
    const pops = { ...example.pops, fra: { ...fra, vpi: "192.0.2.10:3478" } };
    const clusters = {
      ...example.clusters,
      fra1: { ...fra1, kubernetes: { ...(fra1.kubernetes as JsonObject), drain_secs: 60 } },
    };
    expect(await problems("misspelt", { pops, clusters })).toEqual([
      "clusters and pops entries may only set the attributes their types declare (Terraform would drop any other silently, so a misspelt optional attribute would take its default); unknown: clusters.fra1.kubernetes.drain_secs (expected one of context, drain_seconds, gateway_replicas, namespace, relay_replicas, service_annotations, sessions_per_pod, transceivers_max, transceivers_min), pops.fra.vpi (expected one of aws, backbone, backbone_cidrs, cluster, id, latitude, longitude, region, vip).",
    ]);
  });

  it("no cluster at all", async () => {
    expect(await problems("no-cluster", { clusters: {} })).toEqual([
      "At least one cluster is required in clusters.",
    ]);
  });

  it("no POP at all", async () => {
    expect(await problems("no-pop", { pops: {} })).toEqual(["At least one POP is required in pops."]);
  });

  it("a missing or mistyped attribute is Terraform's own type error, naming the entry", async () => {
    const { latitude: _, ...fra } = example.pops.fra as JsonObject;
    const got = await problems("types", { pops: { ...example.pops, fra: { ...fra, id: "one" } } });
    expect(got).toHaveLength(1);
    expect(got[0]).toMatch(/^Invalid value for input variable: .* module\.topology\.var\.pops /);
    expect(got[0]).toMatch(/element "fra": attribute "(latitude" is required|id": a number is required)/);
  });
});
