// Starts the local system's processes, waits for each one's "ready" line, restarts one that dies
// (with backoff, a bounded number of times, as Kubernetes would) and stops them all. Every child
// runs in its own process group, so stopping it also stops what it spawned (wrangler's workerd),
// and every child watches this process through an inherited pipe (parent-watch.ts): when the
// supervisor dies by any signal, SIGKILL included, the children stop themselves.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
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
  spec: ProcessSpec;
  child: ChildProcess;
  /** Last lines of output, for error messages. */
  tail: string[];
  /** Set when the supervisor itself stops the child: its exit is then no failure. */
  stopping: boolean;
}

export interface RestartPolicy {
  /** Delay before restart n (0-based); the last entry repeats. */
  backoffMs: number[];
  /** More than this many restarts of one component within `windowMs` gives up on the system. */
  maxRestarts: number;
  windowMs: number;
}

export const DEFAULT_RESTARTS: RestartPolicy = {
  backoffMs: [250, 500, 1_000, 2_000, 4_000],
  maxRestarts: 5,
  windowMs: 60_000,
};

/** What the supervisor reports about a component beyond its own output (logged as JSON). */
export type SupervisorEvent =
  | {
      msg: "component exited";
      component: string;
      code: number | null;
      signal: string | null;
      restartInMs: number;
      restarts: number;
    }
  | { msg: "component restarted"; component: string; pid: number; restarts: number }
  | { msg: "component restart failed"; component: string; error: string }
  | { msg: "component gave up"; component: string; restarts: number; windowMs: number; tail: string[] };

export class StartError extends Error {
  override readonly name = "StartError";
}

const PARENT_FD = 3;
const PARENT_WATCH = join(import.meta.dirname, "parent-watch.ts");
const RUN_WATCHED = join(import.meta.dirname, "run-watched.ts");

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
  readonly #policy: RestartPolicy | null;
  readonly #restartsAt = new Map<string, number[]>();
  readonly #pending = new Set<NodeJS.Timeout>();
  #stopping = false;
  /** A component died and will not be restarted (no policy, or it gave up). */
  onExit: (r: Running, code: number | null, signal: string | null) => void = () => {};
  /** Restarts and give-ups. */
  onEvent: (e: SupervisorEvent) => void = () => {};
  /** Every output line of every child, prefixed by its name. */
  onLine: (name: string, line: string) => void = () => {};

  /** `restarts: null` keeps the old behaviour: a death is reported through `onExit` only. */
  constructor(restarts: RestartPolicy | null = DEFAULT_RESTARTS) {
    this.#policy = restarts;
  }

  async start(spec: ProcessSpec): Promise<Running> {
    // Node programs take the preload directly; anything else runs under a small Node wrapper.
    const node = process.execPath;
    const args =
      spec.command === node
        ? ["--import", PARENT_WATCH, ...spec.args]
        : ["--import", PARENT_WATCH, RUN_WATCHED, spec.command, ...spec.args];
    const child = spawn(node, args, {
      env: { ...process.env, ...spec.env, GR_PARENT_FD: String(PARENT_FD) },
      stdio: ["ignore", "pipe", "pipe", "pipe"],
      detached: true,
    });
    const r: Running = { name: spec.name, spec, child, tail: [], stopping: false };
    this.running.push(r);
    const isReady = spec.ready ?? defaultReady;
    return new Promise<Running>((resolve, reject) => {
      let ready = false;
      const timeoutMs = spec.readyTimeoutMs ?? 30_000;
      const timer = setTimeout(() => {
        if (ready) return;
        reject(new StartError(`${spec.name} did not become ready in ${timeoutMs} ms${this.#tail(r)}`));
        void this.stopOne(r, "SIGKILL", 0);
      }, timeoutMs);
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
        const i = this.running.indexOf(r);
        if (i >= 0) this.running.splice(i, 1);
        if (!ready) {
          reject(
            new StartError(
              `${spec.name} exited during start (code ${code}, signal ${signal})${this.#tail(r)}`,
            ),
          );
        } else if (!this.#stopping && !r.stopping) {
          this.#died(r, code, signal);
        }
      });
    });
  }

  /** A ready component died on its own: restart it with backoff, or give up. */
  #died(r: Running, code: number | null, signal: string | null): void {
    const p = this.#policy;
    if (p === null) {
      this.onExit(r, code, signal);
      return;
    }
    const now = Date.now();
    const recent = (this.#restartsAt.get(r.name) ?? []).filter((t) => now - t < p.windowMs);
    if (recent.length >= p.maxRestarts) {
      this.onEvent({
        msg: "component gave up",
        component: r.name,
        restarts: recent.length,
        windowMs: p.windowMs,
        tail: r.tail.slice(-15),
      });
      this.onExit(r, code, signal);
      return;
    }
    recent.push(now);
    this.#restartsAt.set(r.name, recent);
    const delay = p.backoffMs[Math.min(recent.length - 1, p.backoffMs.length - 1)] ?? 1_000;
    this.onEvent({
      msg: "component exited",
      component: r.name,
      code,
      signal,
      restartInMs: delay,
      restarts: recent.length,
    });
    const t = setTimeout(() => {
      this.#pending.delete(t);
      if (this.#stopping) return;
      this.start(r.spec).then(
        (again) =>
          this.onEvent({
            msg: "component restarted",
            component: r.name,
            pid: again.child.pid ?? 0,
            restarts: recent.length,
          }),
        (e: Error) => {
          this.onEvent({ msg: "component restart failed", component: r.name, error: e.message });
          // A start that failed counts as another death of the same component.
          if (!this.#stopping) this.#died(r, null, null);
        },
      );
    }, delay);
    this.#pending.add(t);
  }

  #tail(r: Running): string {
    return r.tail.length ? `; last output:\n    ${r.tail.slice(-12).join("\n    ")}` : "";
  }

  /** Stops one child (and its group) for good: SIGINT/SIGTERM first, SIGKILL after `graceMs`. */
  async stopOne(r: Running, signal: NodeJS.Signals = "SIGINT", graceMs = 5_000): Promise<void> {
    r.stopping = true;
    const child = r.child;
    const kill = (sig: NodeJS.Signals): void => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        /* already gone */
      }
    };
    if (child.pid === undefined) return;
    if (child.exitCode !== null || child.signalCode !== null) {
      kill("SIGKILL"); // the leader is gone; the group may hold grandchildren
      return;
    }
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    kill(signal);
    const timer = setTimeout(() => kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
    kill("SIGKILL"); // the group may hold grandchildren that outlived the leader
  }

  /** Stops everything at once (the shutdown must fit in about 2 s). Idempotent. */
  async stopAll(signal: NodeJS.Signals = "SIGINT", graceMs = 1_500): Promise<void> {
    this.#stopping = true;
    for (const t of this.#pending) clearTimeout(t);
    this.#pending.clear();
    await Promise.all([...this.running].map((r) => this.stopOne(r, signal, graceMs)));
    this.running.length = 0;
  }
}
