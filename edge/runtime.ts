// Per-isolate state: metrics, the health monitor and the fallback rate limiters. Workers reuse an
// isolate for many requests; nothing here is per call.
import { bindingLimiter, type Limiter, MemoryLimiter } from "./auth/rate-limit.ts";
import type { Tuning } from "./config.ts";
import type { Bindings } from "./env.ts";
import { HealthBook } from "./health/book.ts";
import { HealthMonitor } from "./health/monitor.ts";
import { EdgeMetrics } from "./metrics/telemetry.ts";

export const metrics = new EdgeMetrics();

let monitor: { key: string; m: HealthMonitor } | null = null;
export function healthMonitor(t: Tuning): HealthMonitor {
  const key = JSON.stringify(t.health);
  if (!monitor || monitor.key !== key) monitor = { key, m: new HealthMonitor(new HealthBook(t.health)) };
  return monitor.m;
}

const memoryLimiters = new Map<string, MemoryLimiter>();
function memoryLimiter(scope: string, limit: number, periodS: number): MemoryLimiter {
  const k = `${scope}:${limit}:${periodS}`;
  let l = memoryLimiters.get(k);
  if (!l) {
    l = new MemoryLimiter(limit, periodS);
    memoryLimiters.set(k, l);
  }
  return l;
}

export function limiters(env: Bindings, t: Tuning): { key: Limiter; ip: Limiter } {
  // Keys carry their scope ("key:…", "ip:…"), so one binding can serve both.
  const keyB = env.RL_KEY ?? env.RATE_LIMITER;
  const ipB = env.RL_IP ?? env.RATE_LIMITER;
  return {
    key: keyB
      ? bindingLimiter(keyB, t.rateLimitPeriodS)
      : memoryLimiter("key", t.rateLimitKey, t.rateLimitPeriodS),
    ip: ipB
      ? bindingLimiter(ipB, t.rateLimitPeriodS)
      : memoryLimiter("ip", t.rateLimitIp, t.rateLimitPeriodS),
  };
}
