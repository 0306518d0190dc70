// Echo agent process: `npx node regional/echo-agent/main.ts`.
// Env: ECHO_AGENT_LISTEN (default 127.0.0.1:8090), ECHO_DELAY_MS (default 0),
// ECHO_AUDIO_BATCH (1 = accept audio batches, the default; 0 = answer like an old backend),
// ECHO_SHARED (1 = accept shared connections, the default; 0 = one connection per call only),
// ECHO_KEEP_CALLS (conversations kept for resumed calls, default 1000, 0 = none), ECHO_KEEP_MS
// (how long, default 600000), LOG_LEVEL.

import { type ConfigError, EnvReader } from "../../shared/config/env-reader.ts";
import { createLogger } from "../common/log.ts";
import { startEchoAgent } from "./agent.ts";
import { DEFAULT_KEEP, MAX_KEEP } from "./kept-calls.ts";

const log = createLogger({ svc: "echo-agent" });
const r = new EnvReader(process.env);
const hp = r.hostPort("ECHO_AGENT_LISTEN", "127.0.0.1:8090");
const delayMs = r.int("ECHO_DELAY_MS", 0, 60_000, 0);
const audioBatch = r.int("ECHO_AUDIO_BATCH", 0, 1, 1) === 1;
const shared = r.int("ECHO_SHARED", 0, 1, 1) === 1;
const keep = {
  maxCalls: r.int("ECHO_KEEP_CALLS", 0, MAX_KEEP.maxCalls, DEFAULT_KEEP.maxCalls),
  maxAgeMs: r.int("ECHO_KEEP_MS", 1000, MAX_KEEP.maxAgeMs, DEFAULT_KEEP.maxAgeMs),
};
try {
  r.done();
} catch (e) {
  log.error("invalid configuration", { problems: (e as ConfigError).problems });
  process.exit(2);
}
const agent = await startEchoAgent({ host: hp.host, port: hp.port, delayMs, audioBatch, shared, keep });
let stopping = false;
const stop = async (signal: string): Promise<void> => {
  if (stopping) return;
  stopping = true;
  log.info("stopping", { signal, connections: agent.connections });
  await agent.close();
  process.exit(0);
};
process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));
// Handlers first: a supervisor may signal as soon as it reads the ready line.
process.stdout.write(
  `${JSON.stringify({ msg: "ready", svc: "echo-agent", url: agent.url, delayMs, keep })}\n`,
);
