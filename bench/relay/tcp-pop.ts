// Child of bench/relay/tcp.ts: one POP worker (co-located with cluster 1, its transceiver is the
// driver's echo socket) with the ICE-TCP listener on; prints "ready" once listening, then, on
// "mem" from stdin, the heap after a full GC (bytes) on stdout.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createLogger } from "../../regional/common/log.ts";
import { loadConfig } from "../../regional/relay/config.ts";
import { RelayWorker } from "../../regional/relay/shell/worker.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const w = await RelayWorker.start(loadConfig(process.env), createLogger({ bench: "tcp-pop" }, "error"));
process.stdout.write("ready\n");
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d: string) => {
  if (d.includes("mem")) {
    gc();
    gc();
    process.stdout.write(`mem ${process.memoryUsage().heapUsed} ${process.memoryUsage().rss}\n`);
  }
  if (d.includes("quit")) void w.close().then(() => process.exit(0));
});
