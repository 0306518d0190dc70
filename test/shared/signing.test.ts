// Edge → cluster request signing: golden vector, sign → verify, tamper, expiry, replay.
import { createHash, createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalRequest,
  DEFAULT_REPLAY_WINDOW_MS,
  importSigningKey,
  NONCE_HEADER,
  NonceWindow,
  SIGNATURE_HEADER,
  signRequest,
  TIMESTAMP_HEADER,
  verifyRequest,
} from "../../shared/signing/request.ts";
import { committedVectors } from "./helpers.ts";

const secret = new Uint8Array(32).fill(0x42);
const NOW = 1_767_225_600_000;
const NONCE = "bm9uY2Utbm9uY2Utbm9uYw";
const body = new TextEncoder().encode('{"sdp":"v=0"}');
const headersOf = (h: Record<string, string>) => new Headers(h);

describe("request signing golden vector", () => {
  const v = committedVectors().signing;
  it("canonical request and signature match an independent node:crypto computation", async () => {
    const bodyBytes = new TextEncoder().encode(v.body);
    const canonical = `gr-v1\n${v.method}\n${v.path}\n${v.timestampMs}\n${v.nonce}\n${createHash("sha256").update(bodyBytes).digest("hex")}`;
    expect(v.canonical).toBe(canonical);
    expect(
      new TextDecoder().decode(await canonicalRequest(v.method, v.path, v.timestampMs, v.nonce, bodyBytes)),
    ).toBe(canonical);
    const tag = Buffer.concat([
      createHmac("sha256", Buffer.from(v.secretBase64, "base64")).update(canonical).digest(),
      Buffer.of(0),
    ]);
    expect(v.headers[SIGNATURE_HEADER]).toBe(`v1=${tag.toString("base64url")}`);
    const key = await importSigningKey(Buffer.from(v.secretBase64, "base64"));
    expect(await signRequest(key, v.method, v.path, bodyBytes, v.timestampMs, v.nonce)).toEqual(v.headers);
    expect(
      await verifyRequest(key, v.method, v.path, bodyBytes, headersOf(v.headers), v.timestampMs + 1000),
    ).toEqual({
      ok: true,
      timestampMs: v.timestampMs,
      nonce: v.nonce,
    });
  });
});

describe("sign → verify", async () => {
  const key = await importSigningKey(secret);
  const signed = await signRequest(key, "POST", "/v1/sessions?x=1", body, NOW, NONCE);

  it("accepts the request as signed; method case does not matter", async () => {
    expect((await verifyRequest(key, "post", "/v1/sessions?x=1", body, headersOf(signed), NOW)).ok).toBe(
      true,
    );
  });

  it.each<[string, () => Parameters<typeof verifyRequest>]>([
    ["method", () => [key, "PUT", "/v1/sessions?x=1", body, headersOf(signed), NOW]],
    ["path", () => [key, "POST", "/v1/sessions", body, headersOf(signed), NOW]],
    ["query", () => [key, "POST", "/v1/sessions?x=2", body, headersOf(signed), NOW]],
    [
      "body",
      () => [
        key,
        "POST",
        "/v1/sessions?x=1",
        new TextEncoder().encode('{"sdp":"v=1"}'),
        headersOf(signed),
        NOW,
      ],
    ],
    [
      "timestamp header",
      () => [
        key,
        "POST",
        "/v1/sessions?x=1",
        body,
        headersOf({ ...signed, [TIMESTAMP_HEADER]: String(NOW + 1) }),
        NOW,
      ],
    ],
    [
      "nonce header",
      () => [
        key,
        "POST",
        "/v1/sessions?x=1",
        body,
        headersOf({ ...signed, [NONCE_HEADER]: `${NONCE}A` }),
        NOW,
      ],
    ],
    [
      "signature",
      () => [
        key,
        "POST",
        "/v1/sessions?x=1",
        body,
        headersOf({ ...signed, [SIGNATURE_HEADER]: `${signed[SIGNATURE_HEADER]!.slice(0, -2)}AB` }),
        NOW,
      ],
    ],
    [
      "truncated signature",
      () => [
        key,
        "POST",
        "/v1/sessions?x=1",
        body,
        headersOf({ ...signed, [SIGNATURE_HEADER]: signed[SIGNATURE_HEADER]!.slice(0, -1) }),
        NOW,
      ],
    ],
  ])("a changed %s is bad-signature", async (_name, args) => {
    expect(await verifyRequest(...args())).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("another secret is bad-signature", async () => {
    const other = await importSigningKey(new Uint8Array(32).fill(0x43));
    expect(await verifyRequest(other, "POST", "/v1/sessions?x=1", body, headersOf(signed), NOW)).toEqual({
      ok: false,
      reason: "bad-signature",
    });
  });

  it("expires outside the replay window, in both directions", async () => {
    const at = (now: number) => verifyRequest(key, "POST", "/v1/sessions?x=1", body, headersOf(signed), now);
    expect((await at(NOW + DEFAULT_REPLAY_WINDOW_MS)).ok).toBe(true);
    expect((await at(NOW - DEFAULT_REPLAY_WINDOW_MS)).ok).toBe(true);
    expect(await at(NOW + DEFAULT_REPLAY_WINDOW_MS + 1)).toEqual({ ok: false, reason: "expired" });
    expect(await at(NOW - DEFAULT_REPLAY_WINDOW_MS - 1)).toEqual({ ok: false, reason: "expired" });
    expect(
      (await verifyRequest(key, "POST", "/v1/sessions?x=1", body, headersOf(signed), NOW + 5000, 1000)).ok,
    ).toBe(false);
  });

  it.each<[string, Record<string, string>, string]>([
    ["no headers", {}, "missing"],
    ["no nonce", { [SIGNATURE_HEADER]: "v1=x", [TIMESTAMP_HEADER]: "1" }, "missing"],
    [
      "timestamp not digits",
      { [SIGNATURE_HEADER]: "v1=x", [TIMESTAMP_HEADER]: "1e3", [NONCE_HEADER]: NONCE },
      "malformed",
    ],
    [
      "short nonce",
      { [SIGNATURE_HEADER]: "v1=x", [TIMESTAMP_HEADER]: "1", [NONCE_HEADER]: "abc" },
      "malformed",
    ],
    [
      "nonce alphabet",
      { [SIGNATURE_HEADER]: "v1=x", [TIMESTAMP_HEADER]: "1", [NONCE_HEADER]: `${NONCE}+/` },
      "malformed",
    ],
    [
      "signature version",
      { [SIGNATURE_HEADER]: "v2=x", [TIMESTAMP_HEADER]: "1", [NONCE_HEADER]: NONCE },
      "malformed",
    ],
  ])("%s → %s", async (_n, h, reason) => {
    expect(await verifyRequest(key, "POST", "/", body, headersOf(h), NOW)).toEqual({ ok: false, reason });
  });

  it("verify never throws on arbitrary header values", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.string(), fc.string(), async (sig, ts, nonce) => {
        const r = await verifyRequest(
          key,
          "GET",
          "/",
          new Uint8Array(0),
          {
            get: (n) =>
              ({ [SIGNATURE_HEADER]: sig, [TIMESTAMP_HEADER]: ts, [NONCE_HEADER]: nonce })[n] ?? null,
          },
          NOW,
        );
        expect(r.ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe("NonceWindow", () => {
  it("rejects a replayed nonce", () => {
    const w = new NonceWindow(30_000);
    expect(w.accept("a", NOW)).toBe(true);
    expect(w.accept("a", NOW + 10)).toBe(false);
    expect(w.accept("b", NOW + 10)).toBe(true);
  });

  it("stays bounded: evicts nonces older than two windows, refuses when full of live ones", () => {
    const w = new NonceWindow(1000, 3);
    expect(w.accept("n1", 0)).toBe(true);
    expect(w.accept("n2", 500)).toBe(true);
    expect(w.accept("n3", 1500)).toBe(true);
    expect(w.accept("n4", 1600)).toBe(false); // full, nothing older than 2 s
    expect(w.accept("n4", 2100)).toBe(true); // n1 (t=0) evicted
    expect(w.accept("n1", 2100)).toBe(false); // full again (n2, n3, n4 live)
    expect(w.accept("n5", 2600)).toBe(true); // n2 (t=500) evicted
  });

  it("a replay inside the timestamp window is always caught while the nonce is remembered", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("a", "b", "c", "d"), fc.nat(100)), { maxLength: 30 }),
        (events) => {
          const w = new NonceWindow(30_000, 1000);
          const seen = new Set<string>();
          let t = NOW;
          for (const [nonce, dt] of events) {
            t += dt;
            expect(w.accept(nonce, t)).toBe(!seen.has(nonce));
            seen.add(nonce);
          }
        },
      ),
    );
  });
});
