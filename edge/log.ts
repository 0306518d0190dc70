// JSON logs to the Workers console (Workers Logs / `wrangler tail` locally: the terminal).
// One line per signalling request at most, never a secret: credentials, SDP bodies and client
// secrets are never passed in; client addresses go through redactIp.
export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: string | undefined, write: (line: string) => void = console.log): Logger {
  const min = ORDER[(level as LogLevel) ?? "info"] ?? ORDER.info;
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (ORDER[lvl] < min) return;
    write(JSON.stringify({ ts: new Date().toISOString(), level: lvl, svc: "edge", msg, ...fields }));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

/** Keeps the network part only: IPv4 /24 ("203.0.113.x"), IPv6 /48. */
export function redactIp(ip: string | null | undefined): string {
  if (!ip) return "unknown";
  if (ip.includes(":")) return `${ip.split(":").slice(0, 3).join(":")}::x`;
  const p = ip.split(".");
  return p.length === 4 ? `${p[0]}.${p[1]}.${p[2]}.x` : "invalid";
}
