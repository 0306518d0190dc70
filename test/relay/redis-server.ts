// Starts a private redis-server on a free loopback port for one test file.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startRedis(port?: number): Promise<TestRedis> {
  const p = port ?? (await freeTcpPort());
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(p), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${p}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on("error", () => {});
  for (let i = 0; i < 100; i++) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch {
      probe.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  probe.disconnect();
  return {
    url,
    port: p,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}
