// Terraform type constraints read from variables.tf, and the conversion of tfvars values.
import { describe, expect, it } from "vitest";
import { convert, parseType, TfTypeError } from "../../scripts/terraform/tf-types.ts";

describe("parseType", () => {
  it("reads nested objects with optional attributes and literal defaults", () => {
    const t = parseType(`\${map(object({
      id = number
      tags = optional(list(string), ["a", "b"])
      k8s = optional(object({ min = optional(number, 2), ctx = string }), { ctx = "c" })
    }))}`);
    expect(t).toEqual({
      kind: "map",
      element: {
        kind: "object",
        attributes: {
          id: { type: { kind: "number" }, optional: false },
          tags: { type: { kind: "list", element: { kind: "string" } }, optional: true, default: ["a", "b"] },
          k8s: {
            type: {
              kind: "object",
              attributes: {
                min: { type: { kind: "number" }, optional: true, default: 2 },
                ctx: { type: { kind: "string" }, optional: false },
              },
            },
            optional: true,
            default: { ctx: "c" },
          },
        },
      },
    });
  });

  it("rejects what is not a type", () => {
    expect(() => parseType("strin")).toThrow(TfTypeError);
    expect(() => parseType("map(string")).toThrow(TfTypeError);
    expect(() => parseType("object({ a = optional(string, x) })")).toThrow(/literal/);
  });
});

describe("convert (Terraform's conversion of input values)", () => {
  const t = parseType(`object({
    id = number
    name = optional(string)
    on = optional(bool, true)
    k8s = optional(object({ min = optional(number, 2), ctx = string }), { ctx = "c" })
  })`);

  it("fills optional attributes with their defaults, nested defaults included", () => {
    const errors: string[] = [];
    expect(convert({ id: 1 }, t, "x", errors)).toEqual({
      id: 1,
      name: null,
      on: true,
      k8s: { min: 2, ctx: "c" },
    });
    expect(convert({ id: 1, k8s: { ctx: "d" } }, t, "x", errors)).toEqual({
      id: 1,
      name: null,
      on: true,
      k8s: { min: 2, ctx: "d" },
    });
    expect(errors).toEqual([]);
  });

  it("converts strings and numbers into each other as Terraform does", () => {
    const errors: string[] = [];
    expect(convert({ id: "7", name: 5, on: "false" }, t, "x", errors)).toMatchObject({
      id: 7,
      name: "5",
      on: false,
    });
    expect(errors).toEqual([]);
  });

  it("names a missing required attribute, a wrong type and an unknown attribute by path", () => {
    const errors: string[] = [];
    convert({ name: "a", k8s: { min: 1 } }, t, "pops.fra", errors);
    convert({ id: "seven", vpi: "x" }, t, "pops.ams", errors);
    expect(errors).toEqual([
      'pops.fra: attribute "id" is required',
      'pops.fra.k8s: attribute "ctx" is required',
      "pops.ams.vpi: is not an attribute of this object (expected one of id, name, on, k8s)",
      'pops.ams.id: a number is required, got "seven"',
    ]);
  });

  it("refuses expressions in tfvars values", () => {
    const errors: string[] = [];
    convert({ id: ["$", "{var.x}"].join("") }, t, "pops.fra", errors);
    expect(errors[0]).toMatch(/^pops\.fra\.id: must be a literal value/);
  });
});
