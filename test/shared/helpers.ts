// Small helpers for the shared wire-format tests.
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import type { WireVectors } from "../../scripts/wire-vectors.ts";

/** Hex (spaces and newlines allowed) → bytes. */
export function fromHex(text: string): Uint8Array {
  const clean = text.replace(/\s+/g, "");
  if (!/^([0-9a-f]{2})*$/i.test(clean)) throw new Error(`bad hex: ${text}`);
  return Uint8Array.from(Buffer.from(clean, "hex"));
}

export const toHex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

export const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

export const nodeHmacSha256 = (key: Uint8Array, data: Uint8Array): Uint8Array =>
  Uint8Array.from(createHmac("sha256", key).update(data).digest());

export const nodeHmacSha1 = (key: Uint8Array, data: Uint8Array): Uint8Array =>
  Uint8Array.from(createHmac("sha1", key).update(data).digest());

/** The committed golden vectors (test/fixtures/wire-vectors.json). */
export function committedVectors(): WireVectors {
  return JSON.parse(readFileSync(new URL("../fixtures/wire-vectors.json", import.meta.url), "utf8"));
}
