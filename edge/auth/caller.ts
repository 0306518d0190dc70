// The caller the edge names to the cluster when it asks for a session (x-gr-caller, signed): the
// API key's short id (a client secret counts as the key that minted it, so minting secrets does
// not multiply the limit) and the client's /24 or /64. The cluster counts sessions in setup by
// both and answers 429 setup_limit over its limits (docs/security.md, attack 4).
import { type Caller, clientNetwork } from "../../shared/signing/caller.ts";
import type { Principal } from "./authenticate.ts";

export function callerFor(p: Principal, clientIp: string): Caller {
  return { key: p.kind === "api_key" ? p.id : p.sub, network: clientNetwork(clientIp) };
}
