// The Workers side of shared/log: JSON lines to the console (Workers Logs; `wrangler tail` or the
// terminal locally), since an isolate has no stderr. One line per signalling request at most,
// never a secret: credentials, SDP bodies and client secrets are never passed in; client
// addresses go through redactIp.
import { createJsonLogger, type Logger } from "../shared/log/logger.ts";
import { redactAddress } from "../shared/log/redact.ts";

export type { Logger, LogLevel } from "../shared/log/logger.ts";

export function createLogger(level: string | undefined, write: (line: string) => void = console.log): Logger {
  return createJsonLogger({ base: { svc: "edge" }, level, write, now: Date.now });
}

/** The client's network only (see shared/log/redact.ts); "unknown" when the platform gave none. */
export function redactIp(ip: string | null | undefined): string {
  return ip ? redactAddress(ip) : "unknown";
}
