// The local system (as `npm start` runs it) on free ports on the host end of a private network
// namespace; a WebRTC client (Chromium, GStreamer, Firefox, …) runs inside the namespace, so the
// only address it can gather is the namespace end. Used by the e2e and interop tests.
import { ephemeralPlan, type LocalSystem, startLocalSystem } from "../../scripts/lib/local-system.ts";
import { createNetns, type NetnsHandle } from "./netns.ts";

export interface NamespacedSystem {
  ns: NetnsHandle;
  system: LocalSystem;
  /** The last lines every component printed (for failure messages). */
  logs: string[];
  close(): Promise<void>;
}

export interface NamespacedSystemOptions {
  redis?: boolean;
  apiKey?: string;
  extraEnv?: Record<string, string>;
}

export async function startNamespacedSystem(o: NamespacedSystemOptions = {}): Promise<NamespacedSystem> {
  const ns = createNetns();
  const logs: string[] = [];
  let system: LocalSystem | null = null;
  try {
    const plan = await ephemeralPlan(ns.hostIp);
    system = await startLocalSystem({
      plan,
      redis: o.redis ?? false,
      apiKey: o.apiKey ?? "test-key",
      dashboard: false,
      relayWorkers: 1,
      echoDelayMs: 0,
      ...(o.extraEnv ? { extraEnv: o.extraEnv } : {}),
      log: () => {},
      onChildLine: (name, line) => {
        logs.push(`[${name}] ${line}`);
        if (logs.length > 4000) logs.splice(0, 1000);
      },
    });
    const s = system;
    return {
      ns,
      system: s,
      logs,
      async close() {
        await s.stop();
        ns.destroy();
      },
    };
  } catch (e) {
    await system?.stop();
    ns.destroy();
    (e as Error).message += `\n--- component logs ---\n${logs.slice(-60).join("\n")}`;
    throw e;
  }
}

export interface CallStatus {
  status: number;
  body: Record<string, unknown>;
}

/** GET /v1/realtime/calls/{id} through the edge. */
export async function callStatus(i: { system: LocalSystem }, callId: string): Promise<CallStatus> {
  const r = await fetch(`${i.system.edgeUrl}/v1/realtime/calls/${callId}`, {
    headers: { authorization: `Bearer ${i.system.apiKey}` },
  });
  return { status: r.status, body: (await r.json().catch(() => ({}))) as Record<string, unknown> };
}
