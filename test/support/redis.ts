// Starts a real, private redis-server on a free port for one test file. Never uses 6379.
import { type ChildProcess, spawn } from "node:child_process";
import { connect } from "node:net";
import { which } from "../../scripts/lib/system-deps.ts";
import { freePort } from "./ports.ts";

export interface RedisHandle {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Kills the server abruptly (for outage tests); `restart()` brings it back on the same port. */
  kill(): Promise<void>;
  restart(): Promise<void>;
}

async function waitForPort(port: number, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`redis-server did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startRedis(): Promise<RedisHandle> {
  const bin = which("redis-server");
  if (!bin)
    throw new Error(
      "redis-server is not installed: run `npm test` (it installs it) or apt-get install redis-server",
    );
  const port = await freePort();
  let child: ChildProcess | null = null;
  const launch = async (): Promise<void> => {
    child = spawn(bin, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore",
    });
    await waitForPort(port, 10_000);
  };
  const kill = async (): Promise<void> => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once("exit", () => resolve());
      c.kill("SIGKILL");
    });
  };
  await launch();
  return { url: `redis://127.0.0.1:${port}`, port, stop: kill, kill, restart: launch };
}
