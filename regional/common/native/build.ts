// `npm run build:native` (also run by `npm install` / `npm ci` through the root `prepare` script):
// builds the batched UDP addon with node-gyp against the headers shipped inside the pinned Node
// package, so nothing is downloaded. Never fails the install: without a compiler (or off Linux) the
// relay runs on dgram and says so at start. `--strict` makes a failed build an error (CI, tests).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "../../..");
const strict = process.argv.includes("--strict");

function say(level: "info" | "warn", msg: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(`${JSON.stringify({ level, svc: "build-native", msg, ...fields })}\n`);
}

function give(msg: string, fields: Record<string, unknown> = {}): never {
  say("warn", `${msg}; the relay and the transceiver will run on dgram`, fields);
  process.exit(strict ? 1 : 0);
}

/** A directory laid out as node-gyp's --nodedir wants (include/node/common.gypi, node_api.h). */
function nodeDir(): string | null {
  const exe = process.execPath;
  const arch = `${process.platform}-${process.arch}`;
  const candidates = [
    join(dirname(exe), ".."),
    join(ROOT, "node_modules/node/node_modules", `node-${arch}`),
    join(ROOT, "node_modules", `node-${arch}`),
  ];
  for (const dir of candidates) {
    const inc = join(dir, "include/node");
    if (!existsSync(join(inc, "node_api.h")) || !existsSync(join(inc, "common.gypi"))) continue;
    const v = readFileSync(join(inc, "node_version.h"), "utf8");
    const major = /#define NODE_MAJOR_VERSION (\d+)/.exec(v)?.[1];
    if (major === process.versions.node.split(".")[0]) return dir;
  }
  return null;
}

/** npm's own node-gyp (npm sets npm_config_node_gyp for scripts; else next to npm's CLI). */
function nodeGyp(): string | null {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return fromNpm;
  const cli = process.env.npm_execpath;
  const candidates = [
    cli ? join(dirname(cli), "../node_modules/node-gyp/bin/node-gyp.js") : "",
    "/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js",
    "/usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js",
  ];
  return candidates.find((c) => c !== "" && existsSync(c)) ?? null;
}

if (process.platform !== "linux") give("batched UDP needs Linux (recvmmsg/sendmmsg)");
if (process.env.GR_RELAY_IO === "dgram") give("GR_RELAY_IO=dgram: addon not built");
const cc = spawnSync(process.env.CC ?? "cc", ["--version"], { stdio: "ignore" });
if (cc.status !== 0) give("no C compiler (cc)", { hint: "apt-get install -y build-essential" });
const dir = nodeDir();
if (dir === null) give("no Node headers next to the pinned Node", { node: process.version });
const gyp = nodeGyp();
if (gyp === null) give("node-gyp not found (it ships with npm)");
const r = spawnSync(
  process.execPath,
  [gyp, "rebuild", `--nodedir=${dir}`, "--directory", HERE, "--loglevel=warn"],
  {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, npm_config_nodedir: dir },
  },
);
if (r.status !== 0) give("addon build failed", { exit: r.status });
say("info", "batched UDP addon built", { file: join(HERE, "build/Release/batch_udp.node"), nodedir: dir });
