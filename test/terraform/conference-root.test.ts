// Conferences through the deployment's root (the cluster module stubbed, stub-root.ts: its
// `summary` echoes what the root passed) and through the topology preview, with the real
// `terraform`: the peer networks a cluster gets, the operator's messages for every mistake, and
// the backbone keyring never shown nor accepted from a tfvars file. The cluster module itself:
// conference.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderTopologyJson, TopologyRenderError } from "../../scripts/terraform/render-topology.ts";
import { describeDiagnostic, TERRAFORM_DIR } from "../../scripts/terraform/run.ts";
import { KEYS } from "./cluster-eval.ts";
import { type JsonObject, parseHclFile } from "./hcl.ts";
import { type PlanResult, StubRoot, TEST_SECRETS } from "./stub-root.ts";

const EXAMPLE = join(TERRAFORM_DIR, "examples", "global.tfvars");
const dir = mkdtempSync(join(tmpdir(), "gr-tf-conference-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the root with conferences, the cluster module stubbed (real terraform)", () => {
  let stub: StubRoot;
  let clusters: Record<string, { backbone_cidrs: string[] }>;
  const withKeys = { ...TEST_SECRETS, TF_VAR_backbone_keys: KEYS };
  const messages = (r: PlanResult): string[] => r.errors.map(describeDiagnostic).sort();

  beforeAll(async () => {
    stub = await StubRoot.create();
    await stub.workspace("cluster-fra1");
    clusters = ((await parseHclFile(EXAMPLE)) as { clusters: typeof clusters }).clusters;
  });
  afterAll(() => stub?.dispose());

  it("passes fra1 the other clusters' backbone_cidrs (not its own) and the conference defaults", async () => {
    const plan = join(stub.sandbox.dir, "fra1.tfplan");
    const r = await stub.plan([EXAMPLE], { deploy_cluster: "fra1", conference: "{}" }, withKeys, plan);
    expect(r.errors.map(describeDiagnostic)).toEqual([]);
    const shown = await stub.run(["show", "-json", plan]);
    const doc = JSON.parse(shown.stdout) as {
      planned_values: { outputs: { cluster: { value: Record<string, JsonObject> } } };
    };
    const fra1 = doc.planned_values.outputs.cluster.value.fra1!;
    const others = Object.entries(clusters)
      .filter(([k]) => k !== "fra1")
      .flatMap(([, c]) => c.backbone_cidrs);
    expect(others.length).toBeGreaterThan(2);
    expect([...(fra1.conference_peer_cidrs as string[])].sort()).toEqual([...others].sort());
    expect(fra1.conference_peer_cidrs).not.toContain(clusters.fra1!.backbone_cidrs[0]);
    expect(fra1.conference).toEqual({ port: 3480, max_participants: 8, nack: true, address: "pod" });
    // The keyring reaches the module as a sensitive input (the stub's summary leaves it out).
    expect(fra1).not.toHaveProperty("backbone_keys");
  });

  it("without conference, nothing is passed on (and no keyring is needed)", async () => {
    const plan = join(stub.sandbox.dir, "off.tfplan");
    const r = await stub.plan([EXAMPLE], { deploy_cluster: "fra1" }, TEST_SECRETS, plan);
    expect(r.errors.map(describeDiagnostic)).toEqual([]);
    const shown = await stub.run(["show", "-json", plan]);
    const doc = JSON.parse(shown.stdout) as {
      planned_values: { outputs: { cluster: { value: Record<string, JsonObject> } } };
    };
    expect(doc.planned_values.outputs.cluster.value.fra1!.conference).toBeNull();
  });

  it("every conference mistake, with the operator's message", async () => {
    const r = await stub.plan(
      [EXAMPLE],
      { deploy_cluster: "fra1", conference: '{ port = 3479, max_participants = 65, address = "lb" }' },
      TEST_SECRETS,
    );
    expect(messages(r)).toEqual(
      [
        "conference.port must be a whole UDP port from 1024 to 65535 (the transceiver runs without privileges) other than 3479 (its backbone port); got 3479.",
        "conference.max_participants must be a whole number from 2 to 64 (the owner's client included); got 65.",
        'conference.address must be "pod" (advertise the pod IP) or "node" (the node IP, with a hostPort); got lb.',
        "conference needs the backbone keyring: set TF_VAR_backbone_keys (GR_BACKBONE_KEYS, the same on every cluster), or leave conference null.",
      ].sort(),
    );
    const one = await stub.plan(
      [EXAMPLE],
      { deploy_cluster: "fra1", conference: "{ max_participants = 1 }" },
      withKeys,
    );
    expect(messages(one)).toEqual([
      "conference.max_participants must be a whole number from 2 to 64 (the owner's client included); got 1.",
    ]);
    const low = await stub.plan([EXAMPLE], { deploy_cluster: "fra1", conference: "{ port = 80 }" }, withKeys);
    expect(messages(low)).toEqual([
      "conference.port must be a whole UDP port from 1024 to 65535 (the transceiver runs without privileges) other than 3479 (its backbone port); got 80.",
    ]);
  });

  it("a misspelt conference attribute is an error, not a silent default", async () => {
    const r = await stub.plan(
      [EXAMPLE],
      { deploy_cluster: "fra1", conference: "{ max_participant = 4 }" },
      withKeys,
    );
    expect(messages(r)).toEqual([
      "anycast, edge, images and conference may only set the attributes their types declare (Terraform would drop any other silently, so a misspelt optional attribute would take its default); unknown: conference.max_participant (expected one of address, max_participants, nack, port).",
    ]);
  });

  it("a bad keyring is refused without its value appearing in Terraform's output", async () => {
    const secret = Buffer.alloc(40, 5).toString("base64");
    for (const [keys, message] of [
      [
        `16:${secret}`,
        'backbone_keys must be "id:base64,id:base64" with ids 0-15 and secrets of at least 32 bytes (44 base64 characters).',
      ],
      [`1:${secret},1:${secret}`, "backbone_keys lists a key id more than once."],
    ] as const) {
      const r = await stub.plan(
        [EXAMPLE],
        { deploy_cluster: "fra1", conference: "{}" },
        {
          ...TEST_SECRETS,
          TF_VAR_backbone_keys: keys,
        },
      );
      expect(messages(r)).toEqual([message]);
      expect(r.stdout + r.stderr).not.toContain(secret);
    }
  });
});

describe("the preview with conferences (real terraform)", () => {
  it("renders the same topology with conference set, and refuses backbone_keys in a tfvars file", async () => {
    const plain = await renderTopologyJson([EXAMPLE]);
    const on = join(dir, "conference.tfvars");
    writeFileSync(on, "conference = { port = 3480, max_participants = 4 }\n");
    expect((await renderTopologyJson([EXAMPLE, on])).json).toBe(plain.json);
    const secret = Buffer.alloc(32, 8).toString("base64");
    const leaked = join(dir, "leaked.tfvars");
    writeFileSync(leaked, `backbone_keys = "1:${secret}"\n`);
    const refused = await renderTopologyJson([EXAMPLE, leaked]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(TopologyRenderError);
    const problems = (refused as TopologyRenderError).problems;
    expect(problems).toEqual([
      "backbone_keys is a secret: set TF_VAR_backbone_keys in the environment of terraform apply, never in a tfvars file.",
    ]);
    expect(JSON.stringify(problems)).not.toContain(secret);
  });
});
