// Dashboard configuration from the environment, validated up front; every error names its variable.
import { parseIpv4, parseIpv6 } from "../../shared/backbone/address.ts";
import { ConfigError, EnvReader } from "../../shared/config/env-reader.ts";

export { ConfigError } from "../../shared/config/env-reader.ts";

export interface TargetSpec {
  /** Becomes the `job` label. */
  name: string;
  url: string;
  /** job, instance and any extra labels given in DASHBOARD_TARGETS. */
  labels: Record<string, string>;
}

export interface DashboardConfig {
  http: { host: string; port: number };
  targets: TargetSpec[];
  prometheusUrl: string | null;
  scrapeIntervalMs: number;
  scrapeTimeoutMs: number;
  windowS: number;
  retentionS: number;
  refreshMs: number;
}

/** One problem that stops the dashboard from starting (the shared ConfigError). */
const problem = (text: string): ConfigError => new ConfigError([text], "dashboard");

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const LABEL = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * DASHBOARD_TARGETS: comma-separated `name=url` or `name{label=value;label=value}=url`, e.g.
 * `relay-pop{pop=1}=http://127.0.0.1:9301/metrics,edge=http://127.0.0.1:8787/internal/metrics`.
 * Labels are separated by ';' (or ',' inside the braces) and become target labels like Prometheus'
 * static_configs labels.
 */
export function parseTargets(text: string, what = "DASHBOARD_TARGETS"): TargetSpec[] {
  const out: TargetSpec[] = [];
  const parts: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of text) {
    if (ch === "{") depth++;
    if (ch === "}") depth = Math.max(0, depth - 1);
    if (ch === "," && depth === 0) {
      parts.push(cur);
      cur = "";
    } else cur += ch;
  }
  parts.push(cur);
  for (const raw of parts) {
    const entry = raw.trim();
    if (entry === "") continue;
    const m = /^([^{=]+)(?:\{([^}]*)\})?=(.+)$/.exec(entry);
    if (m === null)
      throw problem(`${what}: expected "name=url" or "name{k=v}=url", got ${JSON.stringify(entry)}`);
    const name = m[1]!.trim();
    if (!NAME.test(name)) throw problem(`${what}: bad target name ${JSON.stringify(name)}`);
    let url: URL;
    try {
      url = new URL(m[3]!.trim());
    } catch {
      throw problem(`${what}: target ${name}: ${JSON.stringify(m[3])} is not a URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw problem(`${what}: target ${name}: only http(s) URLs are scraped`);
    const labels: Record<string, string> = { job: name, instance: url.host };
    for (const kv of (m[2] ?? "").split(/[;,]/)) {
      if (kv.trim() === "") continue;
      const eq = kv.indexOf("=");
      const k = kv.slice(0, eq).trim();
      const v = kv
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, "$1");
      if (eq < 0 || !LABEL.test(k)) throw problem(`${what}: target ${name}: bad label ${JSON.stringify(kv)}`);
      labels[k] = v;
    }
    if (out.some((t) => t.name === name)) throw problem(`${what}: target ${name} given twice`);
    out.push({ name, url: url.toString(), labels });
  }
  return out;
}

function listenAddress(text: string, what: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (!m || host === undefined || port > 65535)
    throw problem(`${what}: expected "ip:port", got ${JSON.stringify(text)}`);
  const ok = m[1] !== undefined ? parseIpv6(host, new Uint8Array(16)) : parseIpv4(host) >= 0;
  if (!ok) throw problem(`${what}: ${JSON.stringify(host)} is not an IP address`);
  return { host, port };
}

export function loadConfig(env: Record<string, string | undefined> = process.env): DashboardConfig {
  const r = new EnvReader(env, "dashboard");
  const http = listenAddress(env.DASHBOARD_HTTP ?? "127.0.0.1:9090", "DASHBOARD_HTTP");
  let prometheusUrl: string | null = null;
  if (env.PROMETHEUS_URL !== undefined && env.PROMETHEUS_URL.trim() !== "") {
    try {
      const u = new URL(env.PROMETHEUS_URL.trim());
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("scheme");
      prometheusUrl = u.toString().replace(/\/$/, "");
    } catch {
      throw problem(`PROMETHEUS_URL: ${JSON.stringify(env.PROMETHEUS_URL)} is not an http(s) URL`);
    }
  }
  const targets = parseTargets(env.DASHBOARD_TARGETS ?? "");
  if (prometheusUrl === null && targets.length === 0)
    throw problem(
      'DASHBOARD_TARGETS: required unless PROMETHEUS_URL is set (e.g. "relay-pop{pop=1}=http://127.0.0.1:9301/metrics")',
    );
  const scrapeIntervalMs = r.num("DASHBOARD_SCRAPE_INTERVAL_MS", 100, 300_000, prometheusUrl ? 15_000 : 2000);
  const scrapeTimeoutMs = r.num("DASHBOARD_SCRAPE_TIMEOUT_MS", 50, 60_000, Math.min(scrapeIntervalMs, 5000));
  const windowS = r.num("DASHBOARD_WINDOW_S", 1, 86_400, prometheusUrl ? 60 : 30);
  const retentionS = r.num("DASHBOARD_RETENTION_S", 10, 7 * 86_400, 3600);
  const refreshMs = r.num("DASHBOARD_REFRESH_MS", 100, 300_000, prometheusUrl ? 5000 : scrapeIntervalMs);
  r.done();
  if (retentionS * 1000 < 2 * scrapeIntervalMs)
    throw problem("DASHBOARD_RETENTION_S: must hold at least two scrapes");
  if ((retentionS * 1000) / scrapeIntervalMs > 200_000)
    throw problem("DASHBOARD_RETENTION_S: more than 200000 snapshots; raise the interval or lower retention");
  return { http, targets, prometheusUrl, scrapeIntervalMs, scrapeTimeoutMs, windowS, retentionS, refreshMs };
}
