// The topology rendered from tfvars by the real terraform (scripts/terraform/render-topology.ts,
// terraform/preview): the example network validates against the shared schema and loads in the
// edge, the transceiver and the relay; adding a POP or a cluster is one map entry. (Terraform runs
// offline; the edge's KV namespace is a mock.) The messages for bad tfvars: messages.test.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadTopology } from "../../edge/config.ts";
import type { HealthView } from "../../edge/health/book.ts";
import { planSteering } from "../../edge/steering/policy.ts";
import {
  type RenderedTopology,
  renderTopology,
  renderTopologyJson,
  TERRAFORM_DIR,
} from "../../scripts/terraform/render-topology.ts";
import { parseTopology, validateTopology } from "../../shared/topology/schema.ts";
import { type JsonObject, parseHclFile } from "./hcl.ts";

const EXAMPLE = join(TERRAFORM_DIR, "examples", "global.tfvars");
const dir = mkdtempSync(join(tmpdir(), "gr-tf-render-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let example: { clusters: JsonObject; pops: JsonObject };
let rendered: RenderedTopology;
beforeAll(async () => {
  example = (await parseHclFile(EXAMPLE)) as typeof example;
  rendered = await renderTopologyJson([EXAMPLE]);
});

/** Renders the example with these variables overridden (a .tfvars.json file after it). */
async function renderWith(name: string, overrides: JsonObject): Promise<RenderedTopology> {
  const file = join(dir, `${name}.tfvars.json`);
  writeFileSync(file, JSON.stringify(overrides));
  return renderTopologyJson([EXAMPLE, file]);
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

describe("the example network, rendered by terraform", () => {
  it("is a topology that the shared schema validates and parseTopology loads", async () => {
    const { json, topology } = rendered;
    expect(validateTopology(JSON.parse(json))).toMatchObject({ ok: true });
    expect(parseTopology(json, "rendered")).toEqual(topology);
    expect(topology.clusters.length).toBeGreaterThanOrEqual(4);
    expect(new Set(topology.clusters.map((c) => c.continent)).size).toBeGreaterThanOrEqual(4);
    expect(topology.pops.length).toBeGreaterThanOrEqual(5);
  });

  it("renderTopology returns the same topology", async () => {
    expect(await renderTopology([EXAMPLE])).toEqual(rendered.topology);
  });

  it("has unique ids and names, and every POP's clusterId names a cluster", () => {
    const { topology } = rendered;
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
    const { json, topology } = rendered;
    const inline = await loadTopology({ TOPOLOGY: json }, 0);
    expect(inline.topology).toEqual(topology);
    const kv = { get: async (key: string) => (key === "topology.json" ? json : null) };
    const fromKv = await loadTopology({ TOPOLOGY_KV: kv, TOPOLOGY_KEY: "topology.json" }, 1e12);
    expect(fromKv.topology).toEqual(topology);
    expect([...fromKv.byId.keys()].sort()).toEqual(topology.clusters.map((c) => c.id).sort());
  });

  it("is accepted by the transceiver's configuration loader (TOPOLOGY_FILE)", async () => {
    const { json, topology } = rendered;
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
  });

  it("the user-data environment and the rendered topology load for a POP relay", async () => {
    const topologyFile = join(dir, "topology.json");
    writeFileSync(topologyFile, rendered.json);
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
    expect(loadConfig(env)).toMatchObject({ role: "pop", id: 2, adminPort: 9100, drainMs: 120000 });
  });
});

describe("adding a POP or a cluster is one map entry (terraform renders it)", () => {
  it("a new POP entry appears in the rendered topology and in what the edge loads", async () => {
    const before = rendered.topology;
    const after = await renderWith("jnb", { pops: { ...example.pops, jnb: JNB_POP } });
    expect(after.topology.pops.length).toBe(before.pops.length + 1);
    expect(after.topology.pops.find((p) => p.name === "jnb")).toEqual({
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
    expect({ ...after.topology, pops: after.topology.pops.filter((p) => p.name !== "jnb") }).toEqual(before);
    const edge = await loadTopology({ TOPOLOGY: after.json }, 0);
    expect(edge.topology.pops.map((p) => p.name)).toContain("jnb");
  });

  it("a new cluster (with its POP) becomes the edge's first steering choice for nearby clients", async () => {
    const client = { latitude: -26.2, longitude: 28.04, country: "ZA", continent: "AF" };
    const planBefore = planSteering(rendered.topology, client, up());
    expect(planBefore.candidates.map((c) => c.cluster.name)).not.toContain("jnb1");

    const after = await renderWith("jnb1", {
      clusters: { ...example.clusters, jnb1: JNB_CLUSTER },
      pops: {
        ...example.pops,
        jnb: {
          ...JNB_POP,
          cluster: "jnb1",
          aws: { ...JNB_POP.aws, redis_url: "rediss://redis.jnb1.internal.example.net:6380" },
        },
      },
    });
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

  it("the example file itself is not edited by these tests", () => {
    expect(readFileSync(EXAMPLE, "utf8")).not.toContain("jnb");
  });
});
