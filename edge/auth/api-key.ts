// API keys are never stored: the secret API_KEY_HASHES lists the lower-case hex SHA-256 of each
// valid key, comma-separated. A presented key is hashed and looked up; the lookup compares
// digests, so timing reveals nothing about the key itself.
import { sha256Hex } from "../bytes.ts";

export type ApiKeyHashes = ReadonlySet<string>;

/** Throws an Error naming the variable and entry index (never the value) on a malformed list. */
export function parseApiKeyHashes(text: string | undefined, what = "API_KEY_HASHES"): ApiKeyHashes {
  const out = new Set<string>();
  if (text === undefined || text.trim() === "") return out;
  for (const [i, raw] of text.split(",").entries()) {
    const h = raw.trim().toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(h)) throw new Error(`${what}[${i}]: expected 64 hex characters (a SHA-256)`);
    out.add(h);
  }
  return out;
}

/** A short, non-secret id for a key: the first 12 hex digits of its hash (logs, rate limits). */
export function apiKeyId(hash: string): string {
  return hash.slice(0, 12);
}

export async function lookupApiKey(key: string, hashes: ApiKeyHashes): Promise<string | null> {
  const h = await sha256Hex(key);
  return hashes.has(h) ? apiKeyId(h) : null;
}
