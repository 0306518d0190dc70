// `npm test`: lint, type check and every test, after `npm run setup:system` when a package the
// tests need is missing. Exits non-zero on the first failing step. Extra arguments go to vitest
// (e.g. `npm test -- test/relay`). No test is ever skipped: a missing tool fails the test.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { missingDeps, TEST_DEPS } from "./lib/system-deps.ts";

const log = (line: string): void => console.log(`[test] ${line}`);
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(
    `[test] Node ${process.versions.node} is too old; run through npm (npm test), which uses the pinned Node.`,
  );
  process.exit(1);
}

const missing = missingDeps(TEST_DEPS);
if (missing.length > 0) {
  log(
    `missing system packages: ${missing.map((d) => d.pkg).join(", ")}; running npm run setup:system -- --tests`,
  );
  const setup = join(import.meta.dirname, "setup-system.ts");
  const r = spawnSync(process.execPath, [setup, "--tests"], { stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const args = process.argv.slice(2);
const steps: [string, string, string[]][] = [
  ["lint (biome)", "biome", ["check", "."]],
  ["type check (tsc)", "tsc", ["--noEmit", "-p", "tsconfig.json"]],
  ["tests (vitest)", "vitest", ["run", ...args]],
];
for (const [name, bin, argv] of steps) {
  log(`${name}…`);
  const started = Date.now();
  const r = spawnSync(bin, argv, { stdio: "inherit" });
  if (r.status !== 0) {
    console.error(`[test] ${name} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
  log(`${name} passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
