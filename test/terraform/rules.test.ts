// The renderer says what Terraform says: every validation block of terraform/variables.tf has a
// twin in scripts/terraform/rules.ts with the same message, in the same order (static).
import { describe, expect, it } from "vitest";
import { loadModule, templateShape, validations } from "../../scripts/terraform/hcl.ts";
import { TERRAFORM_DIR } from "../../scripts/terraform/render-topology.ts";
import { formatRule, RULES, validBackboneCidr, validHostPort } from "../../scripts/terraform/rules.ts";

describe("validation messages: Terraform and the renderer (static)", () => {
  it("every variable's error_message templates equal the renderer's rules, in order", async () => {
    const m = await loadModule(TERRAFORM_DIR);
    const tf: Record<string, string[]> = {};
    for (const [name, v] of Object.entries(m.variables))
      tf[name] = validations(v).map((x) => templateShape(x.error_message));
    const ts: Record<string, string[]> = {};
    for (const r of RULES) ts[r.variable] = [...(ts[r.variable] ?? []), r.message];
    expect(Object.keys(ts).sort()).toEqual(Object.keys(tf).sort());
    for (const name of Object.keys(tf)) expect(ts[name], name).toEqual(tf[name]);
  });

  it("each Terraform message has as many interpolations as the rule fills", async () => {
    const m = await loadModule(TERRAFORM_DIR);
    const slots = (s: string): number => s.split("{}").length - 1;
    let i = 0;
    for (const [name, v] of Object.entries(m.variables)) {
      const rules = RULES.filter((r) => r.variable === name);
      for (const [j, x] of validations(v).entries()) {
        const rule = rules[j]!;
        expect(slots(templateShape(x.error_message)), `${name}: ${rule.message}`).toBe(slots(rule.message));
        i++;
      }
    }
    expect(i).toBe(RULES.length);
  });

  it("secrets never appear in a message (Terraform cannot print sensitive values either)", () => {
    for (const r of RULES.filter((x) =>
      ["hint_keys", "call_id_keys", "cluster_secret", "edge_secrets"].includes(x.variable),
    )) {
      expect(r.message).not.toContain("{}");
    }
  });

  it("formatRule fills the slots in order", () => {
    const rule = RULES.find((r) => r.message.includes("got {} and {}"))!;
    expect(formatRule(rule, ["a", "b"])).toMatch(/got a and b\.$/);
  });
});

describe("address checks mirror the Terraform conditions", () => {
  it.each([
    ["192.0.2.10:3478", true],
    ["[2001:db8::1]:3478", true],
    ["192.0.2.10:0", false],
    ["192.0.2.10:70000", false],
    ["192.0.2.256:3478", false],
    ["example.net:3478", false],
    ["192.0.2.10", false],
    ["[2001:db8::1]", false],
    ["2001:db8::1:3478", false],
  ])("host:port %s → %s", (s, ok) => {
    expect(validHostPort(s)).toBe(ok);
  });

  it.each([
    ["203.0.113.0/24", true],
    ["2001:db8::/48", true],
    ["203.0.113.7/32", true],
    ["203.0.113.0/33", false],
    ["203.0.113/24", false],
    ["203.0.113.0", false],
    ["0.0.0.0/0", false],
    ["::/0", false],
  ])("backbone CIDR %s → %s", (s, ok) => {
    expect(validBackboneCidr(s)).toBe(ok);
  });
});
