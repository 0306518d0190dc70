// The link emulator as a process: `node scripts/world/linkem/main.ts CONFIG.json`. Prints one JSON
// "ready" line when every front is bound, and its stats as one JSON line on SIGUSR2 and at exit.
import { readFileSync } from "node:fs";
import { parseLinkemConfig } from "./config.ts";
import { Linkem } from "./forwarder.ts";
import { Tunnels } from "./tunnel.ts";

const file = process.argv[2];
if (!file) {
  console.error("usage: linkem CONFIG.json");
  process.exit(2);
}
let linkem: Linkem;
const tunnels = new Tunnels();
try {
  const cfg = parseLinkemConfig(JSON.parse(readFileSync(file, "utf8")));
  linkem = new Linkem(cfg);
  await linkem.start();
  await tunnels.start(cfg.tunnels, cfg.seed + 1000);
} catch (e) {
  console.error(
    JSON.stringify({ level: "error", msg: "linkem failed to start", error: (e as Error).message }),
  );
  process.exit(1);
}
const report = (msg: string): void =>
  console.log(
    JSON.stringify({
      level: "info",
      msg,
      ...linkem.stats(),
      tunnels: tunnels.stats(),
      tunnelDrops: tunnels.drops,
    }),
  );
console.log(JSON.stringify({ level: "info", msg: "ready" }));
process.on("SIGUSR2", () => report("stats"));
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    report("stopped");
    linkem.close();
    tunnels.close();
    process.exit(0);
  });
