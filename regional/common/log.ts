// Structured JSON logs with levels. Never called per packet: the data plane counts, it does not log.
export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(
  base: Record<string, unknown>,
  level: LogLevel = (process.env.LOG_LEVEL as LogLevel | undefined) ?? "info",
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Logger {
  const min = ORDER[level] ?? ORDER.info;
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (ORDER[lvl] < min) return;
    const rec: Record<string, unknown> = {
      ts: new Date().toISOString(),
      level: lvl,
      msg,
      ...base,
      ...fields,
    };
    for (const [k, v] of Object.entries(rec))
      if (v instanceof Error) rec[k] = { name: v.name, message: v.message };
    write(JSON.stringify(rec));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (f) => createLogger({ ...base, ...f }, level, write),
  };
}

/** Redacts a client address for logs: keeps the /24 (IPv4) or /48 (IPv6) network. */
export function redactAddress(address: string): string {
  if (address.includes(":")) return `${address.split(":").slice(0, 3).join(":")}::/48`;
  const p = address.split(".");
  return p.length === 4 ? `${p[0]}.${p[1]}.${p[2]}.0/24` : "redacted";
}
