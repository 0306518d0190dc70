// Global setup of the test projects that run the batched datagram path (relay-batch, main): builds the batched UDP addon when it is missing or
// older than its sources (a checkout that skipped `npm install`'s prepare step), so that the suites
// test the batched path instead of failing on a missing file. A failed build fails the run, with
// node-gyp's output: the batched path is what this project tests.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { ADDON_PATH } from "../../regional/common/native/index.ts";

const DIR = join(import.meta.dirname, "../../regional/common/native");

export default function setup(): void {
  const sources = readdirSync(DIR).filter((f) => /\.(c|h|gyp)$/.test(f));
  const newest = Math.max(...sources.map((f) => statSync(join(DIR, f)).mtimeMs));
  if (existsSync(ADDON_PATH) && statSync(ADDON_PATH).mtimeMs >= newest) return;
  const r = spawnSync(process.execPath, [join(DIR, "build.ts"), "--strict"], { stdio: "inherit" });
  if (r.status !== 0) throw new Error("the batched UDP addon does not build (npm run build:native)");
}
