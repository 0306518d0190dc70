// Hostile input against the worker in real workerd: random methods, paths, headers, tokens and
// bodies (invalid UTF-8, broken multipart, huge headers, forged call ids). The edge must never
// answer 5xx for a caller's mistake and must always answer errors as the JSON catalogue.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeCluster } from "./fake-cluster.ts";
import { CLUSTERS, OFFER, topologyFor } from "./fixtures.ts";
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
    topology: topologyFor(Object.fromEntries(clusters.map((f) => [f.name, f.url]))),
    bindings: { ...secrets.bindings, RATE_LIMIT_IP_LIMIT: "1000000", RATE_LIMIT_KEY_LIMIT: "1000000" },
  });
});
afterAll(async () => {
  await e?.dispose();
  for (const f of clusters) await f.stop();
});

const method = fc.constantFrom("GET", "POST", "PATCH", "DELETE", "PUT", "OPTIONS");
const path = fc.oneof(
  fc.constantFrom(
    "/v1/realtime/calls",
    "/v1/realtime/client_secrets",
    "/v1/regions",
    "/healthz",
    "/v1/realtime/ws",
    "/internal/metrics",
  ),
  fc
    .string({ unit: "grapheme-ascii", maxLength: 60 })
    .map((s) => `/v1/realtime/calls/${encodeURIComponent(s)}`),
  fc
    .base64String({ minLength: 48, maxLength: 48 })
    .map((s) => `/v1/realtime/calls/rtc_${s.replace(/\+/g, "-").replace(/\//g, "_")}/hangup`),
);
const token = fc.oneof(
  fc.constant(secrets.apiKey),
  fc.string({ maxLength: 80 }).map((s) => `ek_${s}`),
  fc.string({ unit: "grapheme-ascii", maxLength: 40 }),
);
const contentType = fc.constantFrom(
  "application/sdp",
  "multipart/form-data; boundary=xyz",
  "multipart/form-data",
  "application/json",
  "application/trickle-ice-sdpfrag",
  "text/plain",
  "",
);
const body = fc.oneof(
  fc.uint8Array({ maxLength: 400 }),
  fc.string({ maxLength: 400 }).map((s) => new TextEncoder().encode(s)),
  fc.constant(new TextEncoder().encode(OFFER)),
  fc.constant(new TextEncoder().encode('--xyz\r\nContent-Disposition: form-data; name="sdp"\r\n\r\nv=0')),
  fc.constant(new Uint8Array([0xff, 0xfe, 0xc3, 0x28])),
);

describe("hostile input", () => {
  it("never answers 5xx or a non-catalogue error for random requests", async () => {
    await fc.assert(
      fc.asyncProperty(
        method,
        path,
        token,
        contentType,
        body,
        fc.boolean(),
        async (m, p, t, ct, b, withAuth) => {
          const headers: Record<string, string> = {};
          if (withAuth) headers.authorization = `Bearer ${t}`;
          if (ct) headers["content-type"] = ct;
          const res = await e.fetch(p, {
            method: m,
            city: "frankfurt",
            headers,
            ...(m === "GET" || m === "OPTIONS" ? {} : { body: b }),
          });
          expect(res.status, `${m} ${p} ${ct}`).toBeLessThan(500);
          if (res.status >= 400) {
            const j = (await res.json()) as { error: { type: string; code: string; message: string } };
            expect(typeof j.error.code).toBe("string");
            expect(typeof j.error.message).toBe("string");
          } else {
            await res.arrayBuffer();
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("survives oversized headers and absurd cf values", async () => {
    const res = await e.fetch("/v1/realtime/calls", {
      method: "POST",
      cf: { latitude: "NaN", longitude: "1e400", country: "<script>", continent: "", colo: "x".repeat(1000) },
      headers: {
        authorization: `Bearer ${secrets.apiKey}`,
        "content-type": "application/sdp",
        "x-junk": "y".repeat(16_000),
      },
      body: OFFER,
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("server-timing")).toContain('steer;desc="default"');
  });
});
