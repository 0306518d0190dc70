// Starts the local system's processes, waits for each one's "ready" line, and stops them all
// cleanly: every child runs in its own process group, so stopping it also stops what it spawned
// (wrangler's workerd, for one). A child that dies early takes the whole system down with a clear
// message and its last output lines.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Returns true when a line shows the process is ready. Default: a JSON line with msg "ready". */
  ready?: (line: string) => boolean;
  readyTimeoutMs?: number;
}

export interface Running {
  name: string;
  child: ChildProcess;
  /** Last lines of output, for error messages. */
  tail: string[];
}

export class StartError extends Error {
  override readonly name = "StartError";
}

const defaultReady = (line: string): boolean => {
  if (!line.startsWith("{")) return false;
  try {
    return (JSON.parse(line) as { msg?: unknown }).msg === "ready";
  } catch {
    return false;
  }
};

export class Supervisor {
  readonly running: Running[] = [];
  #stopping = false;
  onExit: (r: Running, code: number | null, signal: string | null) => void = () => {};
  /** Every output line of every child, prefixed by its name. */
  onLine: (name: string, line: string) => void = () => {};

  async start(spec: ProcessSpec): Promise<Running> {
    const child = spawn(spec.command, spec.args, {
      env: { ...process.env, ...spec.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const r: Running = { name: spec.name, child, tail: [] };
    this.running.push(r);
    const isReady = spec.ready ?? defaultReady;
    return new Promise<Running>((resolve, reject) => {
      let ready = false;
      const timer = setTimeout(() => {
        if (!ready)
          reject(
            new StartError(
              `${spec.name} did not become ready in ${spec.readyTimeoutMs ?? 30_000} ms${this.#tail(r)}`,
            ),
          );
      }, spec.readyTimeoutMs ?? 30_000);
      const onLine = (line: string): void => {
        r.tail.push(line);
        if (r.tail.length > 40) r.tail.shift();
        this.onLine(spec.name, line);
        if (!ready && isReady(line)) {
          ready = true;
          clearTimeout(timer);
          resolve(r);
        }
      };
      createInterface({ input: child.stdout! }).on("line", onLine);
      createInterface({ input: child.stderr! }).on("line", onLine);
      child.once("error", (e) => {
        clearTimeout(timer);
        reject(new StartError(`${spec.name} could not start: ${e.message}`));
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        if (!ready)
          reject(
            new StartError(
              `${spec.name} exited during start (code ${code}, signal ${signal})${this.#tail(r)}`,
            ),
          );
        else if (!this.#stopping) this.onExit(r, code, signal);
      });
    });
  }

  #tail(r: Running): string {
    return r.tail.length ? `; last output:\n    ${r.tail.slice(-12).join("\n    ")}` : "";
  }

  /** Stops one child (and its group): SIGTERM/SIGINT first, SIGKILL after `graceMs`. */
  async stopOne(r: Running, signal: NodeJS.Signals = "SIGINT", graceMs = 5_000): Promise<void> {
    const child = r.child;
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const kill = (sig: NodeJS.Signals): void => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        /* already gone */
      }
    };
    kill(signal);
    const timer = setTimeout(() => kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
    kill("SIGKILL"); // the group may hold grandchildren that outlived the leader
  }

  /** Stops everything in reverse start order. Idempotent. */
  async stopAll(signal: NodeJS.Signals = "SIGINT"): Promise<void> {
    this.#stopping = true;
    for (const r of [...this.running].reverse()) await this.stopOne(r, signal);
    this.running.length = 0;
  }
}
