// The official `openai` package (pinned) in Node against the real edge (workerd) in front of the
// real cluster gateway and transceiver, with the echo backend: client secrets, calls.create with
// SDP and with multipart + session, sideband control over /v1/realtime?call_id=, hang-up, and the
// SIP-only calls (accept / reject / refer) refused with 501; and the curl line `npm start` prints. Only the base URL differs from code
// written against OpenAI. The SDK insists on wss:// for the sideband, so a second edge (stateless,
// same bindings) serves HTTPS with a self-signed certificate for it.
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import OpenAI, { APIError } from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { Gateway } from "../../regional/gateway/gateway.ts";
import { MAX_SIDEBAND_PER_CALL } from "../../regional/transceiver/sideband.ts";
import { curlExample } from "../../scripts/lib/curl-example.ts";
import { CITIES, topologyFor } from "../edge/fixtures.ts";
import { type Edge, makeSecrets, startEdge } from "../edge/harness.ts";
import { keyringOf } from "../support/signed-call.ts";
import { createTestClient, type TestClient } from "../transceiver/helpers/client.ts";
import { type Harness, quietLog, startHarness, until } from "../transceiver/helpers/harness.ts";

const secrets = makeSecrets();
let h: Harness;
let edge: Edge;
let edgeTls: Edge;
let gw: Gateway;
const clients: TestClient[] = [];
const sockets: { close(): void }[] = [];

beforeAll(async () => {
  h = await startHarness({
    clusterId: 1,
    callIdKeys: secrets.callIdRing,
    clusterSecret: secrets.clusterSecret,
  });
  gw = await Gateway.start(
    {
      clusterId: 1,
      http: { host: "127.0.0.1", port: 0, ipv6: false },
      clusterKeys: keyringOf(secrets.clusterSecret),
      transceivers: new Map([[1, h.t.httpUrl]]),
      membership: undefined,
      pollMs: 1000,
      staleMs: 10_000,
      replayWindowMs: 30_000,
      upstreamTimeoutMs: 5000,
    },
    quietLog,
  );
  const o = {
    topology: topologyFor({ fra: gw.url }, {}, `${h.relay.vip.host}:${h.relay.vip.port}`),
    bindings: { ...secrets.bindings, GR_LOCAL_DEV: "true" },
  };
  [edge, edgeTls] = await Promise.all([startEdge(o), startEdge({ ...o, https: true })]);
});
afterAll(async () => {
  for (const s of sockets) s.close();
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all([edge?.dispose(), edgeTls?.dispose()]);
  await gw?.stop();
  await h?.close();
});

/** Miniflare reads request.cf from this header: every call is steered from Frankfurt. */
const cfHeader = { "MF-CF-Blob": JSON.stringify({ ...CITIES.frankfurt, clientAcceptEncoding: "" }) };
const openai = (apiKey = secrets.apiKey, base = edge) =>
  new OpenAI({ apiKey, baseURL: new URL("/v1", base.url).href, defaultHeaders: cfHeader, maxRetries: 0 });
const types = (events: string[]) => events.map((m) => (JSON.parse(m) as { type: string }).type);

async function connectCall(api: OpenAI, session?: Record<string, unknown>) {
  const client = createTestClient();
  clients.push(client);
  const sdp = await client.createOffer();
  const res = await api.realtime.calls.create(
    session ? { sdp, session: { type: "realtime", ...session } } : { sdp },
  );
  expect(res.status).toBe(201);
  const callId = res.headers.get("location")!.split("/").pop()!;
  expect(callId).toMatch(/^rtc_/);
  await client.setAnswer(await res.text());
  await client.connected();
  await until(() => client.dc?.readyState === "open", "oai-events open");
  return { client, callId };
}

function sideband(callId: string) {
  const rt = new OpenAIRealtimeWS(
    { callID: callId, options: { rejectUnauthorized: false, headers: cfHeader } },
    openai(secrets.apiKey, edgeTls),
  );
  sockets.push(rt);
  const events: { type: string; [k: string]: unknown }[] = [];
  rt.on("event", (e) => events.push(e as unknown as (typeof events)[number]));
  const closed = new Promise<number>((r) => rt.socket.on("close", (code) => r(code)));
  const opened = new Promise<void>((resolve, reject) => {
    rt.socket.once("open", () => resolve());
    rt.socket.once("error", reject);
  });
  return { rt, events, closed, opened };
}

describe("openai (Node) against the edge", () => {
  it("client secrets carry the session; a secret makes a multipart call whose session the backend uses", async () => {
    const api = openai();
    const plain = await api.realtime.clientSecrets.create({});
    expect(plain.value).toMatch(/^ek_/);
    expect(plain.session).toMatchObject({ type: "realtime", object: "realtime.session" });
    const bound = await api.realtime.clientSecrets.create({
      session: { type: "realtime", instructions: "from the secret" },
    });
    expect(bound.session).toMatchObject({ instructions: "from the secret" });

    const { client } = await connectCall(openai(plain.value), { instructions: "multipart" });
    await until(() => types(client.messages).includes("session.created"), "session.created");
    const created = JSON.parse(client.messages.find((m) => m.includes('"session.created"'))!);
    expect(created.session.instructions).toBe("multipart");
    expect(created.event_id).toMatch(/^event_/);
    for (let i = 0; i < 20; i++) client.sendAudio(Buffer.from([9, i]), i, i * 960);
    await until(() => client.received.some((p) => p.payload[0] === 9), "echoed audio");
  });

  it("sideband: the server joins the call's event stream, sends client events, and is closed at hang-up", async () => {
    const api = openai();
    const { client, callId } = await connectCall(api);
    const sb = sideband(callId);
    await sb.opened;
    // A server-side session.update: answered on the sideband and on the browser's channel alike.
    sb.rt.send({ type: "session.update", session: { type: "realtime", instructions: "from the server" } });
    await until(() => sb.events.some((e) => e.type === "session.updated"), "session.updated on sideband");
    await until(() => types(client.messages).includes("session.updated"), "session.updated on oai-events");
    expect(sb.events.find((e) => e.type === "session.updated")!.session).toMatchObject({
      instructions: "from the server",
    });
    // The browser's events reach the backend; the sideband sees the answers.
    client.dc!.send(
      JSON.stringify({
        type: "conversation.item.create",
        item: { type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] },
      }),
    );
    await until(() => sb.events.some((e) => e.type === "conversation.item.done"), "item on sideband");
    sb.rt.send({ type: "response.create" });
    await until(() => sb.events.some((e) => e.type === "response.done"), "response.done");
    const done = sb.events.find((e) => e.type === "response.done")!.response as {
      output: { content: { transcript: string }[] }[];
    };
    expect(done.output[0]!.content[0]!.transcript).toBe("hello");
    expect(sb.events.every((e) => typeof e.event_id === "string")).toBe(true);

    await api.realtime.calls.hangup(callId);
    expect(await sb.closed).toBe(1000);
  });

  it("sideband is authenticated and bounded: API keys only, known calls only, a few per call", async () => {
    const { callId } = await connectCall(openai());
    const url = new URL(`/v1/realtime?call_id=${callId}`, edgeTls.url);
    url.protocol = "wss:";
    const attempt = (headers: Record<string, string>, u = url) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(u, { headers: { ...cfHeader, ...headers }, rejectUnauthorized: false });
        sockets.push(ws);
        ws.once("open", () => resolve(101));
        ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        ws.once("error", () => resolve(-1));
      });
    const key = { authorization: `Bearer ${secrets.apiKey}` };
    expect(await attempt({})).toBe(401);
    const secret = await openai().realtime.clientSecrets.create({});
    expect(await attempt({ authorization: `Bearer ${secret.value}` })).toBe(403);
    const forged = new URL(url);
    forged.searchParams.set("call_id", `rtc_${"A".repeat(48)}`);
    expect(await attempt(key, forged)).toBe(404);
    for (let i = 0; i < MAX_SIDEBAND_PER_CALL; i++) expect(await attempt(key)).toBe(101);
    expect(await attempt(key)).toBe(429);
  });

  it("sideband: junk is answered with Realtime errors, an oversized event closes it, an ended call is 404", async () => {
    const api = openai();
    const { callId } = await connectCall(api);
    const url = new URL(`/v1/realtime?call_id=${callId}`, edgeTls.url);
    url.protocol = "wss:";
    const open = async () => {
      const ws = new WebSocket(url, {
        headers: { ...cfHeader, authorization: `Bearer ${secrets.apiKey}` },
        rejectUnauthorized: false,
      });
      sockets.push(ws);
      const got: Record<string, unknown>[] = [];
      ws.on("message", (d) => got.push(JSON.parse(String(d)) as Record<string, unknown>));
      const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
      await new Promise((r, j) => {
        ws.once("open", r);
        ws.once("error", j);
      });
      return { ws, got, closed };
    };
    const a = await open();
    a.ws.send("not json");
    a.ws.send(JSON.stringify([{ type: "session.update" }]));
    a.ws.send(Buffer.from([1, 2, 3]));
    await until(() => a.got.length >= 3, "three errors");
    expect(a.got.map((m) => [m.type, (m.error as { code: string }).code])).toEqual([
      ["error", "invalid_event"],
      ["error", "invalid_event"],
      ["error", "binary_not_supported"],
    ]);
    // The call is unharmed: a good event still works.
    a.ws.send(JSON.stringify({ type: "session.update", session: { instructions: "still here" } }));
    await until(() => a.got.some((m) => m.type === "session.updated"), "session.updated");
    a.ws.send(JSON.stringify({ type: "session.update", session: { instructions: "x".repeat(300 * 1024) } }));
    expect(await a.closed).toBe(1009);
    await api.realtime.calls.hangup(callId);
    const late = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url, {
        headers: { ...cfHeader, authorization: `Bearer ${secrets.apiKey}` },
        rejectUnauthorized: false,
      });
      ws.once("open", () => resolve(101));
      ws.once("unexpected-response", (_q, res) => resolve(res.statusCode ?? 0));
      ws.once("error", () => resolve(-1));
    });
    expect(late).toBe(404);
  });

  it("accept, reject and refer (SIP at OpenAI) fail with a 501 APIError that says why", async () => {
    const api = openai();
    const callId = `rtc_${"B".repeat(48)}`;
    const calls = [
      () => api.realtime.calls.accept(callId, { type: "realtime" }),
      () => api.realtime.calls.reject(callId),
      () => api.realtime.calls.refer(callId, { target_uri: "tel:+14155550123" }),
    ];
    for (const call of calls) {
      const err = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(501);
      expect((err as APIError).code).toBe("sip_not_supported");
      expect((err as APIError).message).toMatch(/SIP/);
    }
  });
});

describe("the curl line npm start prints", () => {
  it("works pasted twice in a row, from any directory", async () => {
    const base = edge.url.href.replace(/\/$/, "");
    const line = curlExample(base, secrets.apiKey).join("\n");
    const run = () =>
      new Promise<string>((resolve, reject) =>
        execFile("bash", ["-c", line], { cwd: tmpdir(), timeout: 20_000 }, (err, stdout) =>
          err ? reject(err) : resolve(stdout),
        ),
      );
    const first = await run();
    const second = await run();
    for (const out of [first, second]) {
      expect(out.split("\r\n")[0]).toMatch(/^HTTP\/1\.1 201/);
      expect(out).toMatch(/\r\nlocation: \/v1\/realtime\/calls\/rtc_/i);
      expect(out).toContain("a=ice-ufrag:");
    }
  });
});
