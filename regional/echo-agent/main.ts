// Echo agent process: `npx node regional/echo-agent/main.ts`.
// Env: ECHO_AGENT_LISTEN (default 127.0.0.1:8090), ECHO_DELAY_MS (default 0), LOG_LEVEL.
import { parseHostPort } from "../../shared/topology/address.ts";
import { createLogger } from "../common/log.ts";
import { startEchoAgent } from "./agent.ts";

const log = createLogger({ svc: "echo-agent" });
const problems: string[] = [];
const listen = process.env.ECHO_AGENT_LISTEN ?? "127.0.0.1:8090";
const hp = parseHostPort(listen);
if (typeof hp === "string") problems.push(`ECHO_AGENT_LISTEN: ${hp}`);
const delayRaw = process.env.ECHO_DELAY_MS ?? "0";
const delayMs = Number(delayRaw);
if (!Number.isInteger(delayMs) || delayMs < 0 || delayMs > 60_000) {
  problems.push(`ECHO_DELAY_MS: must be an integer 0-60000, got ${JSON.stringify(delayRaw)}`);
}
if (problems.length > 0 || typeof hp === "string") {
  log.error("invalid configuration", { problems });
  process.exit(2);
}
const agent = await startEchoAgent({ host: hp.host, port: hp.port, delayMs });
process.stdout.write(`${JSON.stringify({ msg: "ready", svc: "echo-agent", url: agent.url, delayMs })}\n`);
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
