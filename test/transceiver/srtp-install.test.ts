// The swap is pinned to werift 0.25.2: when werift's CipherAesCtr changes underneath (an
// upgrade, a reinstall of another version), installFastSrtp refuses and this test fails, so the
// swapped-in methods are re-checked against the new source before the fingerprint is updated.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  fingerprint,
  installFastSrtp,
  WERIFT_CTR_FINGERPRINT,
} from "../../regional/transceiver/srtp/install.ts";

describe("installFastSrtp", () => {
  it("runs on werift 0.25.2 whose CipherAesCtr is the one the swap was checked against", () => {
    const entry = fileURLToPath(import.meta.resolve("werift"));
    const pkg = JSON.parse(readFileSync(entry.replace(/lib[\\/]index\.mjs$/, "package.json"), "utf8")) as {
      version: string;
    };
    expect(pkg.version).toBe("0.25.2");
    expect(fingerprint()).toBe(WERIFT_CTR_FINGERPRINT);
  });

  it("refuses to swap when the fingerprint differs, and names why", () => {
    const r = installFastSrtp("werift", "0".repeat(64));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/CipherAesCtr changed/);
  });

  it("swaps once and is idempotent", () => {
    expect(installFastSrtp("werift")).toEqual({ ok: true, swapped: true });
    expect(installFastSrtp("werift")).toEqual({ ok: true, swapped: true });
  });
});
