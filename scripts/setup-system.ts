// `npm run setup:system`: the system packages this repository needs, each with why; installs the
// missing ones (as root on Debian, pinned versions where the archive still has them) or prints
// the command to run. `--check` only reports (exit 1 when something is missing); `--tests` limits
// it to what the tests need (`npm test` runs it so, only when one of those is missing), so a
// benchmark-only package is installed by `npm run setup:system` alone.
import { ensureSystemDeps, missingDeps, SYSTEM_DEPS, TEST_DEPS, which } from "./lib/system-deps.ts";

const log = (line: string): void => console.log(`[setup:system] ${line}`);
const check = process.argv.includes("--check");
const deps = process.argv.includes("--tests") ? TEST_DEPS : SYSTEM_DEPS;

for (const d of deps) {
  const at = which(d.bin);
  const state = at ? `ok (${at})` : "missing";
  log(`${d.pkg.padEnd(18)} ${d.for.padEnd(5)} ${state.padEnd(34)} ${d.why}`);
}
const missing = missingDeps(deps);
if (missing.length === 0) {
  log("nothing to install");
  process.exit(0);
}
if (check) {
  log(`missing: ${missing.map((d) => d.pkg).join(", ")} (run: npm run setup:system)`);
  process.exit(1);
}
try {
  ensureSystemDeps(deps, log);
  log("done");
} catch (e) {
  console.error(`[setup:system] ${(e as Error).message}`);
  process.exit(1);
}
