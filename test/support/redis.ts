// Starts a real, private redis-server on a free loopback port for one test file. Never uses 6379.
import { type ChildProcess, spawn } from "node:child_process";
import { connect } from "node:net";
import { which } from "../../scripts/lib/system-deps.ts";
import { freeTcpPort } from "./ports.ts";
import { until } from "./wait.ts";

export interface RedisHandle {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Kills the server abruptly (for outage tests); `restart()` brings it back on the same port. */
  kill(): Promise<void>;
  restart(): Promise<void>;
}

/** Sends PING and resolves true on "+PONG": the server is up and serving, not only listening. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    let got = "";
    s.once("connect", () => s.write("PING\r\n"));
    s.on("data", (d) => {
      got += d.toString("latin1");
      if (got.includes("\r\n")) {
        s.destroy();
        resolve(got.startsWith("+PONG"));
      }
    });
    s.once("error", () => resolve(false));
    s.once("close", () => resolve(false));
  });
}

/** `port`: a port to reuse (a test that stops the server and starts another in its place). */
export async function startRedis(port?: number): Promise<RedisHandle> {
  const bin = which("redis-server");
  if (!bin) throw new Error("redis-server is not installed: run `npm run setup:system`");
  const p = port ?? (await freeTcpPort());
  let child: ChildProcess | null = null;
  const launch = async (): Promise<void> => {
    const c = spawn(
      bin,
      [
        "--port",
        String(p),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--loglevel",
        "warning",
      ],
      { stdio: "ignore" },
    );
    child = c;
    await until(
      () => (c.exitCode !== null ? Promise.reject(new Error(`redis-server exited ${c.exitCode}`)) : pong(p)),
      `redis-server to answer PING on port ${p}`,
      undefined,
      50,
    );
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
  return { url: `redis://127.0.0.1:${p}`, port: p, stop: kill, kill, restart: launch };
}
