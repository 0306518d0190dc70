// The import rules of docs/architecture.md, checked mechanically on every .ts file: edge → shared ←
// regional; shared and every core/ folder are pure (no packages, no node:*); the relay never
// imports the transceiver or the control code; scripts/ never imports test/ or bench/. A known
// violation is allowed only by an entry below with its reason, and an entry nothing needs any more
// fails too, so the list only shrinks.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");

interface Import {
  /** Importing file, relative to the repository root. */
  from: string;
  /** Resolved file (relative to the root) for a relative import, else the bare specifier. */
  to: string;
  bare: boolean;
}

/** Static imports, re-exports and dynamic imports with a literal specifier, type-only ones included. */
const SPECIFIER =
  /(?:^|[;\s])(?:import|export)\s[^;'"]*?\bfrom\s*["']([^"']+)["']|(?:^|[;\s])import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules" && !e.name.startsWith(".")) out.push(...tsFiles(p));
    } else if (e.name.endsWith(".ts")) out.push(p);
  }
  return out;
}

/** Drops comments so that an import named in a comment is not read as one. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

function importsOf(file: string): Import[] {
  const out: Import[] = [];
  for (const m of code(readFileSync(join(ROOT, file), "utf8")).matchAll(SPECIFIER)) {
    const spec = (m[1] ?? m[2] ?? m[3])!;
    if (spec.startsWith(".")) {
      const to = relative(ROOT, normalize(join(ROOT, dirname(file), spec)))
        .split("\\")
        .join("/");
      out.push({ from: file, to, bare: false });
    } else out.push({ from: file, to: spec, bare: true });
  }
  return out;
}

const under = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);
/** The core folder a path is in ("regional/relay/core"), or null. */
const coreOf = (path: string): string | null => /^(.*?\/core)(?:\/|$)/.exec(path)?.[1] ?? null;

interface Rule {
  name: string;
  /** A reason the import is not allowed, or null. */
  check(i: Import): string | null;
}

const CONTROL = ["regional/transceiver", "regional/gateway", "regional/echo-agent", "regional/dashboard"];

const RULES: Rule[] = [
  {
    name: "shared/ imports only shared/ (no packages, no node:*: it runs on every runtime)",
    check: (i) =>
      under(i.from, "shared") && (i.bare || !under(i.to, "shared")) ? `shared imports ${i.to}` : null,
  },
  {
    name: "a core/ folder imports only shared/ and its own core/ (sans-IO: no packages, no node:*)",
    check: (i) => {
      const core = coreOf(i.from);
      if (core === null || !/^(regional|edge|shared)\//.test(i.from)) return null;
      if (!i.bare && (under(i.to, "shared") || under(i.to, core))) return null;
      return `${core} imports ${i.to}`;
    },
  },
  {
    name: "the relay never imports the transceiver, the gateway, the echo agent or the dashboard",
    check: (i) =>
      under(i.from, "regional/relay") && !i.bare && CONTROL.some((c) => under(i.to, c))
        ? `relay imports ${i.to}`
        : null,
  },
  {
    name: "edge/ never imports regional/, and regional/ never imports edge/",
    check: (i) => {
      if (i.bare) return null;
      if (under(i.from, "edge") && under(i.to, "regional")) return `edge imports ${i.to}`;
      if (under(i.from, "regional") && under(i.to, "edge")) return `regional imports ${i.to}`;
      return null;
    },
  },
  {
    name: "the transceiver never imports a backend (main.ts, the wiring, injects it)",
    check: (i) =>
      under(i.from, "regional/transceiver") &&
      i.from !== "regional/transceiver/main.ts" &&
      !i.bare &&
      under(i.to, "regional/echo-agent")
        ? `transceiver imports ${i.to}`
        : null,
  },
  {
    name: "a transceiver shell/ file never imports the wiring or the API above it",
    check: (i) =>
      under(i.from, "regional/transceiver/shell") &&
      !i.bare &&
      ["main.ts", "transceiver.ts", "api.ts"].some((f) => i.to === `regional/transceiver/${f}`)
        ? `transceiver shell imports ${i.to}`
        : null,
  },
  {
    name: "scripts/ never imports test/ or bench/, and test/ never imports bench/",
    check: (i) => {
      if (i.bare) return null;
      if (under(i.from, "scripts") && (under(i.to, "test") || under(i.to, "bench")))
        return `scripts imports ${i.to}`;
      if (under(i.from, "test") && under(i.to, "bench")) return `test imports ${i.to}`;
      return null;
    },
  },
];

/** Violations that exist today, each with its reason. `from -> to`, exactly. */
const ALLOWED: Record<string, string> = {};

const FILES = ["shared", "edge", "regional", "scripts", "test", "bench"].flatMap(tsFiles);
const IMPORTS = FILES.flatMap(importsOf);

describe("architecture: who may import what", () => {
  it("reads the import lines of every .ts file (the parser finds what is there)", () => {
    expect(FILES.length).toBeGreaterThan(200);
    expect(IMPORTS).toContainEqual({
      from: "regional/relay/core/pop-engine.ts",
      to: "shared/backbone/frame.ts",
      bare: false,
    });
    const sample = [
      'import type { A } from "./a.ts";',
      'export { B } from "../b.ts";',
      'export * from "./c.ts";',
      'import "./side-effect.ts";',
      'const m = await import("./lazy.ts");',
      "// import { X } from './commented.ts';",
      'import {\n  D,\n  type E,\n} from "node:fs";',
    ].join("\n");
    expect([...code(sample).matchAll(SPECIFIER)].map((m) => m[1] ?? m[2] ?? m[3])).toEqual([
      "./a.ts",
      "../b.ts",
      "./c.ts",
      "./side-effect.ts",
      "./lazy.ts",
      "node:fs",
    ]);
  });

  it.each(RULES.map((r) => [r.name, r] as const))("%s", (_name, rule) => {
    const bad = IMPORTS.filter(
      (i) => rule.check(i) !== null && ALLOWED[`${i.from} -> ${i.to}`] === undefined,
    );
    expect(bad.map((i) => `${i.from}: ${rule.check(i)}`)).toEqual([]);
  });

  it("every allowed violation still exists (remove an entry once it is fixed)", () => {
    const present = new Set(
      IMPORTS.filter((i) => RULES.some((r) => r.check(i) !== null)).map((i) => `${i.from} -> ${i.to}`),
    );
    expect(Object.keys(ALLOWED).filter((k) => !present.has(k))).toEqual([]);
  });

  it("no file in the transceiver wing is over 300 lines (small parts, one job each)", () => {
    // gateway.ts is leaving the wing for regional/gateway/ (its own program).
    const wing = FILES.filter(
      (f) => under(f, "regional/transceiver") && f !== "regional/transceiver/gateway.ts",
    );
    expect(wing.length).toBeGreaterThan(30);
    const long = wing
      .map((f) => [f, readFileSync(join(ROOT, f), "utf8").split("\n").length - 1] as const)
      .filter(([, n]) => n > 300);
    expect(long).toEqual([]);
  });

  it("the rules catch what they are for", () => {
    const broken: Import[] = [
      { from: "shared/stun/reader.ts", to: "node:crypto", bare: true },
      { from: "shared/hint/codec.ts", to: "regional/common/hmac.ts", bare: false },
      { from: "regional/relay/core/flow-table.ts", to: "regional/relay/shell/relay.ts", bare: false },
      { from: "regional/transceiver/core/mux.ts", to: "werift", bare: true },
      { from: "regional/relay/shell/worker.ts", to: "regional/transceiver/shell/call.ts", bare: false },
      { from: "edge/app.ts", to: "regional/common/log.ts", bare: false },
      { from: "regional/common/log.ts", to: "edge/log.ts", bare: false },
      { from: "scripts/start.ts", to: "test/support/wait.ts", bare: false },
      { from: "test/e2e/harness.ts", to: "bench/relay/run.ts", bare: false },
      { from: "regional/transceiver/shell/call.ts", to: "regional/echo-agent/in-process.ts", bare: false },
      { from: "regional/transceiver/core/mux.ts", to: "regional/transceiver/metrics.ts", bare: false },
      {
        from: "regional/transceiver/shell/call.ts",
        to: "regional/transceiver/transceiver.ts",
        bare: false,
      },
    ];
    for (const b of broken)
      expect(
        RULES.some((r) => r.check(b) !== null),
        `${b.from} -> ${b.to}`,
      ).toBe(true);
    const fine: Import[] = [
      { from: "regional/relay/core/pop-engine.ts", to: "regional/relay/core/timers.ts", bare: false },
      { from: "regional/relay/shell/worker.ts", to: "node:dgram", bare: true },
      { from: "edge/app.ts", to: "shared/log/logger.ts", bare: false },
      { from: "test/support/redis.ts", to: "scripts/lib/system-deps.ts", bare: false },
      { from: "bench/edge/run.ts", to: "test/edge/harness.ts", bare: false },
      { from: "regional/transceiver/main.ts", to: "regional/echo-agent/in-process.ts", bare: false },
      {
        from: "regional/transceiver/shell/call.ts",
        to: "regional/transceiver/core/answer.ts",
        bare: false,
      },
    ];
    for (const f of fine)
      expect(
        RULES.every((r) => r.check(f) === null),
        `${f.from} -> ${f.to}`,
      ).toBe(true);
  });
});
