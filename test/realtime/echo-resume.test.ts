// The echo agent over its WebSocket keeps a call's conversation when its transceiver vanishes
// (the socket drops without session.ended) and gives it back to the sibling that reattaches with
// `resumed: true`; a hangup keeps nothing; the store holds at most its count, for at most its age
// (the agent's clock is the test's). The test plays the transceivers. A real kill -9 of a
// transceiver under a call is test/system/resume-conversation.test.ts.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import { until } from "../transceiver/helpers/harness.ts";

type Ev = Record<string, unknown> & { type: string };

let agent: EchoAgent;
let clock = 0;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  agent = await startEchoAgent({ keep: { maxCalls: 2, maxAgeMs: 60_000 }, now: () => clock });
});
afterAll(async () => {
  for (const s of sockets) s.terminate();
  await agent?.close();
});

/** A transceiver's backend connection for `callId`; resolves with session.created. */
async function attach(callId: string, resumed: boolean) {
  const ws = new WebSocket(agent.url, { headers: { "x-gr-call-id": callId } });
  sockets.push(ws);
  const got: Ev[] = [];
  ws.on("message", (d, binary) => {
    if (!binary) got.push(JSON.parse(String(d)) as Ev);
  });
  await new Promise((r, j) => ws.once("open", r).once("error", j));
  const send = (o: unknown) => ws.send(JSON.stringify(o));
  send({ type: "session.started", call_id: callId, session: { instructions: "start" }, resumed });
  const next = async (type: string): Promise<Ev> => {
    await until(() => got.some((e) => e.type === type), type);
    const i = got.findIndex((e) => e.type === type);
    return got.splice(0, i + 1).at(-1)!;
  };
  const created = await next("session.created");
  /** As kill -9 leaves it: the socket is gone, no close frame, no session.ended. */
  const vanish = async () => {
    const before = agent.kept.kept + agent.kept.evictedFull;
    ws.terminate();
    await until(() => agent.kept.kept + agent.kept.evictedFull > before, "the agent keeps the call");
  };
  /** As the transceiver ends a call: session.ended, then a normal close. */
  const hangUp = async () => {
    send({ type: "session.ended", call_id: callId, reason: "hangup" });
    ws.close();
    await new Promise((r) => ws.once("close", r));
  };
  return { ws, send, next, created, vanish, hangUp };
}

const userItem = (id: string, text: string) => ({
  type: "conversation.item.create",
  item: { id, type: "message", role: "user", content: [{ type: "input_text", text }] },
});

describe("echo agent: a resumed call keeps its conversation", { timeout: 30_000 }, () => {
  it("items and the session from before the transceiver vanished are there after the resume", async () => {
    const a = await attach("rtc_keep1", false);
    expect(a.created).not.toHaveProperty("resumed");
    a.send({ type: "session.update", session: { instructions: "updated" } });
    await a.next("session.updated");
    a.send(userItem("u_before", "said before the crash"));
    await a.next("conversation.item.done");
    a.send({ type: "response.create" });
    const firstDone = await a.next("response.done");
    await a.vanish();

    const b = await attach("rtc_keep1", true);
    expect(b.created).toMatchObject({
      resumed: true,
      item_count: 2,
      response_count: 1,
      session: { id: (a.created.session as { id: string }).id, instructions: "updated" },
    });
    b.send({ type: "conversation.item.retrieve", item_id: "u_before" });
    expect(await b.next("conversation.item.retrieved")).toMatchObject({ item: { id: "u_before" } });
    b.send({ type: "response.create" });
    const done = await b.next("response.done");
    expect(done.response).toMatchObject({
      conversation_id: (firstDone.response as { conversation_id: string }).conversation_id,
      output: [{ content: [{ transcript: "said before the crash" }] }],
    });
    // A hangup ends the conversation: the next resume finds nothing.
    await b.hangUp();
    const c = await attach("rtc_keep1", true);
    expect(c.created).toMatchObject({ resumed: false, item_count: 0, session: { instructions: "start" } });
    await c.hangUp();
    expect(agent.kept.kept).toBe(0);
  });

  it("a drain move: the sibling attaches first and takes the conversation; the old connection's hangup ends nothing", async () => {
    const old = await attach("rtc_move", false);
    old.send(userItem("u_moved", "moved along"));
    await old.next("conversation.item.done");
    const moved = await attach("rtc_move", true);
    expect(moved.created).toMatchObject({ resumed: true, item_count: 1 });
    // As docs/backend-protocol.md says: then session.ended (hangup) on the old connection.
    await old.hangUp();
    moved.send({ type: "conversation.item.retrieve", item_id: "u_moved" });
    expect(await moved.next("conversation.item.retrieved")).toMatchObject({ item: { id: "u_moved" } });
    // The sibling vanishes in turn: the conversation is still kept for the next resume.
    await moved.vanish();
    const third = await attach("rtc_move", true);
    expect(third.created).toMatchObject({ resumed: true, item_count: 1 });
    await third.hangUp();
    expect(agent.kept.kept).toBe(0);
  });

  it("holds at most maxCalls, oldest out first, each for at most maxAgeMs", async () => {
    const evicted = agent.kept.evictedFull;
    for (const id of ["rtc_b1", "rtc_b2", "rtc_b3"]) {
      const x = await attach(id, false);
      x.send(userItem(`i_${id}`, id));
      await x.next("conversation.item.done");
      await x.vanish();
    }
    expect(agent.kept.kept).toBe(2);
    expect(agent.kept.evictedFull).toBe(evicted + 1);
    expect((await attach("rtc_b1", true)).created).toMatchObject({ resumed: false });
    expect((await attach("rtc_b3", true)).created).toMatchObject({ resumed: true, item_count: 1 });
    clock += 60_000;
    expect((await attach("rtc_b2", true)).created).toMatchObject({ resumed: false });
    expect(agent.kept.kept).toBe(0);
  });
});

describe("echo agent process: keep limits from the environment", () => {
  it("refuses a bad ECHO_KEEP_CALLS or ECHO_KEEP_MS, naming it", async () => {
    const root = join(import.meta.dirname, "../..");
    const child = spawn(join(root, "node_modules/.bin/node"), [join(root, "regional/echo-agent/main.ts")], {
      env: {
        PATH: process.env.PATH,
        ECHO_AGENT_LISTEN: "127.0.0.1:0",
        ECHO_KEEP_CALLS: "lots",
        ECHO_KEEP_MS: "5",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const code = await new Promise((r) => child.once("exit", r));
    expect(code).toBe(2);
    expect(out).toContain("ECHO_KEEP_CALLS: must be an integer 0-100000");
    expect(out).toContain("ECHO_KEEP_MS: must be an integer 1000-86400000");
  });
});
