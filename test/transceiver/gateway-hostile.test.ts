// The gateway's HTTP stack (Hono over the node:http adapter) under requests an attacker would
// send: unsigned or replayed, oversized, odd methods and paths, a garbage Host header, upgrades
// to the wrong place. Each gets a clear JSON error (never 500), and nothing reaches a transceiver.
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Gateway } from "../../regional/gateway/gateway.ts";
import { keyringOf, signedCaller } from "../support/signed-call.ts";
import { quietLog } from "./helpers/harness.ts";

const secret = new Uint8Array(randomBytes(32));
let g: Gateway;
const { call, signedHeaders } = signedCaller(() => g.url, secret, { clusterId: 1 });

beforeAll(async () => {
  g = await Gateway.start(
    {
      clusterId: 1,
      http: { host: "127.0.0.1", port: 0, ipv6: false },
      clusterKeys: keyringOf(secret),
      // A member that never answers: anything that got through would show as a 503 or a failure.
      transceivers: new Map([[1, "http://127.0.0.1:9"]]),
      membership: undefined,
      pollMs: 60_000,
      staleMs: 600_000,
      replayWindowMs: 30_000,
      upstreamTimeoutMs: 1000,
    },
    quietLog,
  );
});
afterAll(() => g?.stop());

const codeOf = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;

/** Raw HTTP/1.1 bytes in, the whole answer out (for what fetch will not send). */
function raw(text: string): Promise<string> {
  const u = new URL(g.url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => s.end(text));
    let out = "";
    s.on("data", (d) => {
      out += d.toString();
    });
    s.on("end", () => resolve(out));
    s.on("error", reject);
  });
}

describe("gateway under hostile requests", () => {
  it("unsigned, forged or replayed requests are 401 before anything else", async () => {
    expect((await fetch(`${g.url}/v1/calls`, { method: "POST", body: "{}" })).status).toBe(401);
    expect((await fetch(`${g.url}/v1/calls/rtc_x`, { method: "DELETE" })).status).toBe(401);
    const headers = await signedHeaders("GET", "/v1/calls/rtc_x");
    const first = await fetch(`${g.url}/v1/calls/rtc_x`, { headers });
    expect(first.status).toBe(400); // call_id_malformed, after the signature
    const replay = await fetch(`${g.url}/v1/calls/rtc_x`, { headers });
    expect(replay.status).toBe(401);
    expect(await codeOf(replay)).toBe("unauthorized");
    // Signed for one path, sent to another.
    const moved = await fetch(`${g.url}/v1/calls/rtc_y`, {
      headers: await signedHeaders("GET", "/v1/calls/rtc_x"),
    });
    expect(moved.status).toBe(401);
  });

  it("bodies over 256 KiB are 413, declared or streamed", async () => {
    const big = "x".repeat(300 * 1024);
    const declared = await call("POST", "/v1/calls", big, { "content-type": "application/json" });
    expect(declared.status).toBe(413);
    expect(await codeOf(declared)).toBe("body_too_large");
    const streamed = await new Promise<number>((resolve, reject) => {
      const u = new URL(g.url);
      const r = request(
        {
          host: u.hostname,
          port: u.port,
          method: "POST",
          path: "/v1/calls",
          headers: { "transfer-encoding": "chunked" },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      r.on("error", reject);
      for (let i = 0; i < 10; i++) r.write(Buffer.alloc(32 * 1024, 1));
      r.end();
    });
    expect([401, 413]).toContain(streamed);
  });

  it("odd methods, paths and Host headers get JSON errors, never 500", async () => {
    expect((await call("PUT", "/v1/calls", "{}")).status).toBe(405);
    expect((await fetch(`${g.url}/nope`)).status).toBe(404);
    expect((await fetch(`${g.url}/v1/calls/a/b`)).status).toBe(404);
    const garbage = await raw("GET /healthz HTTP/1.1\r\nHost: [::1\r\nConnection: close\r\n\r\n");
    expect(garbage).toMatch(/^HTTP\/1\.1 (200|400) /);
    const absolute = await raw(
      "GET http://evil.example/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    expect(absolute).not.toMatch(/^HTTP\/1\.1 500/);
    expect(g.registry.render()).not.toMatch(/status="500"/);
  });

  it("upgrades: wrong path 404, unsigned 401, no transceiver 503", async () => {
    const up = (path: string, extra = "") =>
      raw(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n${extra}\r\n`,
      );
    expect(await up("/v1/other")).toMatch(/^HTTP\/1\.1 404 /);
    expect(await up("/v1/ws")).toMatch(/^HTTP\/1\.1 401 /);
    const h = await signedHeaders("GET", "/v1/ws");
    const signed = Object.entries(h)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    expect(await up("/v1/ws", signed)).toMatch(/^HTTP\/1\.1 503 /);
  });
});
