// Pure pieces of the edge: SDP checks, client secrets, API key hashes, the fallback rate limiter.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { apiKeyId, lookupApiKey, parseApiKeyHashes } from "../../edge/auth/api-key.ts";
import { authenticate, bearerToken } from "../../edge/auth/authenticate.ts";
import {
  importClientSecretKeys,
  mintClientSecret,
  verifyClientSecret,
} from "../../edge/auth/client-secret.ts";
import { MemoryLimiter } from "../../edge/auth/rate-limit.ts";
import { sha256Hex } from "../../edge/bytes.ts";
import { EdgeError } from "../../edge/errors.ts";
import { quoteEtag } from "../../edge/routes/calls.ts";
import { checkSdpOffer, offerError } from "../../edge/sdp.ts";
import { OFFER } from "./fixtures.ts";

describe("checkSdpOffer: the shared offer check, mapped to the edge's errors", () => {
  it("accepts a browser-like offer", () => {
    expect(checkSdpOffer(OFFER)).toEqual({ ok: true });
    expect(checkSdpOffer(OFFER.replace(/\r\n/g, "\n")).ok).toBe(true);
  });

  it.each([
    ["", "sdp_malformed", "sdp is empty"],
    ["hello", "sdp_malformed", 'an SDP must start with "v=0"'],
    [OFFER.replace("v=0", "v=1"), "sdp_malformed", 'an SDP must start with "v=0"'],
    [OFFER.replace("s=-", "s-"), "sdp_malformed", 'line 3: expected "<letter>=<value>"'],
    [OFFER.replace(/m=audio[^\r]*/, "m=video 9 UDP/TLS/RTP/SAVPF 96"), "no_audio", "no active m=audio"],
    [OFFER.replace(/a=ice-ufrag:Hk3f\r\n/g, ""), "sdp_malformed", "has no a=ice-ufrag"],
    [OFFER.replace(/a=ice-pwd:[^\r]*\r\n/g, ""), "sdp_malformed", "has no a=ice-pwd"],
    [OFFER.replace(/a=fingerprint:[^\r]*\r\n/g, ""), "sdp_malformed", "has no a=fingerprint"],
    [
      OFFER.replace(/a=ice-pwd:[^\r]*/, "a=ice-pwd:short"),
      "sdp_malformed",
      "a=ice-pwd must be 22-256 ice-chars",
    ],
    [
      OFFER.replace(/a=ice-ufrag:Hk3f/, "a=ice-ufrag:a b"),
      "sdp_malformed",
      "a=ice-ufrag must be 4-256 ice-chars",
    ],
    [
      OFFER.replace(/a=fingerprint:sha-256 [^\r]*/, "a=fingerprint:sha-256 zz"),
      "sdp_malformed",
      "a=fingerprint must be",
    ],
    [OFFER.replace(/o=[^\r]*\r\n/, ""), "sdp_malformed", "no o= line"],
    [OFFER.replace(/m=audio 9 [^\r]*/, "m=audio nine"), "sdp_malformed", "malformed m-line"],
    [OFFER.replace("a=rtcp-mux\r\n", ""), "rtcp_mux_required", "a=rtcp-mux"],
    [OFFER.replace("opus/48000/2", "G722/8000"), "no_acceptable_codec", "need opus/48000/2 or PCMU/8000"],
  ])("rejects %#: %s", (sdp, code, message) => {
    const r = checkSdpOffer(sdp);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.code).toBe(code);
    expect(!r.ok && r.message).toContain(message);
  });

  it("maps each code to the edge's error: structure 400 invalid_sdp, size 413, the rest 422 as the cluster says", () => {
    const of = (code: Parameters<typeof offerError>[0]) => {
      const e = offerError(code, "m");
      return [e.status, e.code];
    };
    expect(of("sdp_malformed")).toEqual([400, "invalid_sdp"]);
    expect(of("no_audio")).toEqual([400, "invalid_sdp"]);
    expect(of("sdp_too_large")).toEqual([413, "sdp_too_large"]);
    expect(of("bundle_required")).toEqual([422, "bundle_required"]);
    expect(of("ice_lite_unsupported")).toEqual([422, "ice_lite_unsupported"]);
  });

  it("accepts session-level credentials and skips port-0 sections", () => {
    const sessionLevel = OFFER.replace(/a=ice-ufrag:Hk3f\r\n/g, "")
      .replace(/a=ice-pwd:[^\r]*\r\n/g, "")
      .replace("t=0 0\r\n", "t=0 0\r\na=ice-ufrag:Hk3f\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n");
    expect(checkSdpOffer(sessionLevel).ok).toBe(true);
    expect(checkSdpOffer(`${OFFER}m=video 0 UDP/TLS/RTP/SAVPF 96\r\n`).ok).toBe(true);
  });

  it("never throws on arbitrary input", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (s) => {
        const r = checkSdpOffer(`v=0\r\n${s}`);
        expect(typeof r.ok).toBe("boolean");
      }),
      { numRuns: 500 },
    );
  });
});

describe("client secrets", () => {
  const secret = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));
  const other = btoa(String.fromCharCode(...new Uint8Array(32).fill(9)));

  it("round-trips, binds a session, expires", async () => {
    const keys = await importClientSecretKeys(secret);
    const { value, claims } = await mintClientSecret(keys, {
      subject: "abc",
      nowMs: 1_000_000,
      ttlS: 60,
      session: { instructions: "be brief" },
    });
    expect(value.startsWith("ek_")).toBe(true);
    expect(claims.exp).toBe(1000 + 60);
    const ok = await verifyClientSecret(value, keys, 1_000_000 + 59_999);
    expect(ok.ok && ok.claims.session).toEqual({ instructions: "be brief" });
    expect(await verifyClientSecret(value, keys, 1_060_000)).toEqual({ ok: false, reason: "expired" });
    // The grace period (follow-ups) extends acceptance.
    expect((await verifyClientSecret(value, keys, 1_060_000, 3600)).ok).toBe(true);
  });

  it("rejects tampering, another key, and junk", async () => {
    const keys = await importClientSecretKeys(secret);
    const otherKeys = await importClientSecretKeys(other);
    const { value } = await mintClientSecret(keys, { subject: "abc", nowMs: 0, ttlS: 600 });
    const [body, tag] = value.slice(3).split(".") as [string, string];
    const forged = JSON.parse(atob(body.replace(/-/g, "+").replace(/_/g, "/")));
    forged.exp += 100_000;
    const forgedBody = btoa(JSON.stringify(forged))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    expect(await verifyClientSecret(`ek_${forgedBody}.${tag}`, keys, 0)).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    expect(await verifyClientSecret(value, otherKeys, 0)).toEqual({ ok: false, reason: "bad-signature" });
    for (const junk of ["ek_", "ek_abc", "ek_a.b", "nope", `${value}x`]) {
      expect((await verifyClientSecret(junk, keys, 0)).ok).toBe(false);
    }
  });

  it("rotates with a keyring: old secrets verify, new ones use the active key", async () => {
    const old = await importClientSecretKeys(`1:${secret}`);
    const ring = await importClientSecretKeys(`2:${other},1:${secret}`);
    const { value } = await mintClientSecret(old, { subject: "k", nowMs: 0, ttlS: 600 });
    expect((await verifyClientSecret(value, ring, 0)).ok).toBe(true);
    const fresh = await mintClientSecret(ring, { subject: "k", nowMs: 0, ttlS: 600 });
    expect(fresh.claims.k).toBe(2);
    expect(await verifyClientSecret(fresh.value, old, 0)).toEqual({ ok: false, reason: "unknown-key" });
  });

  it("carries a call scope, and refuses a signed scope that is not a call id", async () => {
    const keys = await importClientSecretKeys(secret);
    const callId = `rtc_${"A".repeat(48)}`;
    const scoped = await mintClientSecret(keys, { subject: "abc", nowMs: 0, ttlS: 600, callId });
    const ok = await verifyClientSecret(scoped.value, keys, 0);
    expect(ok.ok && ok.claims.call_id).toBe(callId);
    // Only the route checks a scope against its call; a malformed one never gets that far.
    const bad = await mintClientSecret(keys, { subject: "abc", nowMs: 0, ttlS: 600, callId: "rtc_short" });
    expect(await verifyClientSecret(bad.value, keys, 0)).toEqual({ ok: false, reason: "malformed" });
  });

  it("refuses a short key", async () => {
    await expect(importClientSecretKeys(btoa("short"))).rejects.toThrow(/CLIENT_SECRET_KEY/);
  });
});

describe("API keys and bearer tokens", () => {
  it("looks keys up by SHA-256 and never needs the key itself", async () => {
    const h = await sha256Hex("sk-test-1");
    const hashes = parseApiKeyHashes(` ${h.toUpperCase()} , ${await sha256Hex("other")}`);
    expect(await lookupApiKey("sk-test-1", hashes)).toBe(apiKeyId(h));
    expect(await lookupApiKey("sk-test-2", hashes)).toBeNull();
    expect(() => parseApiKeyHashes("abc")).toThrow("API_KEY_HASHES[0]");
    expect(parseApiKeyHashes(undefined).size).toBe(0);
  });

  it("parses Authorization", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer  abc ")).toBe("abc");
    for (const bad of ["Basic abc", "Bearer", "Bearer a b", "abc"]) {
      expect(() => bearerToken(bad)).toThrow(EdgeError);
    }
    expect(() => bearerToken(null)).toThrow(/Authorization/);
  });

  it("authenticates each kind with the right error", async () => {
    const hashes = parseApiKeyHashes(await sha256Hex("sk-1"));
    const keys = await importClientSecretKeys(btoa(String.fromCharCode(...new Uint8Array(32).fill(1))));
    expect(await authenticate("sk-1", hashes, keys, 0)).toMatchObject({ kind: "api_key" });
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (e: EdgeError) => e.code,
      );
    expect(await codeOf(authenticate("sk-2", hashes, keys, 0))).toBe("invalid_api_key");
    const sub = apiKeyId(await sha256Hex("sk-1"));
    const { value } = await mintClientSecret(keys, { subject: sub, nowMs: 0, ttlS: 10 });
    expect(await authenticate(value, hashes, keys, 9_999)).toMatchObject({ kind: "client_secret", sub });
    // Revoking the minting key revokes the secret.
    expect(await codeOf(authenticate(value, parseApiKeyHashes(await sha256Hex("sk-other")), keys, 0))).toBe(
      "invalid_client_secret",
    );
    expect(await codeOf(authenticate(value, hashes, keys, 10_000))).toBe("expired_client_secret");
    expect(await codeOf(authenticate(value, hashes, null, 0))).toBe("invalid_client_secret");
    expect(await codeOf(authenticate("ek_garbage", hashes, keys, 0))).toBe("invalid_client_secret");
  });
});

describe("MemoryLimiter", () => {
  it("allows `limit` per window per key and says when to retry", async () => {
    const l = new MemoryLimiter(2, 10);
    expect((await l.limit("a", 1000)).ok).toBe(true);
    expect((await l.limit("a", 2000)).ok).toBe(true);
    expect(await l.limit("a", 3000)).toEqual({ ok: false, retryAfterS: 7 });
    expect((await l.limit("b", 3000)).ok).toBe(true);
    expect((await l.limit("a", 10_000)).ok).toBe(true);
  });

  it("stays bounded", async () => {
    const l = new MemoryLimiter(1, 10, 3);
    for (let i = 0; i < 10; i++) await l.limit(`k${i}`, 0);
    // Keys beyond the cap are not tracked (fail open) rather than growing memory.
    expect((await l.limit("k9", 0)).ok).toBe(true);
    expect((await l.limit("k0", 0)).ok).toBe(false);
  });
});

describe("edge/dev/env-file.ts", () => {
  it("renders hashed keys, a validated topology and local-dev vars as dotenv", async () => {
    const { edgeEnvFile } = await import("../../edge/dev/env-file.ts");
    const { readFileSync } = await import("node:fs");
    const text = edgeEnvFile({
      topologyJson: readFileSync("config/topology.local.json", "utf8"),
      apiKeys: ["local-dev-key"],
      clusterSecret: "c2VjcmV0",
      callIdKeys: "1:abc",
    });
    const vars = Object.fromEntries(
      text
        .trim()
        .split("\n")
        .map((l) => /^([A-Z_]+)='(.*)'$/.exec(l)!.slice(1, 3) as [string, string]),
    );
    expect(vars.API_KEY_HASHES).toBe(await sha256Hex("local-dev-key"));
    expect(text).not.toContain("local-dev-key");
    expect(JSON.parse(vars.TOPOLOGY_JSON!).clusters).toHaveLength(2);
    expect(vars.GR_LOCAL_DEV).toBe("true");
    expect(Buffer.from(vars.CLIENT_SECRET_KEY!, "base64")).toHaveLength(32);
    expect(() =>
      edgeEnvFile({ topologyJson: "{}", apiKeys: [], clusterSecret: "x", callIdKeys: "y" }),
    ).toThrow(/invalid topology/);
  });
});

describe("quoteEtag", () => {
  it("quotes a bare tag and keeps a quoted or weak one", () => {
    expect(quoteEtag("abc")).toBe('"abc"');
    expect(quoteEtag('"abc"')).toBe('"abc"');
    expect(quoteEtag('W/"abc"')).toBe('W/"abc"');
    expect(quoteEtag('a"b')).toBe('"ab"');
  });
});

describe("Telemetry", () => {
  it("writes one Analytics Engine point per steered call (mock dataset) and Prometheus series", async () => {
    const { EdgeMetrics, Telemetry } = await import("../../edge/metrics/telemetry.ts");
    const points: unknown[] = [];
    const t = new Telemetry(new EdgeMetrics(), { writeDataPoint: (p) => points.push(p) });
    t.callSteered({
      route: "calls.create",
      status: 201,
      region: "EU",
      cluster: "fra",
      colo: "FRA",
      country: "DE",
      basis: "coordinates",
      totalMs: 12,
      clusterMs: 9,
      attempts: 1,
    });
    t.requestServed("calls.create", 201);
    t.failedOver("iad");
    expect(points).toEqual([
      {
        indexes: ["fra"],
        blobs: ["calls.create", "EU", "fra", "FRA", "DE", "201", "coordinates"],
        doubles: [12, 9, 1],
      },
    ]);
    const text = t.metrics.registry.render();
    expect(text).toContain(
      'gr_edge_signalling_seconds_bucket{region="EU",cluster="fra",stage="total",le="0.025"} 1',
    );
    expect(text).toContain(
      'gr_edge_signalling_seconds_bucket{region="EU",cluster="fra",stage="cluster_hop",le="0.01"} 1',
    );
    expect(text).toContain('gr_edge_requests_total{route="calls.create",status="201"} 1');
    expect(text).toContain('gr_edge_failovers_total{cluster="iad"} 1');
    // A failing dataset never fails the call.
    const broken = new Telemetry(new EdgeMetrics(), {
      writeDataPoint: () => {
        throw new Error("quota");
      },
    });
    expect(() =>
      broken.callSteered({
        route: "ws",
        status: 200,
        region: "EU",
        cluster: "fra",
        colo: "",
        country: "",
        basis: "default",
        totalMs: 1,
        clusterMs: 1,
        attempts: 1,
      }),
    ).not.toThrow();
  });
});
