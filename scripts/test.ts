// `npm test`: system packages, then lint, type check and every test. Exits non-zero on the first
// failing step. Extra arguments go to vitest (e.g. `npm test -- test/relay`).
import { spawnSync } from "node:child_process";
import { ensureSystemDeps, TEST_DEPS } from "./lib/system-deps.ts";

const log = (line: string): void => console.log(`[test] ${line}`);
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(
    `[test] Node ${process.versions.node} is too old; run through npm (npm test), which uses the pinned Node.`,
  );
  process.exit(1);
}

try {
  ensureSystemDeps(TEST_DEPS, log);
} catch (e) {
  console.error(`[test] ${(e as Error).message}`);
  process.exit(1);
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
  const r = spawnSync(bin, argv, { stdio: "inherit", env: { ...process.env, GR_TEST_STRICT: "1" } });
  if (r.status !== 0) {
    console.error(`[test] ${name} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
  log(`${name} passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
