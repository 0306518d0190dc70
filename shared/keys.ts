// Keyrings for the routing hint and the call id. Several keys are valid at once so a key can be
// rotated without dropping live calls: mint with the active key, accept any listed key.
// Text form (environment variables / Wrangler secrets): "id:base64secret,id:base64secret",
// the first entry is the active key.

export interface SecretKey {
  readonly id: number;
  readonly secret: Uint8Array;
}

export interface Keyring {
  readonly active: SecretKey;
  readonly keys: readonly SecretKey[];
}

export class KeyringError extends Error {
  override readonly name = "KeyringError";
}

export const MIN_SECRET_BYTES = 32;

function decodeStdBase64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return null;
  const normal = text.replace(/-/g, "+").replace(/_/g, "/");
  try {
    const bin = atob(normal);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/**
 * Parses "id:base64,id:base64". `maxId` is the largest id the wire format can carry.
 * `what` names the variable in error messages (never the secret itself).
 */
export function parseKeyring(text: string | undefined, what: string, maxId: number): Keyring {
  if (text === undefined || text.trim() === "") throw new KeyringError(`${what}: no keys configured`);
  const keys: SecretKey[] = [];
  for (const [index, entry] of text.split(",").entries()) {
    const m = /^\s*(\d{1,3})\s*:\s*(\S+)\s*$/.exec(entry);
    if (!m) throw new KeyringError(`${what}[${index}]: expected "<id>:<base64 secret>"`);
    const id = Number(m[1]);
    if (id > maxId) throw new KeyringError(`${what}[${index}]: key id ${id} is over the maximum ${maxId}`);
    if (keys.some((k) => k.id === id)) throw new KeyringError(`${what}[${index}]: key id ${id} is repeated`);
    const secret = decodeStdBase64(m[2]!);
    if (!secret) throw new KeyringError(`${what}[${index}]: secret is not base64`);
    if (secret.length < MIN_SECRET_BYTES) {
      throw new KeyringError(
        `${what}[${index}]: secret has ${secret.length} bytes, at least ${MIN_SECRET_BYTES} are required`,
      );
    }
    keys.push({ id, secret });
  }
  return { active: keys[0]!, keys };
}

/** Renders a keyring back to its text form (tests, local tooling). */
export function formatKeyring(keys: readonly SecretKey[]): string {
  return keys.map((k) => `${k.id}:${btoa(String.fromCharCode(...k.secret))}`).join(",");
}
