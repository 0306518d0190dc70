// The Node side of shared/log: JSON lines to stderr, level from LOG_LEVEL unless given.
import { createJsonLogger, type Logger, type LogLevel } from "../../shared/log/logger.ts";

export type { Logger, LogLevel } from "../../shared/log/logger.ts";
export { redactAddress } from "../../shared/log/redact.ts";

export function createLogger(
  base: Record<string, unknown>,
  level: LogLevel = (process.env.LOG_LEVEL as LogLevel | undefined) ?? "info",
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Logger {
  return createJsonLogger({ base, level, write, now: Date.now });
}
