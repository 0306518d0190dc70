// Steering in the request path: refresh health cheaply, plan, try clusters in order with failover,
// and feed what happened back into health (passive marks) and telemetry.
import type { Context } from "hono";
import type { SigningKeys } from "../../shared/signing/request.ts";
import { clusterKey, loadTopology, type TopologyIndex, type Tuning, tuning } from "../config.ts";
import type { AppEnv } from "../env.ts";
import { Errors } from "../errors.ts";
import type { HealthDeps, HealthMonitor } from "../health/monitor.ts";
import { defaultCache, type ExecutionContextLike, requestCf } from "../platform.ts";
import { healthMonitor } from "../runtime.ts";
import { type ClientLocation, clientLocationFromCf } from "./client.ts";
import { type AttemptOutcome, type FailoverResult, retryAfterFor, tryInOrder } from "./failover.ts";
import { planSteering, type SteeringPlan } from "./policy.ts";

export interface SteerScope {
  topo: TopologyIndex;
  key: SigningKeys;
  tuning: Tuning;
  client: ClientLocation;
  monitor: HealthMonitor;
  deps: HealthDeps;
}

export function executionCtx(c: Context<AppEnv>): ExecutionContextLike | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

export async function steerScope(c: Context<AppEnv>): Promise<SteerScope> {
  const t = tuning(c.env);
  const [topo, key] = await Promise.all([loadTopology(c.env, Date.now()), clusterKey(c.env)]);
  const log = c.get("log");
  const deps: HealthDeps = {
    cache: defaultCache(),
    cacheOrigin: new URL(c.req.url).origin,
    key,
    ctx: executionCtx(c),
    probeTimeoutMs: t.probeTimeoutMs,
    now: Date.now,
    onError: (msg, e) => log.warn(msg, { error: (e as Error)?.message }),
  };
  return {
    topo,
    key,
    tuning: t,
    client: clientLocationFromCf(requestCf(c.req.raw)),
    monitor: healthMonitor(t),
    deps,
  };
}

export interface Steered<T> {
  plan: SteeringPlan;
  result: FailoverResult<T> & { ok: true };
}

/** Plans and tries clusters; throws 503 (with Retry-After) when none answered. */
export async function steer<T>(
  c: Context<AppEnv>,
  s: SteerScope,
  attempt: (
    cluster: SteeringPlan["candidates"][number]["cluster"],
    signal: AbortSignal,
  ) => Promise<AttemptOutcome<T>>,
): Promise<Steered<T>> {
  await s.monitor.prepare(s.topo.topology, s.deps);
  const now = Date.now();
  const plan = planSteering(s.topo.topology, s.client, (cl) => s.monitor.view(cl, now));
  const log = c.get("log");
  if (plan.candidates.length === 0) {
    // Retry when the first passive mark lapses (or the health view is next refreshed).
    let retryMs = s.tuning.health.freshMs;
    for (const e of plan.excluded) if (e.health.untilMs) retryMs = Math.min(retryMs, e.health.untilMs - now);
    log.warn("no cluster available", {
      excluded: plan.excluded.map((e) => `${e.cluster.name}:${e.health.status}`),
    });
    throw Errors.noCluster(Math.max(1, Math.ceil(retryMs / 1000)), "every cluster is down, draining or full");
  }
  const result = await tryInOrder(
    plan.candidates.map((x) => x.cluster),
    async (cluster, signal) => {
      const o = await attempt(cluster, signal);
      if (o.kind === "done") s.monitor.noteSuccess(cluster, s.deps);
      return o;
    },
    {
      maxAttempts: s.tuning.maxAttempts,
      deadlineMs: s.tuning.deadlineMs,
      attemptTimeoutMs: s.tuning.clusterTimeoutMs,
      now: Date.now,
    },
    (f) => {
      c.get("telemetry").failedOver(f.cluster.name);
      if (f.reason === "full") s.monitor.noteFull(f.cluster, f.retryAfterS ?? 5, s.deps);
      else s.monitor.noteFailure(f.cluster, f.reason, s.deps);
      log.warn("cluster attempt failed", {
        cluster: f.cluster.name,
        reason: f.reason,
        status: f.status,
        ms: Math.round(f.ms),
      });
    },
  );
  if (!result.ok) {
    const detail =
      result.failures.map((f) => `${f.cluster.name}: ${f.reason}`).join(", ") || "deadline reached";
    throw Errors.noCluster(retryAfterFor(result.failures), detail);
  }
  return { plan, result };
}

export function serverTiming(
  totalMs: number,
  hopMs: number,
  cluster: string,
  attempts: number,
  basis: string,
): string {
  return [
    `edge;dur=${totalMs.toFixed(1)};desc="edge total"`,
    `cluster;dur=${hopMs.toFixed(1)};desc="${cluster}"`,
    `attempts;desc="${attempts}"`,
    `steer;desc="${basis}"`,
  ].join(", ");
}
