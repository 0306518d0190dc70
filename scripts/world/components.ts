// Starts the planet's programs inside their namespaces (`ip netns exec`), through the local
// system's supervisor: each runs in its own process group and is stopped with it. Environment
// per component follows what the local system gives the same programs.
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { formatKeyring } from "../../shared/keys.ts";
import { type ProcessSpec, type Running, Supervisor } from "../lib/supervisor.ts";
import { which } from "../lib/system-deps.ts";
import { clusterLinkem, popLinkem } from "./core/linkem-configs.ts";
import { ADMIN_PORT, DASHBOARD, EDGE, REDIS, type WorldPlan } from "./core/plan.ts";
import { type Bound, waitGone } from "./stopped.ts";

export const ROOT = resolve(import.meta.dirname, "../..");
const NODE = process.execPath;

export interface Secrets {
  hintKeys: string;
  callIdKeys: string;
  clusterSecret: string;
  apiKey: string;
  /** The conference frames' MAC keyring (GR_BACKBONE_KEYS), shared by every transceiver. */
  backboneKeys: string;
}

export function newSecrets(): Secrets {
  return {
    hintKeys: formatKeyring([{ id: 1, secret: randomBytes(32) }]),
    callIdKeys: formatKeyring([{ id: 1, secret: randomBytes(32) }]),
    clusterSecret: `1:${randomBytes(32).toString("base64")}`,
    apiKey: `world-${randomBytes(12).toString("hex")}`,
    backboneKeys: formatKeyring([{ id: 1, secret: randomBytes(32) }]),
  };
}

/**
 * The link emulators are the planet's wires: they run at a higher scheduling priority, so the load
 * of the programs under test (and of anything else on the host) stretches their delays less.
 * They use little CPU, so this takes next to nothing from anyone else.
 */
const wire = (s: ProcessSpec): ProcessSpec => ({
  ...s,
  args: [...s.args.slice(0, 3), "nice", "-n", "-10", ...s.args.slice(3)],
});

export class World {
  readonly sup = new Supervisor();
  readonly specs = new Map<string, ProcessSpec>();
  readonly topologyFile: string;
  readonly common: Record<string, string>;

  readonly plan: WorldPlan;
  readonly dir: string;
  readonly secrets: Secrets;
  /** CONFERENCE_NACK of transceivers started from now on (the with/without repair passes). */
  conferenceNack = true;

  constructor(plan: WorldPlan, dir: string, secrets: Secrets, onLine: (name: string, line: string) => void) {
    this.plan = plan;
    this.dir = dir;
    this.secrets = secrets;
    this.sup.onLine = onLine;
    this.topologyFile = join(dir, "topology.json");
    writeFileSync(this.topologyFile, JSON.stringify(plan.topology, null, 2));
    this.common = {
      TOPOLOGY_FILE: this.topologyFile,
      GR_HINT_KEYS: secrets.hintKeys,
      GR_CALL_ID_KEYS: secrets.callIdKeys,
      GR_CLUSTER_SECRET: secrets.clusterSecret,
      LOG_LEVEL: "info",
    };
  }

  /** One program inside a namespace. */
  spec(
    name: string,
    ns: string,
    script: string,
    env: Record<string, string>,
    args: string[] = [],
  ): ProcessSpec {
    return {
      name,
      command: "ip",
      args: ["netns", "exec", ns, NODE, join(ROOT, script), ...args],
      env: { ...this.common, ...env },
    };
  }

  async run(spec: ProcessSpec): Promise<Running> {
    this.specs.set(spec.name, spec);
    return this.sup.start(spec);
  }

  linkemSpecs(): ProcessSpec[] {
    const w = this.plan;
    const out: ProcessSpec[] = [];
    const write = (name: string, cfg: unknown): string => {
      const f = join(this.dir, `${name}.json`);
      writeFileSync(f, JSON.stringify(cfg, null, 2));
      return f;
    };
    for (const p of w.pops) {
      const f = write(`linkem-${p.spec.name}`, popLinkem(w, p.index, 1000 + p.index * 10));
      out.push(wire(this.spec(`linkem-${p.spec.name}`, p.ns, "scripts/world/linkem/main.ts", {}, [f])));
    }
    for (const c of w.clusters) {
      const f = write(`linkem-${c.spec.name}`, clusterLinkem(w, c.index, 2000 + c.index * 10));
      out.push(wire(this.spec(`linkem-${c.spec.name}`, c.ns, "scripts/world/linkem/main.ts", {}, [f])));
    }
    return out;
  }

  clusterSpecs(c: WorldPlan["clusters"][number]): ProcessSpec[] {
    const id = String(c.spec.id);
    const registry = c.transceivers.map((t) => `${t.id}=127.0.0.1:${t.udpPort}`).join(",");
    const n = c.spec.name;
    return [
      this.spec(`${n}-echo`, c.ns, "regional/echo-agent/main.ts", { ECHO_AGENT_LISTEN: "127.0.0.1:8090" }),
      ...c.transceivers.map((t) =>
        this.spec(`${n}-transceiver-${t.id}`, c.ns, "regional/transceiver/main.ts", {
          CLUSTER_ID: id,
          TRANSCEIVER_ID: String(t.id),
          TRANSCEIVER_UDP: `127.0.0.1:${t.udpPort}`,
          TRANSCEIVER_HTTP: `${c.ip}:${t.httpPort}`,
          BACKEND_URL: "ws://127.0.0.1:8090",
          TRANSCEIVER_CAPACITY: "150",
          ...(c.conference
            ? {
                GR_BACKBONE_KEYS: this.secrets.backboneKeys,
                TRANSCEIVER_CONFERENCE_PORT: String(t.conferencePort),
                // What the other clusters reach and see (their tunnels' alias), as the hub checks.
                TRANSCEIVER_CONFERENCE_ADDR: `${c.conference.alias}:${t.conferencePort}`,
                CONFERENCE_NACK: this.conferenceNack ? "1" : "0",
              }
            : {}),
        }),
      ),
      this.spec(`${n}-gateway`, c.ns, "regional/gateway/main.ts", {
        CLUSTER_ID: id,
        GATEWAY_HTTP: `${c.ip}:7100`,
        GATEWAY_TRANSCEIVERS: c.transceivers.map((t) => `${t.id}=http://${c.ip}:${t.httpPort}`).join(","),
      }),
      this.spec(`${n}-relay`, c.ns, "regional/relay/main.ts", {
        RELAY_ROLE: "cluster",
        CLUSTER_ID: id,
        RELAY_WORKERS: "1",
        RELAY_BIND_HOST: "127.0.0.1",
        ADMIN_HOST: c.ip,
        ADMIN_PORT: String(ADMIN_PORT + 11),
        RELAY_TRANSCEIVERS: registry,
      }),
      this.spec(`${n}-direct`, c.ns, "regional/relay/main.ts", {
        RELAY_ROLE: "pop",
        POP_ID: String(c.directPop.id),
        RELAY_WORKERS: "1",
        ADMIN_HOST: c.ip,
        ADMIN_PORT: String(ADMIN_PORT + 1),
        RELAY_TRANSCEIVERS: registry,
      }),
    ];
  }

  popSpec(p: WorldPlan["pops"][number], redis: boolean): ProcessSpec {
    return this.spec(p.spec.name, p.ns, "regional/relay/main.ts", {
      RELAY_ROLE: "pop",
      POP_ID: String(p.spec.id),
      RELAY_WORKERS: "1",
      ADMIN_HOST: p.ip,
      ADMIN_PORT: String(ADMIN_PORT),
      ...(redis ? { REDIS_URL: `redis://${REDIS.host}:${REDIS.port}` } : {}),
    });
  }

  redisSpec(): ProcessSpec | null {
    const bin = which("redis-server");
    if (!bin) return null;
    const d = join(this.dir, "redis");
    mkdirSync(d, { recursive: true });
    return {
      name: "redis",
      command: "ip",
      args: [
        ...["netns", "exec", this.plan.netNs, bin, "--port", String(REDIS.port), "--bind", REDIS.host],
        ...["--save", "", "--appendonly", "no", "--dir", d, "--protected-mode", "no"],
      ],
      env: {},
      ready: (line) => line.includes("Ready to accept connections"),
    };
  }

  edgeSpec(): ProcessSpec {
    const s = this.spec("edge", this.plan.netNs, "scripts/world/edge.ts", {
      WORLD_EDGE_LISTEN: `${EDGE.host}:${EDGE.port}`,
      WORLD_EDGE_API_KEY: this.secrets.apiKey,
    });
    return { ...s, readyTimeoutMs: 60_000 };
  }

  /** The dashboard in the fabric namespace, scraping every admin endpoint with region/POP labels. */
  dashboardSpec(): ProcessSpec {
    const w = this.plan;
    const targets = [
      `edge=http://${EDGE.host}:${EDGE.port}/internal/metrics`,
      ...w.pops.map((p) => `relay-${p.spec.name}{pop=${p.spec.id}}=http://${p.ip}:${ADMIN_PORT}/metrics`),
      ...w.clusters.flatMap((c) => [
        `relay-${c.spec.name}{cluster=${c.spec.id}}=http://${c.ip}:${ADMIN_PORT + 11}/metrics`,
        `relay-${c.directPop.name}{pop=${c.directPop.id}}=http://${c.ip}:${ADMIN_PORT + 1}/metrics`,
        `gateway-${c.spec.name}{cluster=${c.spec.id}}=http://${c.ip}:7100/metrics`,
        ...c.transceivers.map(
          (t) =>
            `transceiver-${c.spec.name}-${t.id}{cluster=${c.spec.id}}=http://${c.ip}:${t.httpPort}/metrics`,
        ),
      ]),
    ];
    return this.spec("dashboard", w.netNs, "regional/dashboard/main.ts", {
      DASHBOARD_HTTP: `${DASHBOARD.host}:${DASHBOARD.port}`,
      DASHBOARD_TARGETS: targets.join(","),
    });
  }

  /** The sockets a POP's relay binds in its namespace (admin, VIP, backbone). */
  popPorts(p: WorldPlan["pops"][number]): Bound[] {
    return [
      { proto: "tcp", addr: `${p.ip}:${ADMIN_PORT}` },
      { proto: "udp", addr: p.spec.vip },
      { proto: "udp", addr: p.spec.backbone },
      ...(p.spec.vipTcpPort
        ? [{ proto: "tcp" as const, addr: `${p.spec.vip.split(":")[0]}:${p.spec.vipTcpPort}` }]
        : []),
    ];
  }

  /**
   * Kills one program and returns once it is gone for good: its whole process group exited and
   * `ports` are free in `ns`, so a replacement can bind them (bounded; throws if not).
   */
  async kill(name: string, ns: string | null = null, ports: Bound[] = []): Promise<void> {
    const r = this.sup.running.find((x) => x.name === name);
    if (!r) return;
    const pgid = r.child.pid;
    await this.sup.stopOne(r, "SIGKILL", 0);
    const i = this.sup.running.indexOf(r);
    if (i >= 0) this.sup.running.splice(i, 1);
    if (pgid !== undefined) await waitGone(name, pgid, ns, ports);
  }

  async stop(): Promise<void> {
    await this.sup.stopAll("SIGINT");
  }
}
