// Test harness: an embedded transceiver with fresh random secrets, an echo agent, the loopback
// relay, and signed calls to the signalling API.
import { randomBytes } from "node:crypto";
import { createLogger } from "../../../regional/common/log.ts";
import { type EchoAgent, startEchoAgent } from "../../../regional/echo-agent/agent.ts";
import { inProcessEchoBackend } from "../../../regional/echo-agent/in-process.ts";
import { configWithDefaults, type TransceiverConfig } from "../../../regional/transceiver/config.ts";
import type { MembershipStore } from "../../../regional/transceiver/membership.ts";
import type { CallStatus } from "../../../regional/transceiver/shell/call.ts";
import { startTransceiver, type Transceiver } from "../../../regional/transceiver/transceiver.ts";

export type { CallStatus };

import type { Keyring } from "../../../shared/keys.ts";
import { type SignedCaller, signedCaller } from "../../support/signed-call.ts";
import { type ClientOptions, createTestClient, type TestClient } from "./client.ts";
import { type LoopbackRelay, startLoopbackRelay } from "./loopback-relay.ts";

export function randomKeyring(id = 1): Keyring {
  const k = { id, secret: new Uint8Array(randomBytes(32)) };
  return { active: k, keys: [k] };
}

export interface Harness extends SignedCaller {
  t: Transceiver;
  relay: LoopbackRelay;
  agent: EchoAgent;
  secret: Uint8Array;
  /** Creates a session for a new client and connects it. */
  connectClient(
    o?: ClientOptions & { session?: object; continent?: string },
  ): Promise<{ client: TestClient; callId: string; etag: string; answer: string }>;
  close(): Promise<void>;
}

export const quietLog = createLogger({ svc: "test" }, "error");

/** GET /v1/calls/{callId} on the harness: the call's status (throws unless 200). */
export async function callStatus(h: SignedCaller, callId: string): Promise<CallStatus> {
  const r = await h.call("GET", `/v1/calls/${callId}`);
  if (r.status !== 200) throw new Error(`GET /v1/calls/${callId}: ${r.status} ${await r.text()}`);
  return (await r.json()) as CallStatus;
}

export async function startHarness(
  over: Partial<TransceiverConfig> & { clusterSecret?: Uint8Array } = {},
  o: { membership?: MembershipStore; agentDelayMs?: number; agent?: EchoAgent } = {},
): Promise<Harness> {
  const agent = o.agent ?? (await startEchoAgent({ delayMs: o.agentDelayMs ?? 0 }));
  const secret = over.clusterSecret ?? new Uint8Array(randomBytes(32));
  const clusterId = over.clusterId ?? 1;
  const transceiverId = over.transceiverId ?? 1;
  const config = configWithDefaults({
    clusterId,
    transceiverId,
    hintKeys: randomKeyring(1),
    callIdKeys: randomKeyring(2),
    clusterSecret: secret,
    backendUrl: agent.url,
    ...over,
  });
  const t = await startTransceiver(config, {
    log: quietLog,
    // The wiring main.ts does: an internal: backend runs in this process.
    ...(config.backendUrl.startsWith("internal:")
      ? { backend: inProcessEchoBackend(config.backendUrl) }
      : {}),
    ...(o.membership ? { membership: o.membership } : {}),
  });
  const relay = await startLoopbackRelay({ transceiver: t.udpAddress, clusterId, transceiverId });
  const { call, signedHeaders } = signedCaller(() => t.httpUrl, secret, { clusterId, transceiverId });
  const clients: TestClient[] = [];
  return {
    t,
    relay,
    agent,
    secret,
    call,
    signedHeaders,
    async connectClient(co = {}) {
      const client = createTestClient(co);
      clients.push(client);
      const offer = await client.createOffer();
      const res = await call("POST", "/v1/calls", {
        sdp: offer,
        ...(co.session ? { session: co.session } : {}),
        client: { region: "test", continent: co.continent ?? "EU" },
        ingress: { vip: `${relay.vip.host}:${relay.vip.port}`, popId: 1 },
      });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
      const j = (await res.json()) as { callId: string; sdp: string; etag: string };
      await client.setAnswer(j.sdp);
      await client.connected();
      return { client, callId: j.callId, etag: j.etag, answer: j.sdp };
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await t.stop();
      await relay.close();
      if (!o.agent) await agent.close();
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export { until } from "../../support/wait.ts";
