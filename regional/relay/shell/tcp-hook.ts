// How a POP worker gets its ICE-TCP listener: a second POP engine (transport "tcp") sharing the
// UDP engine's hint verifier, registry and timers, with a flow table sized to the connection
// limit and no mirror (a TCP connection does not survive the process that holds it).
import type { PopSpec } from "../../../shared/topology/schema.ts";
import type { Registry } from "../../common/metrics.ts";
import type { RelayConfig } from "../config.ts";
import { PopEngine, type PopEngineConfig } from "../core/pop-engine.ts";
import { TcpListener } from "./tcp.ts";
import { TcpMetrics } from "./tcp-metrics.ts";

export type { TcpListener } from "./tcp.ts";

export type SendUpstream = (kind: number, id: number, header: Uint8Array, packet: Uint8Array) => void;

/** Starts the listener when the POP's topology entry has vipTcpPort; null otherwise. */
export async function startTcp(
  cfg: RelayConfig,
  pop: PopSpec,
  udp: PopEngineConfig,
  registry: Registry,
  sendUpstream: SendUpstream,
): Promise<TcpListener | null> {
  if (pop.vipTcpPort === undefined) return null;
  const l = cfg.tcp;
  const metrics = new TcpMetrics(registry, udp.popId, udp.rtt);
  const engine = new PopEngine({
    ...udp,
    transport: "tcp",
    rtt: metrics,
    limits: {
      maxFlows: l.maxConnections,
      maxFlowsPerPrefix: Math.min(cfg.limits.maxFlowsPerPrefix, l.maxConnections),
      maxHalfOpenPerPrefix: Math.min(cfg.limits.maxHalfOpenPerPrefix, l.maxConnections),
    },
    mirror: false,
    restore: null,
    now: performance.now(),
  });
  const vipHost = pop.vip.startsWith("[") ? pop.vip.slice(1, pop.vip.indexOf("]")) : pop.vip.split(":")[0]!;
  const listener = await TcpListener.start({
    host: cfg.bindHost ?? vipHost,
    port: pop.vipTcpPort,
    engine,
    limits: l,
    sendUpstream,
    now: () => performance.now(),
  });
  listener.syncMetrics = () => metrics.sync(engine, listener.counters);
  return listener;
}
