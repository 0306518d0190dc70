// Structured JSON logs with levels. Never called per packet: the data plane counts, it does not log.
import { formatIpv4, formatIpv6, parseIpv4, parseIpv6, readIpv4 } from "../../shared/backbone/address.ts";

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

/**
 * Redacts a client address for logs: keeps the /24 (IPv4) or /48 (IPv6) network and drops the
 * port. Accepts "ip", "ip:port", "[ipv6]:port" and IPv4-mapped IPv6; anything else is "redacted".
 */
export function redactAddress(address: string): string {
  let host = address;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(address);
  const v4WithPort = /^([\d.]+):\d{1,5}$/.exec(address);
  if (bracketed) host = bracketed[1]!;
  else if (v4WithPort) host = v4WithPort[1]!;
  let v4 = parseIpv4(host);
  const ip = new Uint8Array(16);
  if (v4 < 0 && parseIpv6(host, ip)) {
    const mapped = ip.subarray(0, 10).every((b) => b === 0) && ip[10] === 0xff && ip[11] === 0xff;
    if (!mapped) {
      ip.fill(0, 6);
      return `${formatIpv6(ip)}/48`;
    }
    v4 = readIpv4(ip);
  }
  if (v4 < 0) return "redacted";
  return `${formatIpv4((v4 & 0xffffff00) >>> 0)}/24`;
}
