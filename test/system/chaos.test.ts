// Chaos: 20 calls on the two transceivers of one cluster, every caller sending audio, then kill -9
// of one transceiver (no restart, so the sibling must take over). Every caller of the dead one
// learns it (GET answers `ended`, `transceiver_failed`; the goal is 3 s, printed, not asserted), resumes with a new offer on the
// call's URL and hears its echo again; the callers on the sibling keep hearing theirs; the backend
// sees each resumed call under its call id again, marked `resumed`, and gives it back its
// conversation. The media gap is measured and printed (median and worst), never asserted
// (timing goals live in bench/).
// The calls are signed to the cluster's gateway as the edge signs them (the edge's own resume and
// failure answers are covered by transceiver-death.test.ts; its rate limits would pace 20 callers).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { transceiverOfCallId } from "../../regional/gateway/routing.ts";
import { ephemeralPlan, type LocalSystem, startLocalSystem } from "../../scripts/lib/local-system.ts";
import { parseClusterKeys } from "../../shared/signing/keys.ts";
import { type SignedCaller, signedCaller } from "../support/signed-call.ts";
import { createTestClient, type TestClient } from "../transceiver/helpers/client.ts";
import { until } from "../transceiver/helpers/harness.ts";

const CALLS = 20;

let sys: LocalSystem;
let agent: EchoAgent;
let gw: SignedCaller;
const logs: string[] = [];
const clients: TestClient[] = [];

beforeAll(async () => {
  agent = await startEchoAgent();
  sys = await startLocalSystem({
    plan: await ephemeralPlan("127.0.0.1", 2),
    redis: false,
    apiKey: "chaos-key",
    dashboard: false,
    relayWorkers: 1,
    echoDelayMs: 0,
    backendUrl: agent.url,
    restarts: null,
    log: () => {},
    onChildLine: (name, line) => {
      logs.push(`[${name}] ${line}`);
      if (logs.length > 5000) logs.splice(0, 1000);
    },
  });
  // The local system's GR_CLUSTER_SECRET is a keyring ("id:base64"); sign for the gateway as the edge does.
  const keys = parseClusterKeys(sys.secrets.clusterSecret, "GR_CLUSTER_SECRET");
  gw = signedCaller(() => `http://127.0.0.1:${sys.plan.clusters[0]!.gatewayPort}`, keys, { clusterId: 1 });
}, 120_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await sys?.stop();
  await agent?.close();
});

/** One caller: a peer connection that sends audio and notes when its echo last arrived. */
class Caller {
  client: TestClient;
  callId = "";
  transceiver = 0;
  heardAt = 0;
  #seen = 0;
  #seq = 0;
  /** Longest silence between two echoes while `watching`. */
  maxGapMs = 0;
  watching = false;
  readonly tag: number;
  constructor(tag: number) {
    this.tag = tag;
    this.client = createTestClient();
    clients.push(this.client);
  }
  async offer(path: string, status: number): Promise<void> {
    const r = await gw.call("POST", path, {
      sdp: await this.client.createOffer(),
      ingress: { vip: sys.topology.globalVip },
    });
    const body = (await r.json()) as { callId: string; sdp: string; transceiverId: number };
    expect(r.status, JSON.stringify(body)).toBe(status);
    this.callId = body.callId;
    // Where the call lives now (a resumed call's id still names the transceiver that minted it).
    this.transceiver = body.transceiverId;
    if (status === 201) expect(transceiverOfCallId(body.callId)).toBe(body.transceiverId);
    await this.client.setAnswer(body.sdp);
    await this.client.connected(20_000);
  }
  send(): void {
    this.#seq++;
    this.client.sendAudio(Buffer.from([this.tag, this.#seq & 0xff]), this.#seq, this.#seq * 960);
  }
  sample(now: number): void {
    const n = this.client.received.length;
    if (n === this.#seen) return;
    this.#seen = n;
    if (this.watching && this.heardAt > 0) this.maxGapMs = Math.max(this.maxGapMs, now - this.heardAt);
    this.heardAt = now;
  }
  /** A new peer connection for the same call (the old one's transceiver is gone). */
  async resume(): Promise<void> {
    this.client = createTestClient();
    clients.push(this.client);
    this.#seen = 0;
    await this.offer(`/v1/calls/${this.callId}`, 200);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe("chaos: kill -9 of one of two transceivers under 20 calls", { timeout: 180_000 }, () => {
  it("tells every caller of the dead one, resumes them on the sibling, and leaves the others alone", async () => {
    const callers: Caller[] = [];
    for (let i = 0; i < CALLS; i++) {
      const c = new Caller(i + 1);
      await c.offer("/v1/calls", 201);
      callers.push(c);
    }
    // Audio from everyone, echoes sampled, for the whole test.
    const pump = setInterval(() => {
      const now = Date.now();
      for (const c of callers) {
        c.send();
        c.sample(now);
      }
    }, 20);
    try {
      await until(() => callers.every((c) => c.heardAt > 0), "every caller hears its echo");
      const victimId = callers[0]!.transceiver;
      const dead = callers.filter((c) => c.transceiver === victimId);
      const alive = callers.filter((c) => c.transceiver !== victimId);
      expect(dead.length).toBeGreaterThan(0);
      expect(alive.length).toBeGreaterThan(0);
      for (const c of alive) c.watching = true;

      const proc = sys.supervisor.running.find((r) => r.name === `fra-local-transceiver-${victimId}`)!;
      const killedAt = Date.now();
      process.kill(proc.child.pid!, "SIGKILL");

      // Each caller of the dead transceiver polls its call until it is told, then resumes.
      const told: number[] = [];
      const gaps: number[] = [];
      await Promise.all(
        dead.map(async (c) => {
          const lastHeard = c.heardAt;
          for (;;) {
            const r = await gw.call("GET", `/v1/calls/${c.callId}`);
            expect(r.status).not.toBe(500);
            const st = (await r.json()) as { state?: string; endReason?: string };
            if (st.state === "ended") {
              expect(st.endReason).toBe("transceiver_failed");
              break;
            }
            await new Promise((res) => setTimeout(res, 100));
          }
          told.push(Date.now() - killedAt);
          await c.resume();
          const resumedAt = Date.now();
          await until(() => c.heardAt > resumedAt, `caller ${c.tag} hears its echo again`);
          gaps.push(c.heardAt - lastHeard);
        }),
      );
      expect(told.length).toBe(dead.length);
      for (const c of dead) expect(c.transceiver).not.toBe(victimId);

      // The sibling's callers still hear themselves, and their calls were never touched.
      const checkAt = Date.now();
      await until(() => alive.every((c) => c.heardAt > checkAt), "the sibling's callers still hear");
      for (const c of alive) {
        const st = (await (await gw.call("GET", `/v1/calls/${c.callId}`)).json()) as { state: string };
        expect(st.state).toBe("connected");
      }

      // The backend saw each resumed call again under the same call id, marked resumed.
      const started = agent.events.filter(
        (e): e is { type: string; call_id: string; resumed: boolean } =>
          (e as { type?: string }).type === "session.started",
      );
      for (const c of dead) {
        const seen = started.filter((e) => e.call_id === c.callId);
        expect(seen.map((e) => e.resumed)).toEqual([false, true]);
      }
      // …and as the same conversation: the echo agent gave each one back its kept state.
      expect(agent.kept.restored).toBe(dead.length);
      console.log(
        JSON.stringify({
          measured: "chaos kill -9, 1 of 2 transceivers",
          calls: CALLS,
          resumed: dead.length,
          toldMs: { median: median(told), worst: Math.max(...told) },
          mediaGapMs: { median: median(gaps), worst: Math.max(...gaps) },
          siblingWorstGapMs: Math.max(...alive.map((c) => c.maxGapMs)),
        }),
      );
    } finally {
      clearInterval(pump);
    }
  });
});
