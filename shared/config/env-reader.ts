// One reader for configuration variables, for every process and the edge isolate: it collects
// every problem (each naming its variable) instead of stopping at the first, and never echoes a
// secret. Runtime-neutral: the caller passes the variables in (process.env, Workers bindings).
import { type Keyring, parseKeyring } from "../keys.ts";
import { parseClusterKeys } from "../signing/keys.ts";
import { type HostPort, parseHostPort } from "../topology/address.ts";

/** Variables as the runtimes give them: strings, or numbers in Wrangler `[vars]`. */
export type ConfigVars = Readonly<Record<string, unknown>>;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly problems: string[];
  /** `subject` names what is configured in the message ("relay" → "invalid relay configuration"). */
  constructor(problems: string[], subject?: string) {
    super(`invalid ${subject ? `${subject} ` : ""}configuration:\n  ${problems.join("\n  ")}`);
    this.problems = problems;
  }
}

export class EnvReader {
  readonly problems: string[] = [];
  readonly env: ConfigVars;
  readonly #subject: string | undefined;
  constructor(env: ConfigVars, subject?: string) {
    this.env = env;
    this.#subject = subject;
  }
  /** The trimmed text of a variable, or undefined when unset or empty. */
  raw(name: string): string | undefined {
    const v = this.env[name];
    if (v === undefined || v === null) return undefined;
    const s = (typeof v === "string" ? v : String(v)).trim();
    return s === "" ? undefined : s;
  }
  str(name: string, fallback?: string): string {
    const v = this.raw(name);
    if (v === undefined) {
      if (fallback !== undefined) return fallback;
      this.problems.push(`${name}: required`);
      return "";
    }
    return v;
  }
  optional(name: string): string | undefined {
    return this.raw(name);
  }
  /** An integer in [min, max]; a bad value is a problem and reads as the fallback (or min). */
  int(name: string, min: number, max: number, fallback?: number): number {
    const raw = this.raw(name);
    if (raw === undefined) {
      if (fallback !== undefined) return fallback;
      this.problems.push(`${name}: required (an integer ${min}-${max})`);
      return min;
    }
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      this.problems.push(`${name}: must be an integer ${min}-${max}, got ${JSON.stringify(raw)}`);
      return fallback ?? min;
    }
    return n;
  }
  /** A finite number in [min, max] (fractions allowed). */
  num(name: string, min: number, max: number, fallback: number): number {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) {
      this.problems.push(`${name}: expected a number in ${min}-${max}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  }
  /** "ip:port"; port 0 (bind any free port) is allowed. */
  hostPort(name: string, fallback?: string): HostPort {
    const raw = this.str(name, fallback);
    const hp = parseHostPort(raw.replace(/:0$/, ":65535"));
    if (typeof hp === "string") {
      if (raw !== "") this.problems.push(`${name}: ${hp}`);
      return { host: "127.0.0.1", port: 0, ipv6: false };
    }
    return { ...hp, port: raw.endsWith(":0") ? 0 : hp.port };
  }
  keyring(name: string, maxId: number): Keyring {
    try {
      return parseKeyring(this.raw(name), name, maxId);
    } catch (e) {
      this.problems.push((e as Error).message);
      return { active: { id: 0, secret: new Uint8Array(32) }, keys: [] };
    }
  }
  /** The edge-to-cluster signing keyring (`id:base64,...`; a bare secret is key 0). */
  clusterKeys(name: string): Keyring {
    try {
      return parseClusterKeys(this.raw(name), name);
    } catch (e) {
      this.problems.push((e as Error).message);
      return { active: { id: 0, secret: new Uint8Array(32) }, keys: [] };
    }
  }
  /** Base64 (standard or URL-safe, padded or not) of at least `minBytes`; the value is never echoed. */
  secret(name: string, minBytes: number): Uint8Array {
    const raw = this.raw(name);
    if (raw === undefined) {
      this.problems.push(`${name}: required (base64, at least ${minBytes} bytes)`);
      return new Uint8Array(0);
    }
    const bytes = decodeAnyBase64(raw);
    if (!bytes) {
      this.problems.push(`${name}: not base64`);
      return new Uint8Array(0);
    }
    if (bytes.length < minBytes) {
      this.problems.push(`${name}: has ${bytes.length} bytes, at least ${minBytes} are required`);
    }
    return bytes;
  }
  url(name: string, fallback: string, schemes: RegExp): string {
    const v = this.str(name, fallback);
    try {
      const u = new URL(v);
      if (!schemes.test(u.protocol)) this.problems.push(`${name}: scheme ${u.protocol} is not allowed`);
    } catch {
      this.problems.push(`${name}: not a URL: ${JSON.stringify(v)}`);
    }
    return v;
  }
  /** Throws one ConfigError listing every problem, if there is any. */
  done(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems, this.#subject);
  }
}

function decodeAnyBase64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return null;
  try {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}
