// The relay program itself (regional/relay/main.ts): two worker threads on one VIP port with
// SO_REUSEPORT, the ready line, the admin endpoints, SIGTERM drain and configuration errors.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../regional/common/log.ts";
import { RelayWorker } from "../../regional/relay/shell/worker.ts";
import { bindingRequest, HINT_KEYS, hint, rtp } from "./fixtures.ts";
import { Client, FakeTransceiver, ports, relayConfig, topology, until } from "./harness.ts";

const log = createLogger({ test: "relay" }, "error");
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

interface Proc {
  child: ChildProcess;
  ready: Record<string, unknown>;
  stderr: string[];
  exited: Promise<number | null>;
}

function startProgram(env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, ["regional/relay/main.ts"], {
    cwd: join(import.meta.dirname, "../.."),
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      LOG_LEVEL: "warn",
      ...(process.env.GR_RELAY_IO ? { GR_RELAY_IO: process.env.GR_RELAY_IO } : {}),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stderr: string[] = [];
  child.stderr!.on("data", (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve({ child, ready: JSON.parse(out.slice(0, nl)), stderr, exited });
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${stderr.join("")}`)));
  });
}

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> | string }> {
  const r = await fetch(url);
  const text = await r.text();
  try {
    return { status: r.status, body: JSON.parse(text) };
  } catch {
    return { status: r.status, body: text };
  }
}

describe("relay program", () => {
  it("runs two workers on one VIP port, aggregates admin views, and drains on SIGTERM", async () => {
    const p = await ports();
    const topo = topology(p);
    const dir = mkdtempSync(join(tmpdir(), "relay-"));
    const file = join(dir, "topology.json");
    writeFileSync(file, JSON.stringify(topo));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const t = await FakeTransceiver.start();
    cleanup.push(() => t.close());
    const cluster = await RelayWorker.start(
      relayConfig("cluster", topo, { transceivers: [[1, t.address]] }),
      log,
    );
    cleanup.push(() => cluster.close());
    const prog = await startProgram({
      RELAY_ROLE: "pop",
      POP_ID: "7",
      TOPOLOGY_FILE: file,
      GR_HINT_KEYS: HINT_KEYS,
      RELAY_WORKERS: "2",
      RELAY_DRAIN_MS: "60000",
    });
    cleanup.push(async () => {
      prog.child.kill("SIGKILL");
      await prog.exited;
    });
    expect(prog.ready).toMatchObject({
      msg: "ready",
      role: "pop",
      popId: 7,
      vip: `127.0.0.1:${p.vip}`,
      workers: 2,
    });
    const admin = `http://${prog.ready.admin}`;

    const clients: Client[] = [];
    for (let i = 0; i < 24; i++) {
      const c = await Client.open();
      cleanup.push(() => c.close());
      clients.push(c);
      c.send(bindingRequest(hint(1, 1)), p.vip);
    }
    await until(() => clients.every((c) => c.inbox.length === 1), "every client answered");
    const flows = (await get(`${admin}/flows`)).body as { active: number; workers: number[] };
    expect(flows.active).toBe(24);
    expect(flows.workers.length).toBe(2);
    expect(flows.workers.every((n) => n > 0)).toBe(true); // the kernel spread the 4-tuples
    const one = await get(`${admin}/flows?client=127.0.0.1:${clients[0]!.port}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ state: "answered", clusterId: 1, transceiverId: 1 });
    expect((await get(`${admin}/flows?client=127.0.0.1:1`)).status).toBe(404);
    const metrics = (await get(`${admin}/metrics`)).body as string;
    expect(metrics).toMatch(/gr_relay_flows_created_total\{role="pop"\} 24/);
    expect(metrics).toMatch(/gr_relay_workers\{role="pop"\} 2/);
    // Both workers on the path the suite asked for (GR_RELAY_IO; unset: batch when the addon is built).
    const io = process.env.GR_RELAY_IO === "dgram" ? "dgram" : "batch";
    expect(metrics).toMatch(new RegExp(`gr_relay_io_mode\\{mode="${io}"\\} 2`));
    expect((await get(`${admin}/readyz`)).status).toBe(200);

    prog.child.kill("SIGTERM");
    await until(async () => (await get(`${admin}/readyz`)).status === 503, "not ready while draining");
    expect((await get(`${admin}/healthz`)).body).toMatchObject({ status: "draining" });
    // No new flows ...
    const late = await Client.open();
    cleanup.push(() => late.close());
    const seenBefore = t.seen.length;
    late.send(bindingRequest(hint(1, 1)), p.vip);
    await until(
      async () => /reason="draining"\} 1/.test((await get(`${admin}/metrics`)).body as string),
      "draining drop",
    );
    // ... but established flows keep flowing.
    clients[3]!.send(rtp(), p.vip);
    await until(() => clients[3]!.inbox.length === 2, "echo during drain");
    expect(t.seen.length).toBe(seenBefore + 1);
    prog.child.kill("SIGINT");
    expect(await prog.exited).toBe(0);
  });

  it("refuses a bad configuration with every problem named, exit code 2", async () => {
    await expect(startProgram({ RELAY_ROLE: "pop", RELAY_WORKERS: "zero" })).rejects.toThrow(
      /exited 2.*POP_ID: required.*TOPOLOGY_FILE: required.*GR_HINT_KEYS: no keys configured.*RELAY_WORKERS: must be an integer/s,
    );
  });
});
