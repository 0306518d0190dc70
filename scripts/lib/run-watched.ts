// Runs a program that cannot take the parent-watch preload (redis-server): `node --import
// parent-watch.ts run-watched.ts <command> [args…]`. The program shares this process group, so
// the preload's group kill reaches it; signals are forwarded and its exit is this process's exit.
import { spawn } from "node:child_process";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: run-watched.ts <command> [args…]");
  process.exit(2);
}
const child = spawn(command, args, { stdio: "inherit" });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, () => child.kill(sig));
child.once("error", (e) => {
  console.error(`cannot run ${command}: ${e.message}`);
  process.exit(127);
});
child.once("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
