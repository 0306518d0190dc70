// Entry points as the lead's start script runs them: environment validation with messages that
// name the variable, the ready line, SIGTERM drain and SIGINT stop; and the echo agent's delay.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createSocket } from "node:dgram";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { loadGatewayConfig } from "../../regional/gateway/config.ts";
import {
  encodeAudioFrame,
  newAudioFrameHeader,
  readAudioFrameHeader,
} from "../../regional/transceiver/backend-protocol.ts";
import { ConfigError, loadConfig } from "../../regional/transceiver/config.ts";
import { formatKeyring } from "../../shared/keys.ts";
import { until } from "../support/wait.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const topo = join(mkdtempSync(join(tmpdir(), "gr-tx-")), "topology.json");
writeFileSync(
  topo,
  JSON.stringify({
    version: 1,
    globalVip: "127.0.0.1:3478",
    defaultClusterId: 1,
    clusters: [
      {
        id: 1,
        name: "c1",
        region: "r1",
        continent: "EU",
        latitude: 1,
        longitude: 1,
        signallingUrl: "http://127.0.0.1:7101",
        backbone: "127.0.0.1:5101",
        backboneCidrs: ["127.0.0.0/8"],
        vip: "127.0.0.1:3479",
        capacity: 10,
      },
    ],
    pops: [
      {
        id: 1,
        name: "p1",
        region: "r1",
        latitude: 1,
        longitude: 1,
        vip: "127.0.0.1:3478",
        backbone: "127.0.0.1:4478",
        backboneCidrs: ["127.0.0.0/8"],
      },
    ],
  }),
);
const keys = () => formatKeyring([{ id: 1, secret: new Uint8Array(randomBytes(32)) }]);
const env = (over: Record<string, string | undefined> = {}) => ({
  CLUSTER_ID: "1",
  TRANSCEIVER_ID: "3",
  TOPOLOGY_FILE: topo,
  GR_HINT_KEYS: keys(),
  GR_CALL_ID_KEYS: keys(),
  GR_CLUSTER_SECRET: randomBytes(32).toString("base64"),
  ...over,
});

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

function run(file: string, e: Record<string, string | undefined>) {
  const child = spawn(join(ROOT, "node_modules/.bin/node"), [join(ROOT, file)], {
    env: { PATH: process.env.PATH, LOG_LEVEL: "error", ...e },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  const exited = new Promise<number>((r) => child.on("exit", (code) => r(code ?? -1)));
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.stdout!.on("data", () => {
      const line = out.split("\n").find((l) => l.includes('"ready"'));
      if (line) resolve(JSON.parse(line) as Record<string, unknown>);
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  ready.catch(() => {});
  return { child, ready, exited, stderr: () => err };
}

describe("configuration", () => {
  it("reads every variable, defaults the rest, and takes the VIPs from the topology", () => {
    const c = loadConfig(env({ TRANSCEIVER_UDP: "127.0.0.1:6101", TRANSCEIVER_HTTP: "127.0.0.1:7111" }));
    expect(c.clusterId).toBe(1);
    expect(c.transceiverId).toBe(3);
    expect(c.udp).toEqual({ host: "127.0.0.1", port: 6101, ipv6: false });
    expect(c.globalVip.port).toBe(3478);
    expect(c.clusterVip?.port).toBe(3479);
    expect(c.capacity).toBe(150);
    expect(c.maxSessionMs).toBe(3_600_000);
    expect(c.consentTimeoutMs).toBe(30_000);
    expect(c.backendUrl).toBe("ws://127.0.0.1:8090");
    expect(c.heapGrowingPercent).toBe(300);
    expect(loadConfig(env({ TRANSCEIVER_HEAP_GROWING_PERCENT: "0" })).heapGrowingPercent).toBe(0);
  });

  it("conferences: off without GR_BACKBONE_KEYS, read and validated with it", () => {
    expect(loadConfig(env()).conference).toBeUndefined();
    const backbone = formatKeyring([{ id: 3, secret: new Uint8Array(randomBytes(32)) }]);
    const c = loadConfig(
      env({
        TRANSCEIVER_UDP: "127.0.0.1:6101",
        GR_BACKBONE_KEYS: backbone,
        TRANSCEIVER_CONFERENCE_PORT: "6151",
        TRANSCEIVER_CONFERENCE_ADDR: "10.0.0.5:6151",
      }),
    ).conference!;
    expect(c.bind).toEqual({ host: "127.0.0.1", port: 6151, ipv6: false });
    expect(c.advertise).toEqual({ host: "10.0.0.5", port: 6151, ipv6: false });
    expect(c.keys.active.id).toBe(3);
    expect(c.maxParticipants).toBe(8);
    expect(c.nack).toBe(true);
    expect(c.cidrs.length).toBe(1);
    const problems = (over: Record<string, string>): string[] => {
      try {
        loadConfig(env(over));
        return [];
      } catch (e) {
        return (e as ConfigError).problems;
      }
    };
    expect(problems({ GR_BACKBONE_KEYS: `16:${randomBytes(32).toString("base64")}` })).toEqual([
      expect.stringMatching(/^GR_BACKBONE_KEYS\[0\]: key id 16 is over the maximum 15/),
    ]);
    expect(
      problems({
        GR_BACKBONE_KEYS: backbone,
        CONFERENCE_MAX_PARTICIPANTS: "1",
        CONFERENCE_NACK: "yes",
        TRANSCEIVER_CONFERENCE_PORT: "70000",
        TRANSCEIVER_CONFERENCE_ADDR: "0.0.0.0:1",
      }).map((p) => p.split(":")[0]),
    ).toEqual([
      "TRANSCEIVER_CONFERENCE_PORT",
      "CONFERENCE_MAX_PARTICIPANTS",
      "CONFERENCE_NACK",
      "TRANSCEIVER_CONFERENCE_ADDR",
    ]);
    expect(problems({ TRANSCEIVER_CONFERENCE_ADDR: "10.0.0.5:1" })).toEqual([
      expect.stringMatching(/^TRANSCEIVER_CONFERENCE_ADDR: conferences need GR_BACKBONE_KEYS/),
    ]);
  });

  it("reports every problem at once, naming the variable and never the secret", () => {
    const secret = "c2hvcnQ=";
    try {
      loadConfig(
        env({
          CLUSTER_ID: "0",
          TRANSCEIVER_ID: undefined,
          TRANSCEIVER_UDP: "localhost:1",
          GR_CLUSTER_SECRET: secret,
          GR_HINT_KEYS: "1:abc",
          BACKEND_URL: "http://x",
          TRANSCEIVER_CAPACITY: "lots",
          TRANSCEIVER_HEAP_GROWING_PERCENT: "1001",
        }),
      );
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const p = (e as ConfigError).problems.join("\n");
      for (const v of [
        "CLUSTER_ID",
        "TRANSCEIVER_ID",
        "TRANSCEIVER_UDP",
        "GR_CLUSTER_SECRET",
        "GR_HINT_KEYS",
        "BACKEND_URL",
        "TRANSCEIVER_CAPACITY",
        "TRANSCEIVER_HEAP_GROWING_PERCENT",
      ]) {
        expect(p).toContain(v);
      }
      expect(p).not.toContain(secret);
    }
    expect(() => loadConfig(env({ TOPOLOGY_FILE: "/nonexistent.json" }))).toThrow(/TOPOLOGY_FILE/);
    expect(() =>
      loadGatewayConfig({ CLUSTER_ID: "1", GR_CLUSTER_SECRET: randomBytes(32).toString("base64") }),
    ).toThrow(/GATEWAY_TRANSCEIVERS or REDIS_URL/);
  });
});

describe("processes", () => {
  it("transceiver: ready line, /healthz, SIGTERM drains and exits 0", async () => {
    const p = run("regional/transceiver/main.ts", env());
    const ready = await p.ready;
    expect(ready).toMatchObject({
      msg: "ready",
      svc: "transceiver",
      clusterId: 1,
      transceiverId: 3,
      membership: "memory",
    });
    const h = (await (await fetch(`${ready.http}/healthz`)).json()) as Record<string, unknown>;
    expect(h).toMatchObject({ status: "ok", clusterId: 1, load: 0, capacity: 150, backbone: ready.udp });
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
  });

  it("transceiver: main.ts injects the in-process echo for BACKEND_URL=internal:echo", async () => {
    // An embedded transceiver refuses an internal: URL without an injected backend, so a ready
    // line here means main.ts did the wiring.
    const p = run("regional/transceiver/main.ts", env({ BACKEND_URL: "internal:echo?delay_ms=5" }));
    expect(await p.ready).toMatchObject({ msg: "ready", backend: "internal:echo?delay_ms=5" });
    p.child.kill("SIGINT");
    expect(await p.exited).toBe(0);
  });

  it("transceiver: a start that fails (its backbone port taken) is one JSON error line and exit 1", async () => {
    const taken = createSocket("udp4");
    await new Promise<void>((r) => taken.bind(0, "127.0.0.1", () => r()));
    try {
      const port = taken.address().port;
      const p = run("regional/transceiver/main.ts", env({ TRANSCEIVER_UDP: `127.0.0.1:${port}` }));
      expect(await p.exited).toBe(1);
      const lines = p.stderr().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", msg: "start failed" });
      expect(lines[0]).toMatch(/in use|EADDRINUSE/i);
    } finally {
      taken.close();
    }
  });

  it("transceiver: exits 2 with the problems on stderr when misconfigured", async () => {
    const p = run("regional/transceiver/main.ts", env({ GR_CALL_ID_KEYS: "" }));
    expect(await p.exited).toBe(2);
    expect(p.stderr()).toContain("GR_CALL_ID_KEYS");
  });

  it("gateway and echo agent: ready lines, SIGINT stops", async () => {
    const secret = randomBytes(32).toString("base64");
    const gw = run("regional/gateway/main.ts", {
      CLUSTER_ID: "1",
      GATEWAY_HTTP: "127.0.0.1:0",
      GR_CLUSTER_SECRET: secret,
      GATEWAY_TRANSCEIVERS: "1=http://127.0.0.1:9",
    });
    const echo = run("regional/echo-agent/main.ts", { ECHO_AGENT_LISTEN: "127.0.0.1:0", ECHO_DELAY_MS: "5" });
    expect(await gw.ready).toMatchObject({ msg: "ready", svc: "gateway", transceivers: [1] });
    expect(await echo.ready).toMatchObject({ msg: "ready", svc: "echo-agent", delayMs: 5 });
    gw.child.kill("SIGINT");
    echo.child.kill("SIGINT");
    expect(await gw.exited).toBe(0);
    expect(await echo.exited).toBe(0);
  });
});

describe("echo agent", () => {
  it("returns frames after the delay, in order, and answers events", async () => {
    const agent = await startEchoAgent({ delayMs: 40 });
    const ws = new WebSocket(agent.url);
    await new Promise((r) => ws.once("open", r));
    const frames: number[] = [];
    const texts: unknown[] = [];
    const h = newAudioFrameHeader();
    ws.on("message", (d: Buffer, bin) => {
      if (bin) {
        expect(readAudioFrameHeader(d, h)).toBe("ok");
        frames.push(h.sequenceNumber);
      } else texts.push(JSON.parse(String(d)));
    });
    const t0 = performance.now();
    for (let i = 0; i < 10; i++)
      ws.send(
        encodeAudioFrame({ codec: 1, flags: 0, sequenceNumber: i, timestamp: i * 960 }, Uint8Array.of(i)),
      );
    ws.send(JSON.stringify({ type: "ping" }));
    ws.send(JSON.stringify({ type: "session.started" }));
    ws.send(JSON.stringify({ type: "hello", n: 1 }));
    await until(() => frames.length >= 10, "10 echoed frames", undefined, 5);
    // Not before the delay (a lower bound only: the machine may be slower, never faster).
    expect(performance.now() - t0).toBeGreaterThanOrEqual(40);
    expect(frames).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // session.started opens the Realtime session; "hello" is no Realtime event.
    expect(texts).toMatchObject([
      { type: "pong", event_id: expect.any(String) },
      { type: "session.created", session: { object: "realtime.session" } },
      { type: "error", error: { code: "invalid_value", param: "type" } },
    ]);
    ws.close();
    await agent.close();
  });
});
