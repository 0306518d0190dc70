// The worker's bindings (wrangler.toml [vars], secrets, KV, rate limits, Analytics Engine) and
// the per-request variables the Hono context carries.
import type { Logger } from "./log.ts";
import type { Telemetry } from "./metrics/telemetry.ts";
import type { AnalyticsEngineDataset, KvNamespace, RateLimitBinding } from "./platform.ts";

export interface Bindings {
  /** Topology JSON (a string, or a TOML table wrangler passes as an object). */
  TOPOLOGY_JSON?: string | object;
  /** The same, under the name terraform/modules/edge binds (inline when the topology is small). */
  TOPOLOGY?: string | object;
  /** KV namespace holding the topology (used when no inline topology is bound). */
  TOPOLOGY_KV?: KvNamespace;
  /** Key of the topology in TOPOLOGY_KV (default "topology.json"). */
  TOPOLOGY_KEY?: string;
  // Secrets.
  GR_CALL_ID_KEYS?: string;
  GR_CLUSTER_SECRET?: string;
  API_KEY_HASHES?: string;
  CLIENT_SECRET_KEY?: string;
  METRICS_TOKEN?: string;
  // Plain vars.
  GR_LOCAL_DEV?: string;
  LOG_LEVEL?: string;
  CORS_ORIGINS?: string;
  STEERING_MAX_ATTEMPTS?: string | number;
  CLUSTER_TIMEOUT_MS?: string | number;
  SIGNALLING_DEADLINE_MS?: string | number;
  PROBE_TIMEOUT_MS?: string | number;
  HEALTH_FRESH_MS?: string | number;
  HEALTH_MAX_AGE_MS?: string | number;
  PASSIVE_DOWN_MS?: string | number;
  RATE_LIMIT_PERIOD_S?: string | number;
  RATE_LIMIT_KEY_LIMIT?: string | number;
  RATE_LIMIT_IP_LIMIT?: string | number;
  // Bindings.
  RL_KEY?: RateLimitBinding;
  RL_IP?: RateLimitBinding;
  /** One binding for both scopes (terraform/modules/edge); RL_KEY / RL_IP take precedence. */
  RATE_LIMITER?: RateLimitBinding;
  ANALYTICS?: AnalyticsEngineDataset;
}

export type RouteName =
  | "calls.create"
  | "calls.get"
  | "calls.delete"
  | "calls.hangup"
  | "calls.patch"
  | "calls.sip"
  | "sideband"
  | "calls.resume"
  | "participants.join"
  | "participants.list"
  | "participants.get"
  | "participants.leave"
  | "participants.patch"
  | "client_secrets"
  | "ws"
  | "regions"
  | "healthz"
  | "metrics"
  | "options"
  | "demo"
  | "other";

export interface Variables {
  route: RouteName;
  startMs: number;
  log: Logger;
  telemetry: Telemetry;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
