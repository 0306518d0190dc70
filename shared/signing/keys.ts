// GR_CLUSTER_SECRET is a keyring like GR_HINT_KEYS ("id:base64,id:base64"; the first signs, all
// verify), so it rotates without an outage (docs/operations/deploy.md). The older single-secret
// form (one base64 value, no id) is still read, as key id 0.
import { type Keyring, KeyringError, parseKeyring } from "../keys.ts";

export const CLUSTER_KEY_MAX_ID = 255;

export function parseClusterKeys(text: string | undefined, what = "GR_CLUSTER_SECRET"): Keyring {
  if (text !== undefined && text.trim() !== "" && !text.includes(":")) {
    const ring = parseKeyring(`0:${text.trim()}`, what, CLUSTER_KEY_MAX_ID);
    return ring;
  }
  return parseKeyring(text, what, CLUSTER_KEY_MAX_ID);
}

export { KeyringError };
