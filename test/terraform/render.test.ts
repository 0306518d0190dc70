// The topology rendered from tfvars, as terraform/outputs.tf renders it: the example network
// validates against the shared schema and loads in the edge; adding a POP or a cluster is one map
// entry; bad tfvars are refused with the message an operator needs. (Static: no cloud, no
// Terraform binary; the edge's KV namespace is a mock.)
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadTopology } from "../../edge/config.ts";
import type { HealthView } from "../../edge/health/book.ts";
import { planSteering } from "../../edge/steering/policy.ts";
import { type JsonObject, loadModule, parseHcl } from "../../scripts/terraform/hcl.ts";
import {
  readTfvars,
  renderTopology,
  TERRAFORM_DIR,
  terraformJsonEncode,
} from "../../scripts/terraform/render-topology.ts";
import { parseTopology, type Topology, validateTopology } from "../../shared/topology/schema.ts";

const EXAMPLE = join(TERRAFORM_DIR, "examples", "global.tfvars");
let example: JsonObject;

beforeAll(async () => {
  example = await readTfvars([EXAMPLE]);
});

const clone = (): JsonObject & { pops: JsonObject; clusters: JsonObject } =>
  structuredClone(example) as JsonObject & { pops: JsonObject; clusters: JsonObject };

async function render(raw: JsonObject): Promise<{ json: string; topology: Topology }> {
  const r = await renderTopology(raw);
  if (!r.ok) throw new Error(r.errors.join("\n"));
  return r;
}

async function errorsOf(raw: JsonObject): Promise<string[]> {
  const r = await renderTopology(raw);
  if (r.ok) throw new Error("rendered, but should have been refused");
  return r.errors;
}

const up =
  () =>
  (c: { capacity: number }): HealthView => ({
    status: "up",
    load: 0,
    capacity: c.capacity,
    source: "none",
    checkedAtMs: null,
  });

const JNB_POP = {
  id: 9,
  region: "af-south-1",
  latitude: -26.14,
  longitude: 28.25,
  backbone: "203.0.113.74:4478",
  backbone_cidrs: ["203.0.113.72/29"],
  aws: {
    vpc_id: "vpc-0a1b2c3d4e5f60009",
    public_subnet_ids: ["subnet-0a1b2c3d4e5f60811"],
    private_subnet_ids: ["subnet-0a1b2c3d4e5f60821"],
  },
};

const JNB_CLUSTER = {
  id: 6,
  region: "af-south",
  continent: "AF",
  countries: ["ZA", "NA", "BW"],
  latitude: -26.2,
  longitude: 28.05,
  capacity: 1000,
  signalling_url: "https://jnb1.signal.example.net",
  backend_url: "wss://agent.jnb1.example.net/v1/voice",
  backbone: "198.51.100.90:5100",
  backbone_cidrs: ["198.51.100.80/28"],
  kubernetes: { context: "jnb1" },
};

describe("the example network (static)", () => {
  it("renders a topology that the shared schema validates and parseTopology loads", async () => {
    const { json, topology } = await render(example);
    expect(validateTopology(JSON.parse(json))).toMatchObject({ ok: true });
    expect(parseTopology(json, "rendered")).toEqual(topology);
    expect(topology.clusters.length).toBeGreaterThanOrEqual(4);
    expect(new Set(topology.clusters.map((c) => c.continent)).size).toBeGreaterThanOrEqual(4);
    expect(topology.pops.length).toBeGreaterThanOrEqual(5);
  });

  it("has unique ids and names, and every POP's clusterId names a cluster", async () => {
    const { topology } = await render(example);
    const ids = (xs: { id: number }[]) => new Set(xs.map((x) => x.id)).size;
    expect(ids(topology.clusters)).toBe(topology.clusters.length);
    expect(ids(topology.pops)).toBe(topology.pops.length);
    expect(new Set(topology.pops.map((p) => p.name)).size).toBe(topology.pops.length);
    const clusterIds = new Set(topology.clusters.map((c) => c.id as number));
    for (const p of topology.pops)
      if (p.clusterId !== undefined) expect(clusterIds.has(p.clusterId)).toBe(true);
    expect(clusterIds.has(topology.defaultClusterId)).toBe(true);
  });

  it("loads in the edge's configuration loader, inline and from KV (mock KV namespace)", async () => {
    const { json, topology } = await render(example);
    const inline = await loadTopology({ TOPOLOGY: json }, 0);
    expect(inline.topology).toEqual(topology);
    const kv = { get: async (key: string) => (key === "topology.json" ? json : null) };
    const fromKv = await loadTopology({ TOPOLOGY_KV: kv, TOPOLOGY_KEY: "topology.json" }, 1e12);
    expect(fromKv.topology).toEqual(topology);
    expect([...fromKv.byId.keys()].sort()).toEqual(topology.clusters.map((c) => c.id).sort());
  });

  it.skipIf(!existsSync(join(TERRAFORM_DIR, "..", "regional", "transceiver", "config.ts")))(
    "is accepted by the transceiver's configuration loader (TOPOLOGY_FILE)",
    async () => {
      const { json, topology } = await render(example);
      const { loadConfig } = (await import("../../regional/transceiver/config.ts")) as {
        loadConfig: (
          env: Record<string, string>,
          read: (p: string) => string,
        ) => { globalVip: { port: number } };
      };
      const key = Buffer.alloc(32, 7).toString("base64");
      const cfg = loadConfig(
        {
          CLUSTER_ID: String(topology.clusters[0]!.id),
          TRANSCEIVER_ID: "1",
          TOPOLOGY_FILE: "/etc/global-relay/topology.json",
          GR_HINT_KEYS: `1:${key}`,
          GR_CALL_ID_KEYS: `1:${key}`,
          GR_CLUSTER_SECRET: key,
        },
        (p) => {
          if (p !== "/etc/global-relay/topology.json") throw new Error(`unexpected read ${p}`);
          return json;
        },
      );
      expect(cfg.globalVip.port).toBe(3478);
    },
  );
});

describe("the relay's configuration loader accepts what the POP module deploys (static)", () => {
  it.skipIf(!existsSync(join(TERRAFORM_DIR, "..", "regional", "relay", "config.ts")))(
    "the user-data environment and the rendered topology load for a POP relay",
    async () => {
      const { json } = await render(example);
      const dir = mkdtempSync(join(tmpdir(), "gr-relay-cfg-"));
      try {
        const topologyFile = join(dir, "topology.json");
        writeFileSync(topologyFile, json);
        // The KEY=VALUE lines the instance writes to /etc/global-relay/relay.env.
        const tpl = readFileSync(join(TERRAFORM_DIR, "modules", "pop", "user-data.sh.tftpl"), "utf8");
        const body = tpl.slice(tpl.indexOf("<<ENVFILE\n") + 10, tpl.indexOf("\nENVFILE\n"));
        const values: Record<string, string> = {
          pop_id: "2",
          admin_port: "9100",
          "drain_seconds * 1000": "120000",
          redis_url: "",
        };
        const env: Record<string, string> = {};
        for (const line of body.split("\n")) {
          if (line.startsWith("#") || line.startsWith("%{")) continue;
          const eq = line.indexOf("=");
          const value = line.slice(eq + 1).replace(/\$\{([^}]+)\}/g, (_, k: string) => values[k] ?? `<${k}>`);
          env[line.slice(0, eq)] = value;
        }
        expect(env.RELAY_ROLE).toBe("pop");
        env.TOPOLOGY_FILE = topologyFile;
        env.GR_HINT_KEYS = `1:${Buffer.alloc(32, 3).toString("base64")}`;
        const { loadConfig } = (await import("../../regional/relay/config.ts")) as {
          loadConfig: (env: Record<string, string>) => {
            role: string;
            id: number;
            adminPort: number;
            drainMs: number;
          };
        };
        const cfg = loadConfig(env);
        expect(cfg).toMatchObject({ role: "pop", id: 2, adminPort: 9100, drainMs: 120000 });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("exactly what outputs.tf renders (static)", () => {
  const tiny = `
global_vip      = "192.0.2.1:3478"
default_cluster = "b1"
clusters = {
  b1 = {
    id = 2, region = "eu-b", continent = "EU", latitude = 50.5, longitude = 8, capacity = 100
    signalling_url = "https://b1.example.net", backend_url = "wss://a.example.net"
    backbone = "198.51.100.2:5100", backbone_cidrs = ["198.51.100.0/28"], vip = "198.51.100.3:3478"
    kubernetes = { context = "b" }
  }
  a1 = {
    id = 1, region = "us-a", continent = "NA", countries = ["US"], latitude = 38.9, longitude = -77.04
    capacity = "200", signalling_url = "https://a1.example.net", backend_url = "ws://a.example.net"
    backbone = "198.51.100.18:5100", backbone_cidrs = ["198.51.100.16/28", "2001:db8::/48"]
    kubernetes = { context = "a" }
  }
}
pops = {
  zz = {
    id = 9, region = "us-east-1", latitude = 38.9, longitude = -77.04, cluster = "a1"
    backbone = "203.0.113.1:4478", backbone_cidrs = ["203.0.113.0/29"]
    aws = { vpc_id = "vpc-1", public_subnet_ids = ["subnet-1"], private_subnet_ids = ["subnet-2"], redis_url = "redis://10.0.0.5:6379" }
  }
  aa = {
    id = 3, region = "eu-central-1", latitude = 0.0000001, longitude = 8, vip = "192.0.2.7:3478"
    backbone = "[2001:db8::9]:4478", backbone_cidrs = ["2001:db8:1::/48"]
    aws = { vpc_id = "vpc-2", public_subnet_ids = ["subnet-3"], private_subnet_ids = ["subnet-4"] }
  }
}
`;

  it("matches the JSON Terraform's jsonencode(local.topology) produces, byte for byte", async () => {
    const { json } = await render(await parseHcl("tiny.tfvars", tiny));
    // Written by hand from Terraform's rules: map keys in lexical order (a1 before b1, aa before zz),
    // object keys sorted, no whitespace, optional fields absent (not null), numbers in plain
    // decimal, "200" converted to a number, the POP vip defaulting to global_vip.
    expect(json).toBe(
      '{"clusters":[' +
        '{"backbone":"198.51.100.18:5100","backboneCidrs":["198.51.100.16/28","2001:db8::/48"],"capacity":200,"continent":"NA","countries":["US"],"id":1,"latitude":38.9,"longitude":-77.04,"name":"a1","region":"us-a","signallingUrl":"https://a1.example.net"},' +
        '{"backbone":"198.51.100.2:5100","backboneCidrs":["198.51.100.0/28"],"capacity":100,"continent":"EU","countries":[],"id":2,"latitude":50.5,"longitude":8,"name":"b1","region":"eu-b","signallingUrl":"https://b1.example.net","vip":"198.51.100.3:3478"}],' +
        '"defaultClusterId":2,"globalVip":"192.0.2.1:3478","pops":[' +
        '{"backbone":"[2001:db8::9]:4478","backboneCidrs":["2001:db8:1::/48"],"id":3,"latitude":0.0000001,"longitude":8,"name":"aa","region":"eu-central-1","vip":"192.0.2.7:3478"},' +
        '{"backbone":"203.0.113.1:4478","backboneCidrs":["203.0.113.0/29"],"clusterId":1,"id":9,"latitude":38.9,"longitude":-77.04,"name":"zz","region":"us-east-1","vip":"192.0.2.1:3478"}],' +
        '"version":1}',
    );
  });

  it("uses the same field names as the expression in outputs.tf", async () => {
    const m = await loadModule(TERRAFORM_DIR);
    // hcl2json gives the object constructor as an object whose values are expressions.
    const top = m.locals.topology as Record<string, unknown>;
    const inTf = new Set(Object.keys(top));
    for (const expr of Object.values(top))
      for (const [, name] of String(expr).matchAll(/\b([A-Za-z]+)\s*=(?![=>])/g)) inTf.add(name!);
    const { json } = await render(await parseHcl("tiny.tfvars", tiny));
    const t = JSON.parse(json) as { clusters: object[]; pops: object[] };
    const rendered = new Set([
      ...Object.keys(t),
      ...t.clusters.flatMap((c) => Object.keys(c)),
      ...t.pops.flatMap((p) => Object.keys(p)),
    ]);
    expect([...inTf].sort()).toEqual([...rendered].sort());
  });

  it("jsonencode: sorted keys, plain decimals, HTML-safe strings", () => {
    expect(terraformJsonEncode({ b: 1e21, a: [1.5e-7, -2e-7, 123.25], c: "<a&b>", d: null, e: true })).toBe(
      '{"a":[0.00000015,-0.0000002,123.25],"b":1000000000000000000000,"c":"\\u003ca\\u0026b\\u003e","d":null,"e":true}',
    );
  });
});

describe("adding a POP or a cluster is one map entry (static)", () => {
  it("a new POP entry appears in the rendered topology and in what the edge loads", async () => {
    const before = await render(example);
    const raw = clone();
    raw.pops.jnb = JNB_POP;
    const after = await render(raw);
    expect(after.topology.pops.length).toBe(before.topology.pops.length + 1);
    const jnb = after.topology.pops.find((p) => p.name === "jnb");
    expect(jnb).toEqual({
      id: 9,
      name: "jnb",
      region: "af-south-1",
      latitude: -26.14,
      longitude: 28.25,
      vip: "192.0.2.10:3478",
      backbone: "203.0.113.74:4478",
      backboneCidrs: ["203.0.113.72/29"],
    });
    // Nothing else changed: the other entries render exactly as before.
    const others = JSON.parse(after.json) as Topology;
    others.pops = others.pops.filter((p) => p.name !== "jnb");
    expect(terraformJsonEncode(others as never)).toBe(before.json);
    const edge = await loadTopology({ TOPOLOGY: after.json }, 0);
    expect(edge.topology.pops.map((p) => p.name)).toContain("jnb");
  });

  it("a new cluster (with its POP) becomes the edge's first steering choice for nearby clients", async () => {
    const client = { latitude: -26.2, longitude: 28.04, country: "ZA", continent: "AF" };
    const before = await render(example);
    const planBefore = planSteering(before.topology, client, up());
    expect(planBefore.candidates.map((c) => c.cluster.name)).not.toContain("jnb1");

    const raw = clone();
    raw.clusters.jnb1 = JNB_CLUSTER;
    raw.pops.jnb = {
      ...JNB_POP,
      cluster: "jnb1",
      aws: { ...JNB_POP.aws, redis_url: "rediss://redis.jnb1.internal.example.net:6380" },
    };
    const after = await render(raw);
    const edge = await loadTopology({ TOPOLOGY: after.json }, 0);
    const plan = planSteering(edge.topology, client, up());
    expect(plan.candidates[0]!.cluster.name).toBe("jnb1");
    expect(plan.candidates.length).toBe(planBefore.candidates.length + 1);
    // Without coordinates, the country list steers: ZA is jnb1's.
    const byCountry = planSteering(edge.topology, { country: "ZA", continent: "AF" }, up());
    expect(byCountry.basis).toBe("country");
    expect(byCountry.candidates[0]!.cluster.name).toBe("jnb1");
    expect(edge.topology.pops.find((p) => p.name === "jnb")!.clusterId).toBe(6);
  });
});

describe("bad tfvars are refused with the operator's message (static)", () => {
  it("a duplicate POP id", async () => {
    const raw = clone();
    raw.pops.jnb = { ...JNB_POP, id: 3 };
    expect(await errorsOf(raw)).toEqual([
      "POP ids must be unique (the id is carried in every backbone frame); repeated: id 3 in pops.iad and pops.jnb.",
    ]);
  });

  it("a duplicate cluster id", async () => {
    const raw = clone();
    raw.clusters.jnb1 = { ...JNB_CLUSTER, id: 2 };
    expect(await errorsOf(raw)).toEqual([
      "Cluster ids must be unique (the id is carried in every hint and call id); repeated: id 2 in clusters.iad1 and clusters.jnb1.",
    ]);
  });

  it("latitude 123", async () => {
    const raw = clone();
    raw.pops.jnb = { ...JNB_POP, latitude: 123 };
    expect(await errorsOf(raw)).toEqual([
      "POP latitude must be between -90 and 90 and longitude between -180 and 180; not valid: pops.jnb (latitude 123, longitude 28.25).",
    ]);
  });

  it("a malformed CIDR and a /0", async () => {
    const raw = clone();
    raw.pops.jnb = { ...JNB_POP, backbone_cidrs: ["203.0.113.72/33", "10.0.0.0/0"] };
    expect(await errorsOf(raw)).toEqual([
      'POP backbone_cidrs must be a non-empty list of CIDRs narrower than /0, such as "203.0.113.0/24" or "2001:db8::/48"; not valid: pops.jnb.backbone_cidrs 203.0.113.72/33, pops.jnb.backbone_cidrs 10.0.0.0/0.',
    ]);
  });

  it("port 70000", async () => {
    const raw = clone();
    raw.clusters.jnb1 = { ...JNB_CLUSTER, backbone: "198.51.100.90:70000" };
    expect(await errorsOf(raw)).toEqual([
      'Cluster backbone and vip must be "ip:port" or "[ipv6]:port" with a literal IP and a port from 1 to 65535; not valid: clusters.jnb1.backbone = 198.51.100.90:70000.',
    ]);
  });

  it("several problems at once, each named (as Terraform reports every failed validation)", async () => {
    const raw = clone();
    raw.pops.jnb = { ...JNB_POP, region: "eu-central-1", cluster: "nope", backbone: "203.0.113.74:3478" };
    raw.default_cluster = "nope";
    expect(await errorsOf(raw)).toEqual([
      "default_cluster must be a key of clusters; got nope.",
      "Only one POP per AWS region (Global Accelerator takes one endpoint group per region and listener); shared: eu-central-1 by pops.fra and pops.jnb.",
      "A POP's vip port and backbone port must differ (both listen on the POP's load balancer); same port: pops.jnb.",
      "POP cluster must be a key of clusters (the cluster co-located with the POP); unknown: pops.jnb.cluster = nope.",
      "A POP co-located with a cluster forwards straight to its transceivers and needs aws.redis_url (that cluster's Redis, where transceivers announce themselves); missing: pops.jnb.",
    ]);
  });

  it("missing, mistyped and misspelt attributes", async () => {
    const raw = clone();
    const { latitude: _, ...noLatitude } = JNB_POP;
    raw.pops.jnb = { ...noLatitude, vpi: "192.0.2.10:3478", id: "nine" };
    expect(await errorsOf(raw)).toEqual([
      "pops.jnb.vpi: is not an attribute of this object (expected one of id, region, latitude, longitude, vip, backbone, backbone_cidrs, cluster, aws)",
      'pops.jnb.id: a number is required, got "nine"',
      'pops.jnb: attribute "latitude" is required',
    ]);
  });

  it("a secret in a tfvars file, and a variable that does not exist", async () => {
    const raw = clone();
    raw.hint_keys = "1:abc";
    raw.global_vipp = "192.0.2.10:3478";
    expect(await errorsOf(raw)).toEqual([
      "hint_keys: is a secret; set it in the environment (TF_VAR_hint_keys) or a secret store, never in a tfvars file",
      "global_vipp: is not a variable of terraform/variables.tf (a typo?)",
    ]);
  });

  it("secrets from the environment are validated when asked (--env)", async () => {
    const good = Buffer.alloc(32, 1).toString("base64");
    const ok = await renderTopology(example, {
      env: { TF_VAR_hint_keys: `3:${good}`, TF_VAR_call_id_keys: `1:${good}`, TF_VAR_cluster_secret: good },
    });
    expect(ok.ok).toBe(true);
    const bad = await renderTopology(example, {
      env: {
        TF_VAR_hint_keys: `16:${good}`,
        TF_VAR_cluster_secret: "c2hvcnQ=",
        TF_VAR_edge_secrets: '{ TOPOLOGY = "x" }',
      },
    });
    expect(bad.ok ? [] : bad.errors).toEqual([
      'hint_keys must be "id:base64,id:base64" with ids 0-15 and secrets of at least 32 bytes (44 base64 characters).',
      "cluster_secret must be base64 of at least 32 bytes (44 base64 characters).",
      "edge_secrets names must be upper-case letters, digits and '_' (starting with a letter) and must not reuse a binding the module sets itself (GR_CLUSTER_SECRET, GR_CALL_ID_KEYS, TOPOLOGY, TOPOLOGY_JSON, TOPOLOGY_KV, TOPOLOGY_KEY, RATE_LIMITER, ANALYTICS).",
    ]);
    // The messages never carry the secret.
    expect(JSON.stringify(bad)).not.toContain(good);
  });

  it("the example file itself is not edited by these tests", () => {
    expect(readFileSync(EXAMPLE, "utf8")).not.toContain("jnb");
  });
});
