// What unchanged OpenAI Realtime clients need from the edge, in real workerd: preflights that
// pass the official SDKs' own headers (and nothing that would matter to authentication), the
// headers clients read exposed, client secrets that always carry the effective session, and SIP
// call control (accept / reject / refer) refused with a Realtime-shaped 501.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeCluster } from "./fake-cluster.ts";
import { CLUSTERS, topologyFor } from "./fixtures.ts";
import { type Edge, makeSecrets, startEdge } from "./harness.ts";

const secrets = makeSecrets();
const clusters: FakeCluster[] = [];
let e: Edge;

beforeAll(async () => {
  for (const c of CLUSTERS) {
    const f = new FakeCluster(c.name, c.id, secrets.clusterSecret, secrets.callIdRing);
    await f.start();
    clusters.push(f);
  }
  e = await startEdge({
    topology: topologyFor(Object.fromEntries(clusters.map((f, i) => [CLUSTERS[i]!.name, f.url]))),
    bindings: { ...secrets.bindings, RATE_LIMIT_IP_LIMIT: "100000", RATE_LIMIT_KEY_LIMIT: "100000" },
  });
});
afterAll(async () => {
  await e?.dispose();
  for (const f of clusters) await f.stop();
});

const auth = { authorization: `Bearer ${secrets.apiKey}` };
const preflight = (path: string, requested: string, method = "POST") =>
  e.fetch(path, {
    method: "OPTIONS",
    headers: {
      origin: "http://127.0.0.1:5173",
      "access-control-request-method": method,
      "access-control-request-headers": requested,
    },
  });
const allowed = (res: Response) =>
  new Set(
    (res.headers.get("access-control-allow-headers") ?? "")
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );

describe("CORS for the official SDKs", () => {
  it("allows what openai (x-stainless-*) and @openai/agents-realtime (X-OpenAI-Agents-SDK) send", async () => {
    // The headers openai 7.x sends from a browser, and the Agents SDK's WebRTC offer.
    const stainless =
      "authorization,content-type,openai-beta,openai-organization,openai-project,x-stainless-arch," +
      "x-stainless-lang,x-stainless-os,x-stainless-package-version,x-stainless-retry-count," +
      "x-stainless-runtime,x-stainless-runtime-version,x-stainless-timeout,idempotency-key";
    for (const path of ["/v1/realtime/client_secrets", "/v1/realtime/calls"]) {
      const res = await preflight(path, stainless);
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const got = allowed(res);
      for (const h of stainless.split(",")) expect(got, `${path} ${h}`).toContain(h);
    }
    const agents = await preflight("/v1/realtime/calls", "Authorization, Content-Type, X-OpenAI-Agents-SDK");
    expect(allowed(agents)).toContain("x-openai-agents-sdk");
    expect(agents.headers.get("vary")).toMatch(/access-control-request-headers/i);
  });

  it("leaves out headers a page has no business sending, and never allows credentials", async () => {
    const res = await preflight(
      "/v1/realtime/calls",
      "cookie, x-ok, host, proxy-authorization, x-bad_name, x-",
    );
    const got = allowed(res);
    expect(got).toContain("x-ok");
    for (const h of ["cookie", "host", "proxy-authorization", "x-bad_name", "x-"])
      expect(got).not.toContain(h);
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    // A flood of names gets only the base set.
    const many = Array.from({ length: 100 }, (_, i) => `x-h${i}`).join(",");
    expect([...allowed(await preflight("/v1/realtime/calls", many))].sort()).toEqual([
      "authorization",
      "content-type",
      "if-match",
    ]);
  });

  it("allowing a header grants nothing: a request with SDK headers and no key is still 401", async () => {
    const res = await e.fetch("/v1/realtime/client_secrets", {
      method: "POST",
      headers: { origin: "http://127.0.0.1:5173", "x-stainless-lang": "js", "x-openai-agents-sdk": "1" },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("exposes what clients read, rate-limit headers included", async () => {
    const res = await e.fetch("/v1/realtime/client_secrets", {
      method: "POST",
      headers: { ...auth, origin: "https://app.example" },
    });
    const expose = res.headers.get("access-control-expose-headers")!.toLowerCase();
    for (const h of [
      "location",
      "etag",
      "server-timing",
      "x-relay-cluster",
      "retry-after",
      "ratelimit-remaining",
    ])
      expect(expose).toContain(h);
  });

  it("preflights for accept / reject / refer and hangup name POST", async () => {
    for (const a of ["accept", "reject", "refer", "hangup"]) {
      const res = await preflight(`/v1/realtime/calls/rtc_x/${a}`, "authorization");
      expect(res.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    }
  });
});

describe("client secrets carry the effective session", () => {
  const mint = (body?: unknown) =>
    e.fetch("/v1/realtime/client_secrets", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it("without a session: the defaults, a sess_ id, and expires_at as the secret's", async () => {
    const res = await mint();
    expect(res.status).toBe(200);
    const j = (await res.json()) as { value: string; expires_at: number; session: Record<string, unknown> };
    expect(j.value).toMatch(/^ek_/);
    expect(j.session).toMatchObject({
      type: "realtime",
      object: "realtime.session",
      output_modalities: ["audio"],
      audio: { input: { turn_detection: { type: "server_vad" } }, output: { voice: "alloy" } },
    });
    expect(j.session.id).toMatch(/^sess_/);
    expect(j.session.expires_at).toBe(j.expires_at);
  });

  it("with a session: merged over the defaults; identity fields stay; transcription is refused", async () => {
    const j = (await (
      await mint({
        session: { type: "realtime", instructions: "hi", audio: { output: { voice: "verse" } }, id: "x" },
      })
    ).json()) as {
      session: {
        instructions: string;
        id: string;
        audio: { output: unknown; input: { turn_detection: { type: string } } };
      };
    };
    expect(j.session.instructions).toBe("hi");
    expect(j.session.audio.output).toMatchObject({ voice: "verse", speed: 1 });
    expect(j.session.audio.input.turn_detection.type).toBe("server_vad");
    expect(j.session.id).toMatch(/^sess_/);
    const t = await mint({ session: { type: "transcription" } });
    expect(t.status).toBe(400);
    expect(((await t.json()) as { error: { code: string } }).error.code).toBe("unsupported_session_type");
  });
});

describe("SIP call control", () => {
  it("accept, reject and refer answer 501 sip_not_supported (after authentication)", async () => {
    for (const a of ["accept", "reject", "refer"]) {
      const res = await e.fetch(`/v1/realtime/calls/rtc_anything/${a}`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ type: "realtime", target_uri: "tel:+1" }),
      });
      expect(res.status, a).toBe(501);
      const j = (await res.json()) as { error: Record<string, unknown> };
      expect(j.error).toMatchObject({
        type: "invalid_request_error",
        code: "sip_not_supported",
        param: null,
      });
      expect(j.error.message).toMatch(/SIP/);
      const anon = await e.fetch(`/v1/realtime/calls/rtc_anything/${a}`, { method: "POST" });
      expect(anon.status).toBe(401);
      const get = await e.fetch(`/v1/realtime/calls/rtc_anything/${a}`, { method: "GET", headers: auth });
      expect([get.status, get.headers.get("allow")]).toEqual([405, "POST, OPTIONS"]);
    }
  });
});

describe("the example offer for curl", () => {
  it("is docs/examples/offer.sdp with fresh ICE credentials and session id each time", async () => {
    const get = async () => {
      const res = await e.fetch("/demo/offer.sdp");
      expect(res.headers.get("content-type")).toBe("application/sdp");
      return res.text();
    };
    const [a, b] = [await get(), await get()];
    const ufrag = (s: string) => /a=ice-ufrag:(\S+)/.exec(s)![1];
    expect(ufrag(a)).not.toBe(ufrag(b));
    expect(/a=ice-pwd:(\S+)/.exec(a)![1]).toHaveLength(24);
    const file = readFileSync(join(import.meta.dirname, "../../docs/examples/offer.sdp"), "utf8");
    const shape = (s: string) =>
      s
        .replace(/a=ice-ufrag:\S+/g, "U")
        .replace(/a=ice-pwd:\S+/g, "P")
        .replace(/^o=- \d+/m, "O");
    expect(shape(a)).toBe(shape(file));
  });
});
