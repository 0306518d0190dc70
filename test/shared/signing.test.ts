// Edge → cluster request signing (gr-v2): golden vector, sign → verify, tamper, target binding,
// expiry, start-time rule, key rotation, replay; the caller and target codecs; the keyring text.
import { createHash, createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Keyring, parseKeyring } from "../../shared/keys.ts";
import { clientNetwork, formatCaller, parseCaller } from "../../shared/signing/caller.ts";
import { parseClusterKeys } from "../../shared/signing/keys.ts";
import {
  CALLER_HEADER,
  canonicalRequest,
  DEFAULT_REPLAY_WINDOW_MS,
  importSigningKeys,
  NONCE_HEADER,
  NonceWindow,
  SIGNATURE_HEADER,
  type SignedParts,
  signRequest,
  TARGET_HEADER,
  TIMESTAMP_HEADER,
  verifyRequest,
} from "../../shared/signing/request.ts";
import { formatTarget, parseTarget } from "../../shared/signing/target.ts";
import { committedVectors } from "./helpers.ts";

const ring = (...ids: number[]): Keyring => {
  const keys = ids.map((id) => ({ id, secret: new Uint8Array(32).fill(0x40 + id) }));
  return { active: keys[0]!, keys };
};
const NOW = 1_767_225_600_000;
const NONCE = "bm9uY2Utbm9uY2Utbm9uYw";
const body = new TextEncoder().encode('{"sdp":"v=0"}');
const headersOf = (h: Record<string, string>) => new Headers(h);
const SELF = "transceiver:2/5";
const parts: SignedParts = {
  method: "POST",
  pathAndQuery: "/v1/calls?x=1",
  body,
  target: SELF,
  caller: "key=0123456789ab; net=203.0.113.0/24",
};

describe("request signing golden vector", () => {
  const v = committedVectors().signing;
  it("canonical request and signature match an independent node:crypto computation", async () => {
    const bodyBytes = new TextEncoder().encode(v.body);
    const digest = createHash("sha256").update(bodyBytes).digest("hex");
    const canonical = `gr-v2\n${v.keyId}\n${v.method}\n${v.path}\n${v.target}\n${v.caller}\n${v.timestampMs}\n${v.nonce}\n${digest}`;
    expect(v.canonical).toBe(canonical);
    const p = { method: v.method, pathAndQuery: v.path, body: bodyBytes, target: v.target, caller: v.caller };
    expect(new TextDecoder().decode(await canonicalRequest(v.keyId, p, v.timestampMs, v.nonce))).toBe(
      canonical,
    );
    const secret = parseKeyring(v.keyring, "vector", 255).keys[0]!.secret;
    const tag = Buffer.concat([createHmac("sha256", secret).update(canonical).digest(), Buffer.of(0)]);
    expect(v.headers[SIGNATURE_HEADER]).toBe(`v2=${v.keyId}.${tag.toString("base64url")}`);
    const keys = await importSigningKeys(parseClusterKeys(v.keyring));
    expect(await signRequest(keys, p, v.timestampMs, v.nonce)).toEqual(v.headers);
    expect(await verifyRequest(keys, p, headersOf(v.headers), v.timestampMs + 1000)).toEqual({
      ok: true,
      timestampMs: v.timestampMs,
      nonce: v.nonce,
      keyId: v.keyId,
      caller: v.caller,
    });
  });
});

describe("sign → verify", async () => {
  const keys = await importSigningKeys(ring(1));
  const signed = await signRequest(keys, parts, NOW, NONCE);
  const verify = (over: Partial<SignedParts> = {}, h: Record<string, string> = signed, now = NOW) =>
    verifyRequest(keys, { ...parts, ...over }, headersOf(h), now);

  it("accepts the request as signed, returns the signed caller; method case does not matter", async () => {
    expect(await verify({ method: "post" })).toMatchObject({ ok: true, keyId: 1, caller: parts.caller });
    const noCaller = await signRequest(keys, { ...parts, caller: "" }, NOW, NONCE);
    expect(noCaller[CALLER_HEADER]).toBeUndefined();
    expect(await verify({}, noCaller)).toMatchObject({ ok: true, caller: "" });
  });

  it.each<[string, Partial<SignedParts>, Record<string, string>]>([
    ["method", { method: "PUT" }, signed],
    ["path", { pathAndQuery: "/v1/calls" }, signed],
    ["query", { pathAndQuery: "/v1/calls?x=2" }, signed],
    ["body", { body: new TextEncoder().encode('{"sdp":"v=1"}') }, signed],
    ["caller header", {}, { ...signed, [CALLER_HEADER]: "key=ffffffffffff; net=203.0.113.0/24" }],
    ["dropped caller header", {}, (({ [CALLER_HEADER]: _, ...rest }) => rest)(signed)],
    ["timestamp header", {}, { ...signed, [TIMESTAMP_HEADER]: String(NOW + 1) }],
    ["nonce header", {}, { ...signed, [NONCE_HEADER]: `${NONCE}A` }],
    ["signature", {}, { ...signed, [SIGNATURE_HEADER]: `${signed[SIGNATURE_HEADER]!.slice(0, -2)}AB` }],
  ])("a changed %s is bad-signature", async (_name, over, h) => {
    expect(await verify(over, h)).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("a request signed for one target is refused by every other, naming both", async () => {
    for (const other of ["transceiver:2/6", "transceiver:1/5", "gateway:2", "gateway:1"]) {
      expect(await verify({ target: other })).toEqual({ ok: false, reason: "wrong-target", signedFor: SELF });
    }
    // Rewriting the target header to the victim's identity does not help: it is under the MAC.
    const moved = { ...signed, [TARGET_HEADER]: "transceiver:2/6" };
    expect(await verify({ target: "transceiver:2/6" }, moved)).toEqual({
      ok: false,
      reason: "bad-signature",
    });
  });

  it("expires outside the replay window, in both directions, and refuses what predates the verifier", async () => {
    const w = DEFAULT_REPLAY_WINDOW_MS;
    expect(w).toBe(5000);
    expect((await verify({}, signed, NOW + w)).ok).toBe(true);
    expect((await verify({}, signed, NOW - w)).ok).toBe(true);
    expect(await verify({}, signed, NOW + w + 1)).toEqual({ ok: false, reason: "expired" });
    expect(await verify({}, signed, NOW - w - 1)).toEqual({ ok: false, reason: "from-future" });
    const p = { ...parts };
    expect(await verifyRequest(keys, p, headersOf(signed), NOW + 1500, { windowMs: 1000 })).toEqual({
      ok: false,
      reason: "expired",
    });
    expect(await verifyRequest(keys, p, headersOf(signed), NOW + 10, { notBeforeMs: NOW + 1 })).toEqual({
      ok: false,
      reason: "before-start",
    });
    expect((await verifyRequest(keys, p, headersOf(signed), NOW + 10, { notBeforeMs: NOW })).ok).toBe(true);
  });

  it("rotation: the old key still verifies, the new one signs; a removed key is unknown-key", async () => {
    const during = await importSigningKeys(ring(2, 1)); // new key added first, old kept
    expect((await verifyRequest(during, parts, headersOf(signed), NOW)).ok).toBe(true);
    const fresh = await signRequest(during, parts, NOW, NONCE);
    expect(fresh[SIGNATURE_HEADER]).toMatch(/^v2=2\./);
    expect(await verifyRequest(keys, parts, headersOf(fresh), NOW)).toEqual({
      ok: false,
      reason: "unknown-key",
    });
    const after = await importSigningKeys(ring(2));
    expect(await verifyRequest(after, parts, headersOf(signed), NOW)).toEqual({
      ok: false,
      reason: "unknown-key",
    });
    // Another secret under the same id is bad-signature.
    const impostor = await importSigningKeys({
      active: { id: 1, secret: new Uint8Array(32).fill(9) },
      keys: [{ id: 1, secret: new Uint8Array(32).fill(9) }],
    });
    expect(await verifyRequest(impostor, parts, headersOf(signed), NOW)).toEqual({
      ok: false,
      reason: "bad-signature",
    });
  });

  const base = {
    [SIGNATURE_HEADER]: `v2=1.${"A".repeat(44)}`,
    [TIMESTAMP_HEADER]: "1",
    [NONCE_HEADER]: NONCE,
  };
  it.each<[string, Record<string, string>, string]>([
    ["no headers", {}, "missing"],
    ["no target", base, "missing"],
    ["no nonce", { ...base, [NONCE_HEADER]: "", [TARGET_HEADER]: SELF }, "missing"],
    ["timestamp not digits", { ...base, [TIMESTAMP_HEADER]: "1e3", [TARGET_HEADER]: SELF }, "malformed"],
    ["short nonce", { ...base, [NONCE_HEADER]: "abc", [TARGET_HEADER]: SELF }, "malformed"],
    ["nonce alphabet", { ...base, [NONCE_HEADER]: `${NONCE}+/`, [TARGET_HEADER]: SELF }, "malformed"],
    [
      "version 1",
      { ...base, [SIGNATURE_HEADER]: `v1=${"A".repeat(44)}`, [TARGET_HEADER]: SELF },
      "malformed",
    ],
    [
      "no key id",
      { ...base, [SIGNATURE_HEADER]: `v2=${"A".repeat(44)}`, [TARGET_HEADER]: SELF },
      "malformed",
    ],
    [
      "short tag",
      { ...base, [SIGNATURE_HEADER]: `v2=1.${"A".repeat(43)}`, [TARGET_HEADER]: SELF },
      "malformed",
    ],
  ])("%s → %s", async (_n, h, reason) => {
    expect(await verifyRequest(keys, parts, headersOf(h), NOW)).toEqual({ ok: false, reason });
  });

  it("verify never throws on arbitrary header values", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.string(), fc.string(), fc.string(), async (sig, ts, nonce, target) => {
        const h: Record<string, string> = {
          [SIGNATURE_HEADER]: sig,
          [TIMESTAMP_HEADER]: ts,
          [NONCE_HEADER]: nonce,
          [TARGET_HEADER]: target,
        };
        const r = await verifyRequest(keys, parts, { get: (n) => h[n] ?? null }, NOW);
        expect(r.ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses to sign a field with a line break (it would shift the canonical lines)", async () => {
    await expect(signRequest(keys, { ...parts, pathAndQuery: "/a\nb" }, NOW, NONCE)).rejects.toThrow(
      /line break/,
    );
  });
});

describe("targets and callers", () => {
  it("formats and parses exactly the two target shapes", () => {
    expect(formatTarget({ clusterId: 2 })).toBe("gateway:2");
    expect(formatTarget({ clusterId: 2, transceiverId: 5 })).toBe("transceiver:2/5");
    expect(parseTarget("transceiver:2/5")).toEqual({ clusterId: 2, transceiverId: 5 });
    expect(parseTarget("gateway:65535")).toEqual({ clusterId: 65535 });
    for (const bad of ["gateway:0", "gateway:65536", "transceiver:2", "gateway:2 ", "pop:1", ""]) {
      expect(parseTarget(bad)).toBeNull();
    }
  });

  it("client networks are the /24 or /64; callers round-trip and odd ones are refused", () => {
    expect(clientNetwork("203.0.113.77")).toBe("203.0.113.0/24");
    expect(clientNetwork("::ffff:198.51.100.9")).toBe("198.51.100.0/24");
    expect(clientNetwork("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(clientNetwork("2001:db8::1")).toBe("2001:db8:0:0::/64");
    for (const odd of ["unknown", "", "300.1.1.1", "1.2.3", "2001:db8:::1", "x".repeat(60)]) {
      expect(clientNetwork(odd)).toBe("unknown");
    }
    const c = { key: "0123456789ab", network: "203.0.113.0/24" };
    expect(parseCaller(formatCaller(c))).toEqual(c);
    expect(parseCaller(formatCaller({ key: c.key, network: "2001:db8:0:0::/64" }))).not.toBeNull();
    expect(parseCaller(formatCaller({ key: c.key, network: "unknown" }))).not.toBeNull();
    for (const bad of [
      "key=0123456789AB; net=203.0.113.0/24",
      "key=0123456789ab; net=203.0.113.7/24",
      "key=0123456789ab; net=203.0.113.0/16",
      "key=0123456789ab;net=203.0.113.0/24",
      "key=0123456789ab; net=999.0.113.0/24",
    ]) {
      expect(parseCaller(bad)).toBeNull();
    }
  });
});

describe("GR_CLUSTER_SECRET keyring text", () => {
  const b64 = (fill: number) => Buffer.alloc(32, fill).toString("base64");
  it("reads a keyring (the first signs) and the older single-secret form as key id 0", () => {
    const r = parseClusterKeys(`7:${b64(1)},3:${b64(2)}`);
    expect(r.active.id).toBe(7);
    expect(r.keys.map((k) => k.id)).toEqual([7, 3]);
    const legacy = parseClusterKeys(` ${b64(1)} `);
    expect(legacy.active.id).toBe(0);
    expect(legacy.keys).toHaveLength(1);
  });

  it("names the variable and entry, never the secret", () => {
    expect(() => parseClusterKeys(undefined)).toThrow("GR_CLUSTER_SECRET: no keys configured");
    expect(() => parseClusterKeys("c2hvcnQ=")).toThrow(/GR_CLUSTER_SECRET\[0\]: secret has 5 bytes/);
    expect(() => parseClusterKeys(`1:${b64(1)},1:${b64(2)}`)).toThrow(/key id 1 is repeated/);
    expect(() => parseClusterKeys(`256:${b64(1)}`)).toThrow(/over the maximum 255/);
    try {
      parseClusterKeys(`1:${b64(1)},2:short`);
    } catch (e) {
      expect((e as Error).message).not.toContain(b64(1));
    }
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
