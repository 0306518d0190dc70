// Entry point of a relay worker thread: one RelayWorker, driven by messages from the main thread.
import { parentPort, workerData } from "node:worker_threads";
import { createLogger } from "../../common/log.ts";
import type { RelayConfig } from "../config.ts";
import { RelayWorker } from "./worker.ts";

const { cfg, index } = workerData as { cfg: RelayConfig; index: number };
const log = createLogger({ svc: "relay", role: cfg.role, worker: index });
const port = parentPort!;

type ToWorker =
  | { op: "metrics"; id: number }
  | { op: "flows"; id: number; client?: string }
  | { op: "drain" }
  | { op: "stop"; id: number };

try {
  const w = await RelayWorker.start(cfg, log);
  port.on("message", (m: ToWorker) => {
    switch (m.op) {
      case "metrics":
        port.postMessage({ op: "reply", id: m.id, value: w.metricsText() });
        break;
      case "flows":
        port.postMessage({ op: "reply", id: m.id, value: w.flows(m.client) });
        break;
      case "drain":
        w.drain();
        break;
      case "stop":
        void w.close().then(() => {
          port.postMessage({ op: "reply", id: m.id, value: true });
          port.close();
        });
        break;
    }
  });
  port.postMessage({ op: "ready", addresses: w.addresses });
} catch (e) {
  port.postMessage({ op: "fatal", message: (e as Error).message });
  port.close();
}
