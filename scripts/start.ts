// `npm start`: the whole system on this machine (docs in README.md). Flags:
//   --redis            start a private redis-server (or set REDIS_URL to use yours)
//   --no-dashboard     skip the dashboard
//   --verbose          print every component's log lines
//   --workers N        relay workers per relay process (default 1)
//   --free-ports       free ports instead of the fixed ones, one transceiver per cluster (tests)
// A component that dies is restarted with backoff (logged as JSON lines); if it keeps dying, or
// when this process ends by any signal, every component stops (they watch this process).
// Environment: LOCAL_API_KEY (default local-dev-key), ECHO_DELAY_MS (default 0).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { curlExample } from "./lib/curl-example.ts";
import { ephemeralPlan, fixedPlan, startLocalSystem } from "./lib/local-system.ts";
import { StartError } from "./lib/supervisor.ts";

const { values } = parseArgs({
  options: {
    redis: { type: "boolean", default: false },
    "no-dashboard": { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
    workers: { type: "string", default: "1" },
    "free-ports": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log("usage: npm start [-- --redis] [--no-dashboard] [--verbose] [--workers N]");
  process.exit(0);
}
const workers = Number(values.workers);
if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
  console.error(`--workers must be an integer 1-64, got ${JSON.stringify(values.workers)}`);
  process.exit(2);
}
const echoDelayMs = Number(process.env.ECHO_DELAY_MS ?? "0");
if (!Number.isInteger(echoDelayMs) || echoDelayMs < 0 || echoDelayMs > 60_000) {
  console.error(`ECHO_DELAY_MS must be an integer 0-60000, got ${JSON.stringify(process.env.ECHO_DELAY_MS)}`);
  process.exit(2);
}

const EXAMPLE_OFFER = join(import.meta.dirname, "..", "docs", "examples", "offer.sdp");
const say = (line: string): void => console.log(`[global-relay] ${line}`);
const redis = process.env.REDIS_URL ? process.env.REDIS_URL : values.redis;
const plan = values["free-ports"] ? await ephemeralPlan("127.0.0.1") : fixedPlan();
let system: Awaited<ReturnType<typeof startLocalSystem>> | null = null;
let shuttingDown = false;

async function shutdown(code: number): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  say("stopping every component…");
  await system?.stop();
  say("stopped");
  process.exit(code);
}
process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));
process.on("SIGHUP", () => void shutdown(0));
// When npm (or whatever started us) is killed outright, stop the system: the components watch
// this process, this process watches its parent and, under npm's `sh -c`, npm too.
const watched = watchedAncestors();
setInterval(() => {
  if (watched.some((pid) => !isAlive(pid)) || process.ppid !== watched[0]) void shutdown(0);
}, 250).unref();

try {
  system = await startLocalSystem({
    plan,
    redis,
    apiKey: process.env.LOCAL_API_KEY ?? "local-dev-key",
    dashboard: !values["no-dashboard"],
    relayWorkers: workers,
    echoDelayMs,
    log: say,
    onChildLine: values.verbose ? (name, line) => console.log(`[${name}] ${line}`) : undefined,
  });
} catch (e) {
  console.error(`[global-relay] ${e instanceof StartError ? e.message : (e as Error).stack}`);
  process.exit(1);
}
system.supervisor.onEvent = (e) => console.log(JSON.stringify({ level: "warn", svc: "local-system", ...e }));
system.supervisor.onExit = (r, code, signal) => {
  console.error(
    `[global-relay] ${r.name} exited unexpectedly (code ${code}, signal ${signal}); last output:`,
  );
  for (const line of r.tail.slice(-15)) console.error(`    ${line}`);
  void shutdown(1);
};
if (values["free-ports"]) {
  // For the test that kills this process: what must be gone afterwards.
  const components = system.supervisor.running.map((r) => ({ name: r.name, pid: r.child.pid }));
  console.log(JSON.stringify({ msg: "ready", svc: "local-system", pid: process.pid, components, plan }));
}

const h = plan.host;
const lines = [
  "",
  "Global Relay is running locally:",
  `  edge (calls API)   ${system.edgeUrl}`,
  `  demo page          ${system.edgeUrl}/`,
  ...(system.dashboardUrl ? [`  dashboard          ${system.dashboardUrl}`] : []),
  `  Global Relay VIP   udp://${system.topology.globalVip}  (POP local-pop)`,
  `                     tcp://${h}:${plan.vipTcpPort}  (ICE-TCP, where UDP is blocked)`,
  ...plan.clusters.map(
    (c) =>
      `  cluster ${c.name.padEnd(10)} signalling http://${h}:${c.gatewayPort}, relay udp://${h}:${c.relayBackbonePort}, ${c.transceivers.length} transceiver(s)`,
  ),
  `  echo agent         ws://${h}:${plan.echoPort}`,
  `  metrics            edge ${system.edgeUrl}/internal/metrics, POP http://${h}:${plan.popAdminPort}/metrics, ` +
    plan.clusters.map((c) => `${c.name} relay http://${h}:${c.relayAdminPort}/metrics`).join(", "),
  `  transceiver metrics ${plan.clusters.flatMap((c) => c.transceivers.map((t) => `http://${h}:${t.httpPort}/metrics`)).join(", ")}`,
  `  flows/sessions     Redis ${system.redisUrl ?? "off (memory only; npm start -- --redis to turn it on)"}`,
  `  API key            ${system.apiKey}`,
  "",
  "Post an offer (a Chromium offer with fresh ICE credentials each time; any WebRTC offer works):",
  ...curlExample(system.edgeUrl, system.apiKey),
  `  (your own offer: --data-binary @${EXAMPLE_OFFER}; the same offer twice is 409 duplicate_offer)`,
  "",
  "Open the demo page, press Start call, and hear yourself through the relay. Ctrl-C stops everything.",
];
console.log(lines.join("\n"));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Our parent, and npm above it when the parent is npm's script shell (Linux: from /proc). */
function watchedAncestors(): number[] {
  const out = [process.ppid];
  if (process.env.npm_lifecycle_event === undefined) return out;
  try {
    const stat = readFileSync(`/proc/${process.ppid}/stat`, "utf8");
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const grand = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (/^(sh|dash|bash)$/.test(comm) && grand > 1) out.push(grand);
  } catch {
    /* not Linux: the parent alone */
  }
  return out;
}
