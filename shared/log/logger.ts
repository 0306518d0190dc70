// Structured JSON logs with levels, one line per record, for every runtime: where a line goes
// (stderr, the Workers console) and the clock are passed in by a thin adapter
// (regional/common/log.ts on Node, edge/log.ts in the Workers isolate). Never called per packet:
// the data plane counts, it does not log.

export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export interface LogSink {
  /** Fields on every record (svc, cluster, …). */
  base: LogFields;
  /** Unknown or missing levels mean "info". */
  level: string | undefined;
  write(line: string): void;
  /** Wall clock in ms since the epoch, for the `ts` field. */
  now(): number;
}

export function createJsonLogger(sink: LogSink): Logger {
  const min = ORDER[sink.level as LogLevel] ?? ORDER.info;
  const emit = (level: LogLevel, msg: string, fields?: LogFields): void => {
    if (ORDER[level] < min) return;
    const rec: LogFields = { ts: new Date(sink.now()).toISOString(), level, msg, ...sink.base, ...fields };
    // Errors do not serialise to JSON; keep what an operator reads.
    for (const [k, v] of Object.entries(rec))
      if (v instanceof Error) rec[k] = { name: v.name, message: v.message };
    sink.write(JSON.stringify(rec));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (f) => createJsonLogger({ ...sink, base: { ...sink.base, ...f } }),
  };
}
