// Test helpers for the dashboard: loopback HTTP servers exporting real Registry metrics, and the
// aggregator entry point as a child process.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { PROMETHEUS_CONTENT_TYPE, type Registry } from "../../regional/common/metrics.ts";

export interface MetricsServer {
  url: string;
  port: number;
  /** Scrapes served so far. */
  hits: number;
  /** Resolves once `hits` exceeds n. */
  waitForHit(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function serveRegistry(
  render: Registry | (() => string),
  path = "/metrics",
  status = 200,
): Promise<MetricsServer> {
  const waiters: { n: number; resolve: () => void }[] = [];
  const body = typeof render === "function" ? render : () => render.render();
  const state = { hits: 0 };
  const server: Server = createServer((req, res) => {
    if (req.url !== path) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(status, { "content-type": PROMETHEUS_CONTENT_TYPE });
    res.end(body(), () => {
      state.hits++;
      for (const w of waiters.splice(0)) {
        if (state.hits > w.n) w.resolve();
        else waiters.push(w);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    get hits() {
      return state.hits;
    },
    waitForHit(n: number) {
      return state.hits > n
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.push({ n, resolve }));
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

export interface Child {
  proc: ChildProcess;
  ready: Record<string, unknown>;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `node <script>` with env; resolves on its `{"msg":"ready"}` line. */
export async function startProcess(
  script: string,
  env: Record<string, string>,
  timeoutMs = 15_000,
): Promise<Child> {
  const proc = spawn(process.execPath, [script], {
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  proc.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  const lines = createInterface({ input: proc.stdout! });
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ready line in ${timeoutMs} ms; stderr: ${err}`)),
      timeoutMs,
    );
    lines.on("line", (line) => {
      try {
        const j = JSON.parse(line) as Record<string, unknown>;
        if (j.msg === "ready") {
          clearTimeout(timer);
          resolve(j);
        }
      } catch {}
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before ready; stderr: ${err}`));
    });
  });
  return { proc, ready, stderr: () => err, exited };
}

export async function getJson<T>(url: string): Promise<T> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}
