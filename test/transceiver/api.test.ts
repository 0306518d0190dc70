// The cluster signalling API: signing (401 paths), bad input (precise 4xx, other sessions
// untouched), WHIP PATCH semantics, capacity (503 + Retry-After), WebSocket signalling, health.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { nodeMac } from "../../regional/common/hmac.ts";
import { mintCallId } from "../../shared/callid/callid.ts";
import { importSigningKeys, signRequest } from "../../shared/signing/request.ts";
import { keyringOf } from "../support/signed-call.ts";
import { createTestClient } from "./helpers/client.ts";
import { type Harness, randomKeyring, sleep, startHarness, until } from "./helpers/harness.ts";

let h: Harness;
let offer: string;
beforeAll(async () => {
  h = await startHarness({ capacity: 3 });
  const c = createTestClient();
  offer = await c.createOffer();
  await c.close();
});
afterAll(async () => {
  await h?.close();
});

const errorOf = async (r: Response) =>
  ((await r.json()) as { error: { type: string; code: string; message: string } }).error;

async function post(body: unknown) {
  return h.call("POST", "/v1/calls", body as object);
}

describe("request signing", () => {
  it("refuses unsigned, mis-signed, expired and replayed requests with 401", async () => {
    const url = `${h.t.httpUrl}/v1/calls`;
    const body = JSON.stringify({ sdp: offer });
    const plain = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(plain.status).toBe(401);
    expect((await errorOf(plain)).message).toMatch(/not signed/);

    const wrongKey = await importSigningKeys(keyringOf(new Uint8Array(randomBytes(32))));
    const bad = await signRequest(
      wrongKey,
      {
        method: "POST",
        pathAndQuery: "/v1/calls",
        body: new TextEncoder().encode(body),
        target: "transceiver:1/1",
      },
      Date.now(),
      "n".repeat(22),
    );
    const r1 = await fetch(url, {
      method: "POST",
      headers: { ...bad, "content-type": "application/json" },
      body,
    });
    expect(r1.status).toBe(401);
    expect((await errorOf(r1)).message).toMatch(/does not match/);

    const key = await importSigningKeys(keyringOf(h.secret));
    const old = await signRequest(
      key,
      {
        method: "POST",
        pathAndQuery: "/v1/calls",
        body: new TextEncoder().encode(body),
        target: "transceiver:1/1",
      },
      Date.now() - 120_000,
      "o".repeat(22),
    );
    const r2 = await fetch(url, {
      method: "POST",
      headers: { ...old, "content-type": "application/json" },
      body,
    });
    expect(r2.status).toBe(401);
    expect((await errorOf(r2)).message).toMatch(/replay window/);

    // A signature over another body does not cover this one.
    const other = await signRequest(
      key,
      {
        method: "POST",
        pathAndQuery: "/v1/calls",
        body: new TextEncoder().encode("{}"),
        target: "transceiver:1/1",
      },
      Date.now(),
      "p".repeat(22),
    );
    const r3 = await fetch(url, {
      method: "POST",
      headers: { ...other, "content-type": "application/json" },
      body,
    });
    expect(r3.status).toBe(401);

    // The same signed request twice: the second is a replay.
    const path = "/v1/calls/rtc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    const once = await signRequest(
      key,
      { method: "GET", pathAndQuery: path, body: new Uint8Array(0), target: "transceiver:1/1" },
      Date.now(),
      randomBytes(16).toString("base64url"),
    );
    const g1 = await fetch(h.t.httpUrl + path, { headers: once });
    expect(g1.status).not.toBe(401);
    const g2 = await fetch(h.t.httpUrl + path, { headers: once });
    expect(g2.status).toBe(401);
    expect((await errorOf(g2)).message).toMatch(/replay/);
  });

  it("refuses an unsigned WebSocket upgrade", async () => {
    const ws = new WebSocket(`${h.t.httpUrl.replace("http", "ws")}/v1/ws`);
    const status = await new Promise<number>((resolve) => {
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => resolve(101));
      ws.on("error", () => {});
    });
    expect(status).toBe(401);
  });
});

describe("bad input gets a precise 4xx and leaves other sessions alone", () => {
  it("answers each bad offer with its own code", async () => {
    const { client } = await h.connectClient();
    const audioOnly = offer
      .replace(/m=application[\s\S]*$/, "")
      .replace(/a=group:BUNDLE 0 1/, "a=group:BUNDLE 0");
    const cases: [unknown, number, string, RegExp?][] = [
      [{ sdp: "hello" }, 400, "sdp_malformed", /v=0/],
      [{ sdp: 42 }, 400, "body_malformed", /sdp/],
      [{ sdp: offer.replace(/a=ice-ufrag:.*\r\n/g, "") }, 400, "sdp_malformed", /ice-ufrag/],
      [{ sdp: offer.replace(/a=fingerprint:.*\r\n/g, "") }, 400, "sdp_malformed", /fingerprint/],
      [
        { sdp: offer.replace(/m=audio[\s\S]*?(?=m=application)/, "").replace("BUNDLE 0 1", "BUNDLE 1") },
        422,
        "no_audio",
      ],
      [
        {
          sdp: `${audioOnly
            .replace(/m=audio 9 UDP\/TLS\/RTP\/SAVPF .*/, "m=audio 9 UDP/TLS/RTP/SAVPF 9")
            .replace(/a=rtpmap:.*\r\n|a=fmtp:.*\r\n/g, "")}a=rtpmap:9 G722/8000\r\n`,
        },
        422,
        "no_acceptable_codec",
        /G722/,
      ],
      [{ sdp: offer.replace(/a=group:BUNDLE.*\r\n/, "") }, 422, "bundle_required"],
      [{ sdp: offer.replace(/a=rtcp-mux\r\n/g, "") }, 422, "rtcp_mux_required"],
      [{ sdp: `${offer}a=x-pad:${"x".repeat(70_000)}\r\n` }, 413, "sdp_too_large", /65536/],
      [{ sdp: offer, client: { continent: 7 } }, 400, "body_malformed", /client\.continent/],
      [{ sdp: offer, ingress: { vip: "nowhere" } }, 400, "body_malformed", /ingress\.vip/],
      [{ sdp: offer, session: [1] }, 400, "body_malformed", /session/],
    ];
    for (const [body, status, code, msg] of cases) {
      const r = await post(body);
      const e = await errorOf(r);
      expect({ status: r.status, code: e.code }).toEqual({ status, code });
      if (msg) expect(e.message).toMatch(msg);
    }
    const notJson = await h.call("POST", "/v1/calls", "{nope");
    expect([notJson.status, (await errorOf(notJson)).code]).toEqual([400, "body_malformed"]);
    const wrongType = await h.call("POST", "/v1/calls", JSON.stringify({ sdp: offer }), {
      "content-type": "application/sdp",
    });
    expect([wrongType.status, (await errorOf(wrongType)).code]).toEqual([415, "unsupported_media_type"]);
    const huge = await h.call("POST", "/v1/calls", JSON.stringify({ sdp: "v=0", pad: "x".repeat(300_000) }));
    expect(huge.status).toBe(413);
    // The connected client still gets its echo.
    client.dc!.send(JSON.stringify({ type: "ping" }));
    await until(() => client.messages.some((m) => m.includes("pong")), "pong after bad input");
  });

  it("strips mDNS candidates and end-of-candidates before werift sees them", async () => {
    const c = createTestClient();
    const o = await c.createOffer();
    const withMdns = o.replace(
      /(a=candidate:.*\r\n)/,
      "$1a=candidate:1 1 udp 2122260223 6b4f2a1e-1111-2222-3333-444455556666.local 54321 typ host generation 0\r\n",
    );
    const r = await post({ sdp: withMdns });
    expect(r.status).toBe(201);
    await c.close();
    const { callId } = (await r.json()) as { callId: string };
    // werift was never given the .local candidate (it would open a multicast socket and wait).
    const remote = h.t.calls.get(callId)!.pc.remoteDescription!.sdp;
    expect(withMdns).toContain(".local");
    expect(remote).not.toContain(".local");
    expect(remote).not.toContain("a=end-of-candidates");
    expect((await h.call("DELETE", `/v1/calls/${callId}`)).status).toBe(204);
  });

  it("distinguishes malformed, forged, unknown, ended and misrouted call ids", async () => {
    const malformed = await h.call("GET", "/v1/calls/not-a-call");
    expect([malformed.status, (await errorOf(malformed)).code]).toEqual([400, "call_id_malformed"]);
    const forgedId = mintCallId(1, 1, new Uint8Array(randomBytes(15)), nodeMac(randomKeyring(2)));
    const forged = await h.call("GET", `/v1/calls/${forgedId}`);
    expect([forged.status, (await errorOf(forged)).code]).toEqual([404, "call_id_unknown"]);
    const oldVersion = await h.call("GET", `/v1/calls/rtc_${"A".repeat(48)}`);
    expect([oldVersion.status, (await errorOf(oldVersion)).code]).toEqual([400, "call_id_malformed"]);
    const r = await post({ sdp: offer.replace(/a=ice-ufrag:(\S+)/g, "a=ice-ufrag:zzzz") });
    expect(r.status).toBe(201);
    const { callId } = (await r.json()) as { callId: string };
    const dup = await post({ sdp: offer.replace(/a=ice-ufrag:(\S+)/g, "a=ice-ufrag:zzzz") });
    expect([dup.status, (await errorOf(dup)).code]).toEqual([409, "duplicate_offer"]);
    expect((await h.call("DELETE", `/v1/calls/${callId}`)).status).toBe(204);
    const again = await h.call("DELETE", `/v1/calls/${callId}`);
    expect([again.status, (await errorOf(again)).code]).toEqual([404, "call_ended"]);
    const st = await h.call("GET", `/v1/calls/${callId}`);
    expect(st.status).toBe(200);
    expect(((await st.json()) as { state: string }).state).toBe("ended");
    // A genuine call id of another transceiver (same keys) is misrouted.
    const other = await startHarness(
      { transceiverId: 2, callIdKeys: h.t.config.callIdKeys, clusterSecret: h.secret },
      { agent: h.agent },
    );
    try {
      const r2 = await other.call("POST", "/v1/calls", {
        sdp: offer.replace(/a=ice-ufrag:(\S+)/g, "a=ice-ufrag:yyyy"),
      });
      expect(r2.status).toBe(201);
      const { callId: foreign } = (await r2.json()) as { callId: string };
      const mis = await h.call("GET", `/v1/calls/${foreign}`);
      expect([mis.status, (await errorOf(mis)).code]).toEqual([404, "wrong_transceiver"]);
    } finally {
      await other.close();
    }
  });
});

describe("WHIP PATCH", () => {
  it("needs If-Match (428), a current ETag (412), the sdpfrag type (415); trickle 204; restart needs *", async () => {
    const r = await post({ sdp: offer.replace(/a=ice-ufrag:(\S+)/g, "a=ice-ufrag:wwww") });
    const { callId, etag } = (await r.json()) as { callId: string; etag: string };
    expect(r.headers.get("etag")).toBe(`"${etag}"`);
    expect(r.headers.get("location")).toBe(`/v1/calls/${callId}`);
    const path = `/v1/calls/${callId}`;
    const frag = "a=candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host\r\na=end-of-candidates\r\n";
    const type = { "content-type": "application/trickle-ice-sdpfrag" };
    const noIf = await h.call("PATCH", path, frag, type);
    expect([noIf.status, (await errorOf(noIf)).code]).toEqual([428, "if_match_required"]);
    const stale = await h.call("PATCH", path, frag, { ...type, "if-match": '"nope"' });
    expect([stale.status, (await errorOf(stale)).code]).toEqual([412, "etag_mismatch"]);
    const wrongType = await h.call("PATCH", path, frag, {
      "content-type": "application/sdp",
      "if-match": `"${etag}"`,
    });
    expect(wrongType.status).toBe(415);
    const trickle = await h.call("PATCH", path, frag, { ...type, "if-match": `"${etag}"` });
    expect(trickle.status).toBe(204);
    const restartNoStar = await h.call(
      "PATCH",
      path,
      "a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n",
      {
        ...type,
        "if-match": `"${etag}"`,
      },
    );
    expect([restartNoStar.status, (await errorOf(restartNoStar)).code]).toEqual([422, "unsupported_patch"]);
    const starNoCreds = await h.call("PATCH", path, frag, { ...type, "if-match": "*" });
    expect([starNoCreds.status, (await errorOf(starNoCreds)).code]).toEqual([422, "unsupported_patch"]);
    const garbage = await h.call("PATCH", path, "not sdp", { ...type, "if-match": "*" });
    expect([garbage.status, (await errorOf(garbage)).code]).toEqual([400, "sdpfrag_malformed"]);
    expect((await h.call("DELETE", path)).status).toBe(204);
  });
});

describe("capacity", () => {
  it("answers 503 with Retry-After when full, and takes sessions again after a hang-up", async () => {
    const ids: string[] = [];
    for (let i = 0; h.t.load < h.t.config.capacity; i++) {
      const r = await post({ sdp: offer.replace(/a=ice-ufrag:(\S+)/g, `a=ice-ufrag:cap${i}`) });
      expect(r.status).toBe(201);
      ids.push(((await r.json()) as { callId: string }).callId);
    }
    const full = await post({ sdp: offer.replace(/a=ice-ufrag:(\S+)/g, "a=ice-ufrag:full") });
    expect(full.status).toBe(503);
    expect(full.headers.get("retry-after")).toBe("2");
    expect((await errorOf(full)).code).toBe("at_capacity");
    const ready = await fetch(`${h.t.httpUrl}/readyz`);
    expect(ready.status).toBe(503);
    const health = (await (await fetch(`${h.t.httpUrl}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: "ok", clusterId: 1, load: 3, capacity: 3, transceivers: 1 });
    for (const id of ids) await h.call("DELETE", `/v1/calls/${id}`);
    const ok = await post({ sdp: offer.replace(/a=ice-ufrag:(\S+)/g, "a=ice-ufrag:back") });
    expect(ok.status).toBe(201);
    await h.call("DELETE", `/v1/calls/${((await ok.json()) as { callId: string }).callId}`);
    const metrics = await (await fetch(`${h.t.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/gr_transceiver_calls_failed_total\{cluster="1",reason="at_capacity"\} [1-9]/);
  });
});

describe("WebSocket signalling", () => {
  it("offer → answer, events both ways, hangup → ended", async () => {
    const path = "/v1/ws";
    const ws = new WebSocket(`${h.t.httpUrl.replace("http", "ws")}${path}`, {
      headers: await h.signedHeaders("GET", path),
    });
    const msgs: Record<string, unknown>[] = [];
    ws.on("message", (d) => msgs.push(JSON.parse(d.toString()) as Record<string, unknown>));
    await new Promise((r, j) => {
      ws.once("open", r);
      ws.once("error", j);
    });
    // A refused offer can be corrected on the same socket.
    ws.send(JSON.stringify({ type: "offer", sdp: "v=0\r\nnot an offer" }));
    await until(() => msgs.length > 0, "error for a bad offer");
    expect(msgs.shift()).toMatchObject({ type: "error", error: { code: "sdp_malformed" } });
    const client = createTestClient();
    ws.send(
      JSON.stringify({
        type: "offer",
        sdp: await client.createOffer(),
        client: { continent: "NA" },
        ingress: { vip: `${h.relay.vip.host}:${h.relay.vip.port}` },
      }),
    );
    await until(() => msgs.length > 0, "answer");
    const answer = msgs[0] as { type: string; sdp: string; callId: string; etag: string };
    expect(answer.type).toBe("answer");
    expect(answer.callId).toMatch(/^rtc_/);
    await client.setAnswer(answer.sdp);
    await client.connected();
    ws.send(JSON.stringify({ type: "event", event: { type: "ping" } }));
    await until(
      () => msgs.some((m) => m.type === "event" && (m.event as { type: string }).type === "pong"),
      "pong on ws",
    );
    ws.send(JSON.stringify({ type: "bogus" }));
    await until(() => msgs.some((m) => m.type === "error"), "error message");
    ws.send(JSON.stringify({ type: "hangup" }));
    await until(() => msgs.some((m) => m.type === "ended"), "ended");
    expect(msgs.find((m) => m.type === "ended")).toEqual({ type: "ended", reason: "hangup" });
    await client.close();
    await sleep(10);
  });
});

describe("routing on Hono (the node:http adapter)", () => {
  it("names the wrong method (405 + Allow), an unknown route (404), and a path that is no call id (400)", async () => {
    const get = await h.call("GET", "/v1/calls");
    expect([get.status, get.headers.get("allow"), (await errorOf(get)).code]).toEqual([
      405,
      "GET, POST, PATCH, DELETE",
      "method_not_allowed",
    ]);
    const unknown = await fetch(`${h.t.httpUrl}/v2/anything`);
    expect([unknown.status, (await errorOf(unknown)).code]).toEqual([404, "not_found"]);
    for (const path of ["/v1/calls/a/b", "/v1/calls/", `/v1/calls/${"x".repeat(129)}`]) {
      const r = await h.call("GET", path);
      expect([path, r.status, (await errorOf(r)).code]).toEqual([path, 400, "call_id_malformed"]);
    }
    const metrics = await fetch(`${h.t.httpUrl}/metrics`);
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await metrics.text()).toContain("gr_transceiver_drops_total");
  });

  it("refuses a chunked body over the limit (no content-length to trust) with 413", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (sent++ < 8) ctl.enqueue(chunk);
        else ctl.close();
      },
    });
    const r = await fetch(`${h.t.httpUrl}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect([r.status, (await errorOf(r)).code]).toEqual([413, "body_too_large"]);
  });

  it("refuses an upgrade of a path that has no WebSocket with 404 and a JSON body", async () => {
    const ws = new WebSocket(`${h.t.httpUrl.replace("http", "ws")}/v1/nothing`);
    const got = await new Promise<{ status: number; body: string }>((resolve) => {
      ws.on("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on("open", () => resolve({ status: 101, body: "" }));
      ws.on("error", () => {});
    });
    expect(got.status).toBe(404);
    expect(JSON.parse(got.body)).toMatchObject({ error: { code: "not_found" } });
  });
});
