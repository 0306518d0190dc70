// Terraform type constraints, read from the `type` of a variable in variables.tf, and the
// conversion Terraform applies to a tfvars value before validation: optional attributes get their
// defaults, numbers and strings convert into each other, required attributes must be present.
// One deliberate difference: an attribute the type does not declare is an error here (Terraform
// drops it silently, which hides typos such as `vpi = "..."`).
import type { Json, JsonObject } from "./hcl.ts";

export type TfType =
  | { kind: "string" | "number" | "bool" | "any" }
  | { kind: "list" | "set" | "map"; element: TfType }
  | { kind: "tuple"; elements: TfType[] }
  | { kind: "object"; attributes: Record<string, TfAttribute> };

export interface TfAttribute {
  type: TfType;
  optional: boolean;
  /** Default of an optional attribute (undefined: none, so null). */
  default?: Json;
}

export class TfTypeError extends Error {
  override readonly name = "TfTypeError";
}

// ---------------------------------------------------------------- parsing type expressions

type Tok = { t: "id" | "str" | "num" | "punct"; v: string; at: number };

function tokenize(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "#" || (c === "/" && src[i + 1] === "/")) {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(src.slice(i))!;
      toks.push({ t: "id", v: m[0], at: i });
      i += m[0].length;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/.exec(src.slice(i));
      if (!m) throw new TfTypeError(`unexpected ${JSON.stringify(c)} at ${i}`);
      toks.push({ t: "num", v: m[0], at: i });
      i += m[0].length;
    } else if (c === '"') {
      let j = i + 1;
      let s = "";
      while (j < src.length && src[j] !== '"') {
        if (src[j] === "\\") {
          const n = src[j + 1];
          s += n === "n" ? "\n" : n === "t" ? "\t" : (n ?? "");
          j += 2;
        } else {
          s += src[j];
          j++;
        }
      }
      if (j >= src.length) throw new TfTypeError(`unterminated string at ${i}`);
      toks.push({ t: "str", v: s, at: i });
      i = j + 1;
    } else if ("(){}[]=,:".includes(c)) {
      toks.push({ t: "punct", v: c, at: i });
      i++;
    } else {
      throw new TfTypeError(`unexpected ${JSON.stringify(c)} at ${i}`);
    }
  }
  return toks;
}

class Parser {
  private i = 0;
  private readonly toks: Tok[];
  constructor(toks: Tok[]) {
    this.toks = toks;
  }
  peek(): Tok | undefined {
    return this.toks[this.i];
  }
  next(): Tok {
    const t = this.toks[this.i++];
    if (!t) throw new TfTypeError("unexpected end of type expression");
    return t;
  }
  expect(v: string): void {
    const t = this.next();
    if (t.v !== v)
      throw new TfTypeError(`expected ${JSON.stringify(v)} at ${t.at}, got ${JSON.stringify(t.v)}`);
  }
  accept(v: string): boolean {
    if (this.peek()?.v === v && this.peek()?.t === "punct") {
      this.i++;
      return true;
    }
    return false;
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }

  type(): TfType {
    const t = this.next();
    if (t.t !== "id") throw new TfTypeError(`expected a type at ${t.at}, got ${JSON.stringify(t.v)}`);
    switch (t.v) {
      case "string":
      case "number":
      case "bool":
      case "any":
        return { kind: t.v };
      case "list":
      case "set":
      case "map": {
        this.expect("(");
        const element = this.type();
        this.expect(")");
        return { kind: t.v, element };
      }
      case "tuple": {
        this.expect("(");
        this.expect("[");
        const elements: TfType[] = [];
        while (!this.accept("]")) {
          elements.push(this.type());
          this.accept(",");
        }
        this.expect(")");
        return { kind: "tuple", elements };
      }
      case "object": {
        this.expect("(");
        this.expect("{");
        const attributes: Record<string, TfAttribute> = {};
        while (!this.accept("}")) {
          const name = this.next();
          if (name.t !== "id" && name.t !== "str")
            throw new TfTypeError(`expected an attribute name at ${name.at}`);
          if (!this.accept("=")) this.expect(":");
          attributes[name.v] = this.attribute();
          this.accept(",");
        }
        this.expect(")");
        return { kind: "object", attributes };
      }
      default:
        throw new TfTypeError(`unknown type ${JSON.stringify(t.v)} at ${t.at}`);
    }
  }

  attribute(): TfAttribute {
    const t = this.peek();
    if (t?.t === "id" && t.v === "optional") {
      this.next();
      this.expect("(");
      const type = this.type();
      const attr: TfAttribute = { type, optional: true };
      if (this.accept(",")) attr.default = this.literal();
      this.expect(")");
      return attr;
    }
    return { type: this.type(), optional: false };
  }

  literal(): Json {
    const t = this.next();
    if (t.t === "str") return t.v;
    if (t.t === "num") return Number(t.v);
    if (t.t === "id") {
      if (t.v === "true") return true;
      if (t.v === "false") return false;
      if (t.v === "null") return null;
      throw new TfTypeError(`a default must be a literal, got ${JSON.stringify(t.v)} at ${t.at}`);
    }
    if (t.v === "[") {
      const out: Json[] = [];
      while (!this.accept("]")) {
        out.push(this.literal());
        this.accept(",");
      }
      return out;
    }
    if (t.v === "{") {
      const out: JsonObject = {};
      while (!this.accept("}")) {
        const k = this.next();
        if (k.t !== "id" && k.t !== "str") throw new TfTypeError(`expected a key at ${k.at}`);
        if (!this.accept("=")) this.expect(":");
        out[k.v] = this.literal();
        this.accept(",");
      }
      return out;
    }
    throw new TfTypeError(`unexpected ${JSON.stringify(t.v)} at ${t.at}`);
  }
}

/** Parses a type constraint as hcl2json gives it ("${map(object({...}))}" or "map(...)"). */
export function parseType(expr: string): TfType {
  const src = expr.startsWith("${") && expr.endsWith("}") ? expr.slice(2, -1) : expr;
  const p = new Parser(tokenize(src));
  const t = p.type();
  if (!p.done()) throw new TfTypeError(`trailing text after the type in ${JSON.stringify(src)}`);
  return t;
}

// ---------------------------------------------------------------- conversion

const isObj = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/;

/**
 * Converts a value to a type as Terraform does for input variables. Problems are appended to
 * `errors` as "path: message"; the result is the converted value (best effort when errors).
 */
export function convert(value: Json | undefined, type: TfType, path: string, errors: string[]): Json {
  if (value === undefined || value === null) return null;
  if (typeof value === "string" && value.includes("${")) {
    errors.push(`${path}: must be a literal value (a tfvars file cannot hold expressions), got ${value}`);
    return null;
  }
  switch (type.kind) {
    case "any":
      return value;
    case "string":
      if (typeof value === "string") return value;
      if (typeof value === "number" || typeof value === "boolean") return String(value);
      errors.push(`${path}: a string is required`);
      return null;
    case "number":
      if (typeof value === "number") return value;
      if (typeof value === "string" && NUMBER.test(value)) return Number(value);
      errors.push(`${path}: a number is required, got ${JSON.stringify(value)}`);
      return null;
    case "bool":
      if (typeof value === "boolean") return value;
      if (value === "true" || value === "false") return value === "true";
      errors.push(`${path}: a bool (true or false) is required, got ${JSON.stringify(value)}`);
      return null;
    case "list":
    case "set": {
      if (!Array.isArray(value)) {
        errors.push(`${path}: a list is required`);
        return null;
      }
      const out = value.map((x, i) => convert(x, type.element, `${path}[${i}]`, errors));
      if (type.kind === "set") {
        const seen = new Map(out.map((x) => [JSON.stringify(x), x] as const));
        return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, x]) => x);
      }
      return out;
    }
    case "tuple": {
      if (!Array.isArray(value) || value.length !== type.elements.length) {
        errors.push(`${path}: a tuple of ${type.elements.length} elements is required`);
        return null;
      }
      return value.map((x, i) => convert(x, type.elements[i]!, `${path}[${i}]`, errors));
    }
    case "map": {
      if (!isObj(value)) {
        errors.push(`${path}: a map is required`);
        return null;
      }
      const out: JsonObject = {};
      for (const k of Object.keys(value).sort())
        out[k] = convert(value[k], type.element, `${path}.${k}`, errors);
      return out;
    }
    case "object": {
      if (!isObj(value)) {
        errors.push(`${path}: an object is required`);
        return null;
      }
      const out: JsonObject = {};
      for (const k of Object.keys(value)) {
        if (!(k in type.attributes)) {
          errors.push(
            `${path}.${k}: is not an attribute of this object (expected one of ${Object.keys(type.attributes).join(", ")})`,
          );
        }
      }
      for (const [k, attr] of Object.entries(type.attributes)) {
        const given = value[k];
        if (given === undefined || given === null) {
          if (!attr.optional) {
            errors.push(`${path}: attribute "${k}" is required`);
            out[k] = null;
          } else {
            out[k] =
              attr.default === undefined ? null : convert(attr.default, attr.type, `${path}.${k}`, errors);
          }
        } else {
          out[k] = convert(given, attr.type, `${path}.${k}`, errors);
        }
      }
      return out;
    }
  }
}
