// The whole system on one machine: the echo agent, two regional clusters (transceivers, a cluster
// signalling gateway, a cluster relay), a Global Relay POP and the edge worker (wrangler dev), plus
// the dashboard. `npm start` runs it on fixed ports on 127.0.0.1; the end-to-end tests run it on
// free ports and on a network namespace's host address. Secrets are generated per run.
import { randomBytes } from "node:crypto";
import { createSocket } from "node:dgram";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { edgeEnvFile } from "../../edge/dev/env-file.ts";
import { formatKeyring } from "../../shared/keys.ts";
import type { Topology } from "../../shared/topology/schema.ts";
import { validateTopology } from "../../shared/topology/schema.ts";
import {
  DEFAULT_RESTARTS,
  type ProcessSpec,
  type RestartPolicy,
  type Running,
  StartError,
  Supervisor,
} from "./supervisor.ts";
import { which } from "./system-deps.ts";

export const ROOT = resolve(import.meta.dirname, "../..");

export interface ClusterPlan {
  id: number;
  name: string;
  region: string;
  continent: "EU" | "NA" | "AS" | "OC" | "SA" | "AF";
  countries: string[];
  latitude: number;
  longitude: number;
  gatewayPort: number;
  relayBackbonePort: number;
  relayAdminPort: number;
  /** conferencePort: the transceiver's conference socket (UDP, transceiver to transceiver). */
  transceivers: { id: number; udpPort: number; httpPort: number; conferencePort: number }[];
}

export interface LocalPlan {
  host: string;
  edgePort: number;
  vipPort: number;
  /** The POP's ICE-TCP listener on the VIP address (the answer's passive TCP candidate). */
  vipTcpPort: number;
  popBackbonePort: number;
  popAdminPort: number;
  echoPort: number;
  dashboardPort: number;
  clusters: ClusterPlan[];
}

export interface LocalSystemOptions {
  plan: LocalPlan;
  /** true: start a private redis-server; a URL: use it; false: memory only. */
  redis: boolean | string;
  apiKey: string;
  dashboard: boolean;
  /** Relay workers per relay process (1 keeps the local system light). */
  relayWorkers: number;
  echoDelayMs: number;
  log: (line: string) => void;
  /** Every child's output line (for --verbose and for test diagnostics). */
  onChildLine?: (name: string, line: string) => void;
  /** Extra environment for every child (tuning timers in tests). */
  extraEnv?: Record<string, string>;
  /** Extra vars for the edge worker (e.g. raised rate limits in tests). */
  edgeVars?: Record<string, string>;
  /** The transceivers' backend (default: the echo agent this system starts). */
  backendUrl?: string;
  /** How a component that dies is restarted (default DEFAULT_RESTARTS; null: never). */
  restarts?: RestartPolicy | null;
}

export interface LocalSystem {
  plan: LocalPlan;
  topology: Topology;
  topologyFile: string;
  edgeUrl: string;
  dashboardUrl: string | null;
  redisUrl: string | null;
  apiKey: string;
  secrets: { hintKeys: string; callIdKeys: string; clusterSecret: string; backboneKeys: string };
  supervisor: Supervisor;
  /** Restarts one component by name (e.g. "pop"), with the same environment. */
  restart(name: string, signal?: NodeJS.Signals): Promise<void>;
  kill(name: string): Promise<void>;
  startAgain(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** The fixed plan `npm start` uses (config/topology.local.json describes the same network). */
export function fixedPlan(host = "127.0.0.1"): LocalPlan {
  return {
    host,
    edgePort: 8787,
    vipPort: 3478,
    vipTcpPort: 3478,
    popBackbonePort: 4478,
    popAdminPort: 9301,
    echoPort: 8090,
    dashboardPort: 9090,
    clusters: [
      {
        id: 1,
        name: "fra-local",
        region: "eu-central",
        continent: "EU",
        countries: ["DE", "FR", "NL", "GB", "PL", "IT", "ES"],
        latitude: 50.11,
        longitude: 8.68,
        gatewayPort: 7101,
        relayBackbonePort: 5101,
        relayAdminPort: 9311,
        transceivers: [
          { id: 1, udpPort: 6101, httpPort: 7111, conferencePort: 6151 },
          { id: 2, udpPort: 6102, httpPort: 7112, conferencePort: 6152 },
        ],
      },
      {
        id: 2,
        name: "iad-local",
        region: "us-east",
        continent: "NA",
        countries: ["US", "CA", "MX"],
        latitude: 38.95,
        longitude: -77.45,
        gatewayPort: 7201,
        relayBackbonePort: 5201,
        relayAdminPort: 9321,
        transceivers: [{ id: 1, udpPort: 6201, httpPort: 7211, conferencePort: 6251 }],
      },
    ],
  };
}

async function freeTcpPort(host: string): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, host, () => {
      const a = s.address();
      s.close(() => res(typeof a === "object" && a ? a.port : 0));
    });
  });
}

const canListen = (port: number, host: string): Promise<boolean> =>
  new Promise((res) => {
    const s = createServer();
    s.once("error", () => res(false));
    s.listen(port, host, () => s.close(() => res(true)));
  });
const canBind = (port: number, host: string): Promise<boolean> =>
  new Promise((res) => {
    const s = createSocket("udp4");
    s.once("error", () => res(false));
    s.bind(port, host, () => s.close(() => res(true)));
  });

/**
 * A port free for TCP and UDP alike, below the kernel's ephemeral range (32768+ on Linux): a port
 * the kernel handed out for TCP is often taken for UDP by some client's ephemeral socket (werift
 * peers bind many), which made test systems fail to start with EADDRINUSE.
 */
async function freeDualPort(host: string, used: Set<number>): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    if (used.has(port) || port === 3478) continue;
    if ((await canListen(port, host)) && (await canBind(port, host))) return port;
  }
  throw new StartError("no free port below the ephemeral range after 500 tries");
}

/** The same network on free ports (tests), `perCluster` transceivers in each cluster (default 1). */
export async function ephemeralPlan(host: string, perCluster = 1): Promise<LocalPlan> {
  const p = fixedPlan(host);
  const used = new Set<number>();
  const next = async (): Promise<number> => {
    const port = await freeDualPort(host, used);
    used.add(port);
    return port;
  };
  p.edgePort = await next();
  p.vipPort = await next();
  p.vipTcpPort = await next();
  p.popBackbonePort = await next();
  p.popAdminPort = await next();
  p.echoPort = await next();
  p.dashboardPort = await next();
  for (const c of p.clusters) {
    c.gatewayPort = await next();
    c.relayBackbonePort = await next();
    c.relayAdminPort = await next();
    c.transceivers = [];
    for (let id = 1; id <= perCluster; id++)
      c.transceivers.push({
        id,
        udpPort: await next(),
        httpPort: await next(),
        conferencePort: await next(),
      });
  }
  return p;
}

export function planTopology(plan: LocalPlan): Topology {
  const h = plan.host;
  const raw = {
    version: 1,
    globalVip: `${h}:${plan.vipPort}`,
    globalVipTcpPort: plan.vipTcpPort,
    defaultClusterId: plan.clusters[0]!.id,
    clusters: plan.clusters.map((c) => ({
      id: c.id,
      name: c.name,
      region: c.region,
      continent: c.continent,
      countries: c.countries,
      latitude: c.latitude,
      longitude: c.longitude,
      signallingUrl: `http://${h}:${c.gatewayPort}`,
      backbone: `${h}:${c.relayBackbonePort}`,
      backboneCidrs: [`${h}/32`],
      capacity: 300,
    })),
    pops: [
      {
        id: 1,
        name: "local-pop",
        region: "local",
        latitude: plan.clusters[0]!.latitude,
        longitude: plan.clusters[0]!.longitude,
        vip: `${h}:${plan.vipPort}`,
        vipTcpPort: plan.vipTcpPort,
        backbone: `${h}:${plan.popBackbonePort}`,
        backboneCidrs: [`${h}/32`],
      },
    ],
  };
  const r = validateTopology(raw);
  if (!r.ok) throw new StartError(`local topology is invalid:\n  ${r.errors.join("\n  ")}`);
  return r.topology;
}

/** Every port of a plan, with its role (the start check and the leak test read it). */
export function planPorts(plan: LocalPlan): { tcp: [number, string][]; udp: [number, string][] } {
  const tcp: [number, string][] = [
    [plan.edgePort, "edge (HTTP)"],
    [plan.echoPort, "echo agent"],
    [plan.dashboardPort, "dashboard"],
    [plan.popAdminPort, "POP admin"],
    [plan.vipTcpPort, "POP VIP (ICE-TCP)"],
  ];
  const udp: [number, string][] = [
    [plan.vipPort, "POP VIP (UDP)"],
    [plan.popBackbonePort, "POP backbone (UDP)"],
  ];
  for (const c of plan.clusters) {
    tcp.push([c.gatewayPort, `${c.name} signalling gateway`], [c.relayAdminPort, `${c.name} relay admin`]);
    udp.push([c.relayBackbonePort, `${c.name} relay backbone (UDP)`]);
    for (const t of c.transceivers) {
      tcp.push([t.httpPort, `${c.name} transceiver ${t.id} API`]);
      udp.push([t.udpPort, `${c.name} transceiver ${t.id} (UDP)`]);
      udp.push([t.conferencePort, `${c.name} transceiver ${t.id} conference (UDP)`]);
    }
  }
  return { tcp, udp };
}

/** Checks every fixed port before starting anything, so a conflict names the port and its role. */
async function checkPortsFree(plan: LocalPlan): Promise<void> {
  const { tcp, udp } = planPorts(plan);
  const busy: string[] = [];
  for (const [port, what] of tcp) {
    const ok = await new Promise<boolean>((res) => {
      const s = createServer();
      s.once("error", () => res(false));
      s.listen(port, plan.host, () => s.close(() => res(true)));
    });
    if (!ok) busy.push(`${plan.host}:${port} (${what}) is in use`);
  }
  for (const [port, what] of udp) {
    const ok = await new Promise<boolean>((res) => {
      const s = createSocket("udp4");
      s.once("error", () => res(false));
      s.bind(port, plan.host, () => s.close(() => res(true)));
    });
    if (!ok) busy.push(`${plan.host}:${port} (${what}) is in use`);
  }
  if (busy.length > 0) {
    throw new StartError(
      `cannot start, ports are taken:\n  ${busy.join("\n  ")}\nStop the other process (is another npm start running?).`,
    );
  }
}

const b64 = (n: number): string => randomBytes(n).toString("base64");

export async function startLocalSystem(o: LocalSystemOptions): Promise<LocalSystem> {
  const plan = o.plan;
  const node = process.execPath;
  const topology = planTopology(plan);
  await checkPortsFree(plan);
  const dir = mkdtempSync(join(tmpdir(), "global-relay-"));
  const topologyFile = join(dir, "topology.json");
  writeFileSync(topologyFile, JSON.stringify(topology, null, 2));
  const secrets = {
    hintKeys: formatKeyring([{ id: 1, secret: randomBytes(32) }]),
    callIdKeys: formatKeyring([{ id: 1, secret: randomBytes(32) }]),
    clusterSecret: `1:${b64(32)}`,
    // Conference frames between transceivers (docs/cascade.md): one ring for every transceiver.
    backboneKeys: formatKeyring([{ id: 1, secret: randomBytes(32) }]),
  };
  const sup = new Supervisor(o.restarts === undefined ? DEFAULT_RESTARTS : o.restarts);
  if (o.onChildLine) sup.onLine = o.onChildLine;
  const specs = new Map<string, ProcessSpec>();
  const h = plan.host;

  let redisUrl: string | null = typeof o.redis === "string" ? o.redis : null;
  const common: Record<string, string> = {
    TOPOLOGY_FILE: topologyFile,
    GR_HINT_KEYS: secrets.hintKeys,
    GR_CALL_ID_KEYS: secrets.callIdKeys,
    GR_CLUSTER_SECRET: secrets.clusterSecret,
    GR_BACKBONE_KEYS: secrets.backboneKeys,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    ...o.extraEnv,
  };

  const run = async (spec: ProcessSpec): Promise<Running> => {
    specs.set(spec.name, spec);
    o.log(`starting ${spec.name}…`);
    return sup.start(spec);
  };

  try {
    if (o.redis === true) {
      const bin = which("redis-server");
      if (!bin)
        throw new StartError("--redis needs redis-server (apt-get install redis-server), or set REDIS_URL");
      const port = await freeTcpPort(h);
      const redisDir = join(dir, "redis");
      mkdirSync(redisDir);
      await run({
        name: "redis",
        command: bin,
        args: [
          ...["--port", String(port), "--bind", h, "--save", "", "--appendonly", "no", "--dir", redisDir],
          // Bound to one private address of this run only; protected mode would refuse non-loopback clients.
          ...["--protected-mode", "no"],
        ],
        env: {},
        ready: (line) => line.includes("Ready to accept connections"),
      });
      redisUrl = `redis://${h}:${port}`;
    }
    if (redisUrl) common.REDIS_URL = redisUrl;

    await run({
      name: "echo-agent",
      command: node,
      args: [join(ROOT, "regional/echo-agent/main.ts")],
      env: { ...common, ECHO_AGENT_LISTEN: `${h}:${plan.echoPort}`, ECHO_DELAY_MS: String(o.echoDelayMs) },
    });

    for (const c of plan.clusters) {
      for (const t of c.transceivers) {
        await run({
          name: `${c.name}-transceiver-${t.id}`,
          command: node,
          args: [join(ROOT, "regional/transceiver/main.ts")],
          env: {
            ...common,
            CLUSTER_ID: String(c.id),
            TRANSCEIVER_ID: String(t.id),
            TRANSCEIVER_UDP: `${h}:${t.udpPort}`,
            TRANSCEIVER_HTTP: `${h}:${t.httpPort}`,
            TRANSCEIVER_CONFERENCE_PORT: String(t.conferencePort),
            BACKEND_URL: o.backendUrl ?? `ws://${h}:${plan.echoPort}`,
            TRANSCEIVER_CAPACITY: "150",
          },
        });
      }
      await run({
        name: `${c.name}-gateway`,
        command: node,
        args: [join(ROOT, "regional/gateway/main.ts")],
        env: {
          ...common,
          CLUSTER_ID: String(c.id),
          GATEWAY_HTTP: `${h}:${c.gatewayPort}`,
          GATEWAY_TRANSCEIVERS: c.transceivers.map((t) => `${t.id}=http://${h}:${t.httpPort}`).join(","),
        },
      });
      await run({
        name: `${c.name}-relay`,
        command: node,
        args: [join(ROOT, "regional/relay/main.ts")],
        env: {
          ...common,
          RELAY_ROLE: "cluster",
          CLUSTER_ID: String(c.id),
          RELAY_WORKERS: String(o.relayWorkers),
          ADMIN_PORT: String(c.relayAdminPort),
          ADMIN_HOST: h,
          RELAY_TRANSCEIVERS: c.transceivers.map((t) => `${t.id}=${h}:${t.udpPort}`).join(","),
        },
      });
    }

    await run({
      name: "pop",
      command: node,
      args: [join(ROOT, "regional/relay/main.ts")],
      env: {
        ...common,
        RELAY_ROLE: "pop",
        POP_ID: "1",
        RELAY_WORKERS: String(o.relayWorkers),
        ADMIN_PORT: String(plan.popAdminPort),
        ADMIN_HOST: h,
      },
    });

    const envFile = join(dir, "edge.env");
    writeFileSync(
      envFile,
      edgeEnvFile({
        topologyJson: JSON.stringify(topology),
        apiKeys: [o.apiKey],
        clusterSecret: secrets.clusterSecret,
        callIdKeys: secrets.callIdKeys,
        localDev: true,
        extra: o.edgeVars ?? {},
      }),
      { mode: 0o600 },
    );
    await run({
      name: "edge",
      command: node,
      args: [
        join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
        "dev",
        "--local",
        "--ip",
        h,
        "--port",
        String(plan.edgePort),
        "--env-file",
        envFile,
        "--inspector-port",
        String(await freeTcpPort("127.0.0.1")),
        "--persist-to",
        join(dir, "wrangler-state"),
        "--show-interactive-dev-session=false",
      ],
      env: {
        WRANGLER_SEND_METRICS: "false",
        WRANGLER_HIDE_BANNER: "true",
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
        WRANGLER_LOG_PATH: join(dir, "wrangler-logs"),
        CI: "true",
      },
      ready: (line) => /Ready on http/.test(line),
      readyTimeoutMs: 60_000,
    });
    await waitHttp(`http://${h}:${plan.edgePort}/healthz`, 30_000);

    let dashboardUrl: string | null = null;
    if (o.dashboard) {
      // Static labels per target (as Prometheus' static_configs would add) so the POP and
      // cluster filters apply to relay series too.
      const targets = [
        `edge=http://${h}:${plan.edgePort}/internal/metrics`,
        `relay-pop{pop=1}=http://${h}:${plan.popAdminPort}/metrics`,
        ...plan.clusters.flatMap((c) => [
          `relay-${c.name}{cluster=${c.id}}=http://${h}:${c.relayAdminPort}/metrics`,
          `gateway-${c.name}{cluster=${c.id}}=http://${h}:${c.gatewayPort}/metrics`,
          ...c.transceivers.map(
            (t) => `transceiver-${c.name}-${t.id}{cluster=${c.id}}=http://${h}:${t.httpPort}/metrics`,
          ),
        ]),
      ];
      await run({
        name: "dashboard",
        command: node,
        args: [join(ROOT, "regional/dashboard/main.ts")],
        env: {
          ...common,
          DASHBOARD_HTTP: `${h}:${plan.dashboardPort}`,
          DASHBOARD_TARGETS: targets.join(","),
        },
      });
      dashboardUrl = `http://${h}:${plan.dashboardPort}/`;
    }

    const stop = async (): Promise<void> => {
      await sup.stopAll("SIGINT");
      rmSync(dir, { recursive: true, force: true });
    };
    const byName = (name: string): Running => {
      const r = sup.running.find((x) => x.name === name);
      if (!r) throw new Error(`no running component named ${name}`);
      return r;
    };
    return {
      plan,
      topology,
      topologyFile,
      edgeUrl: `http://${h}:${plan.edgePort}`,
      dashboardUrl,
      redisUrl,
      apiKey: o.apiKey,
      secrets,
      supervisor: sup,
      async kill(name) {
        await sup.stopOne(byName(name), "SIGKILL", 0);
      },
      async startAgain(name) {
        const spec = specs.get(name);
        if (!spec) throw new Error(`no component named ${name}`);
        await sup.start(spec);
      },
      async restart(name, signal = "SIGKILL") {
        await sup.stopOne(byName(name), signal, 2_000);
        await sup.start(specs.get(name)!);
      },
      stop,
    };
  } catch (e) {
    await sup.stopAll("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

export async function waitHttp(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new StartError(`${url} did not answer in ${timeoutMs} ms (${last})`);
}
