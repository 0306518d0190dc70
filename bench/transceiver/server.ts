// Benchmark server process (forked by run.ts). Mode "gr": the real transceiver (shared socket,
// signalling API; backend from BENCH_BACKEND). Mode "werift": baseline.ts, offers over IPC.
// Answers {cmd:"stats"} with CPU, memory and event-loop delay of this process only.
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { createLogger } from "../../regional/common/log.ts";
import { inProcessEchoBackend } from "../../regional/echo-agent/in-process.ts";
import { configWithDefaults } from "../../regional/transceiver/config.ts";
import { startTransceiver, type Transceiver } from "../../regional/transceiver/transceiver.ts";
import { type BaselineSession, baselineSession } from "./baseline.ts";

type Msg = { cmd: string; id?: number; sdp?: string; [k: string]: unknown };

const mode = process.env.BENCH_MODE ?? "gr";
const send = (m: unknown): void => {
  process.send?.(m);
};
const eld = monitorEventLoopDelay({ resolution: 5 });
eld.enable();
// Garbage-collector pauses since the last reset, beside the event-loop delay they cause part of.
const noGcPauses = () => ({ count: 0, totalMs: 0, maxMs: 0, over10Ms: 0, majorMs: 0 });
const gcPauses = noGcPauses();
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcPauses.count++;
    // perf_hooks.constants.NODE_PERFORMANCE_GC_MAJOR (mark-compact), against scavenges and the rest.
    if ((e as { detail?: { kind?: number } }).detail?.kind === 4) gcPauses.majorMs += e.duration;
    gcPauses.totalMs += e.duration;
    if (e.duration > gcPauses.maxMs) gcPauses.maxMs = e.duration;
    if (e.duration > 10) gcPauses.over10Ms++;
  }
}).observe({ entryTypes: ["gc"] });
let t: Transceiver | undefined;
const baseline: BaselineSession[] = [];

const countBy = (xs: string[]): Record<string, number> => {
  const o: Record<string, number> = {};
  for (const x of xs) o[x] = (o[x] ?? 0) + 1;
  return o;
};

const gc = (): void => {
  (globalThis as { gc?: () => void }).gc?.();
};

async function start(m: Msg): Promise<void> {
  if (mode === "gr") {
    const k = (s: string) => ({ id: 1, secret: new Uint8Array(Buffer.from(s, "base64")) });
    const hint = k(m.hintKey as string);
    const call = k(m.callIdKey as string);
    t = await startTransceiver(
      configWithDefaults({
        clusterId: 1,
        transceiverId: 1,
        hintKeys: { active: hint, keys: [hint] },
        callIdKeys: { active: call, keys: [call] },
        clusterSecret: new Uint8Array(Buffer.from(m.secret as string, "base64")),
        backendUrl: m.backend as string,
        capacity: 10_000,
        backendQueueBytes: 256 * 1024,
        socketBufferBytes: 32 * 1024 * 1024,
        socketCount: Number(m.sockets ?? 1),
        connectRelays: m.connectRelays === true,
        backendSharedConnections: Number(m.sharedConnections ?? 4),
        gro: m.gro !== false,
        io: m.io === "dgram" ? "dgram" : "batch",
        srtpProfiles: m.srtpProfiles === "werift" ? "werift" : "aes-cm-only",
        ...(typeof m.heapGrowingPercent === "number" ? { heapGrowingPercent: m.heapGrowingPercent } : {}),
      }),
      {
        log: createLogger({ svc: "bench-transceiver" }, "error"),
        ...((m.backend as string).startsWith("internal:")
          ? { backend: inProcessEchoBackend(m.backend as string) }
          : {}),
      },
    );
    send({ cmd: "started", udp: t.udpAddress, http: t.httpUrl });
  } else {
    send({ cmd: "started" });
  }
}

let inspector: import("node:inspector/promises").Session | undefined;

/** The process's one inspector session, connected (the CPU and heap profilers share it). */
async function inspectorSession(): Promise<import("node:inspector/promises").Session> {
  if (inspector === undefined) {
    const { Session } = await import("node:inspector/promises");
    inspector = new Session();
    inspector.connect();
  }
  return inspector;
}

/** Stops a profiler (`method`), writes its profile to `path`, and replies `reply`. */
async function writeProfile(
  method: "Profiler.stop" | "HeapProfiler.stopSampling",
  path: string,
  reply: string,
) {
  const { profile } = (await (await inspectorSession()).post(method)) as unknown as { profile: unknown };
  const { writeFileSync } = await import("node:fs");
  writeFileSync(path, JSON.stringify(profile));
  send({ cmd: reply });
}

process.on("message", (m: Msg) => {
  void (async () => {
    switch (m.cmd) {
      case "profile-start": {
        const session = await inspectorSession();
        await session.post("Profiler.enable");
        await session.post("Profiler.start");
        return send({ cmd: "profile-started" });
      }
      case "profile-stop":
        return writeProfile("Profiler.stop", m.path as string, "profile-stopped");
      // Allocations over the window, the collected ones included (what the garbage collector works on).
      case "heap-start": {
        const session = await inspectorSession();
        await session.post("HeapProfiler.enable");
        await session.post("HeapProfiler.startSampling", {
          samplingInterval: 1024,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        } as never);
        return send({ cmd: "heap-started" });
      }
      case "heap-stop":
        return writeProfile("HeapProfiler.stopSampling", m.path as string, "heap-stopped");
      case "start":
        return start(m);
      case "offer": {
        const s = await baselineSession(m.sdp!);
        baseline.push(s);
        return send({ cmd: "answer", id: m.id, sdp: s.answer });
      }
      case "stats": {
        if (m.gc) gc();
        const mem = process.memoryUsage();
        const cpu = process.cpuUsage();
        send({
          cmd: "stats",
          id: m.id,
          cpuMs: (cpu.user + cpu.system) / 1000,
          rss: mem.rss,
          heapUsed: mem.heapUsed,
          eldP99Ms: eld.percentile(99) / 1e6,
          eldMaxMs: eld.max / 1e6,
          eldMeanMs: eld.mean / 1e6,
          gcPauses: { ...gcPauses },
          sessions: t ? t.calls.size : baseline.length,
          drops: t ? Object.fromEntries(Object.entries(t.metrics.drops).map(([k, v]) => [k, v.value])) : {},
          backendDropped: t ? t.metrics.backendDroppedToBackend.value : 0,
          states: t ? countBy([...t.calls.values()].map((x) => x.state)) : {},
          ended: t ? countBy([...t.ended.values()].map((x) => x.status.endReason ?? "?")) : {},
        });
        if (m.resetEld) {
          eld.reset();
          Object.assign(gcPauses, noGcPauses());
        }
        return;
      }
      case "stop":
        await t?.stop();
        await Promise.all(baseline.map((s) => s.pc.close().catch(() => {})));
        send({ cmd: "stopped" });
        setTimeout(() => process.exit(0), 50);
        return;
    }
  })().catch((e: unknown) => send({ cmd: "error", id: m.id, message: (e as Error).message }));
});
send({ cmd: "hello", mode });
