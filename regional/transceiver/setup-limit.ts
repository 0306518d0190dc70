// Sessions in setup (created, not yet connected) per caller: per API key and per client network
// (the signed x-gr-caller, shared/signing/caller.ts). A key or network over its limit gets 429
// setup_limit with Retry-After = when its oldest session in setup times out. A slot is taken
// before the session is built (concurrent offers cannot overshoot) and given back when the
// session connects or ends; requests without a caller (tests, tools on the cluster network) are
// not counted. Bounded: at most one ticket per session the transceiver can hold.
import type { Caller } from "../../shared/signing/caller.ts";
import type { CallState } from "./call-types.ts";
import { ApiError } from "./errors.ts";

export interface SetupTicket {
  readonly key: string;
  readonly network: string | undefined;
  readonly at: number;
  session: { readonly state: CallState } | undefined;
}

export class SetupLimiter {
  readonly #perKey: number;
  readonly #perNetwork: number;
  readonly #timeoutMs: number;
  readonly #tickets = new Set<SetupTicket>();
  readonly #byKey = new Map<string, number>();
  readonly #byNetwork = new Map<string, number>();
  refused = { key: 0, network: 0 };

  constructor(perKey: number, perNetwork: number, setupTimeoutMs: number) {
    this.#perKey = perKey;
    this.#perNetwork = perNetwork;
    this.#timeoutMs = setupTimeoutMs;
  }

  get inSetup(): number {
    this.#sweep();
    return this.#tickets.size;
  }

  /** Takes a slot for `caller` or throws 429 setup_limit naming the exhausted scope. */
  admit(caller: Caller, now: number): SetupTicket {
    this.#sweep();
    const network = caller.network === "unknown" ? undefined : caller.network;
    if ((this.#byKey.get(caller.key) ?? 0) >= this.#perKey) {
      this.refused.key++;
      throw new ApiError(
        "setup_limit",
        `this API key has ${this.#perKey} sessions in setup on this transceiver; connect or end one first`,
        this.#retryAfterS((t) => t.key === caller.key, now),
      );
    }
    if (network !== undefined && (this.#byNetwork.get(network) ?? 0) >= this.#perNetwork) {
      this.refused.network++;
      throw new ApiError(
        "setup_limit",
        `this client network has ${this.#perNetwork} sessions in setup on this transceiver; connect or end one first`,
        this.#retryAfterS((t) => t.network === network, now),
      );
    }
    const ticket: SetupTicket = { key: caller.key, network, at: now, session: undefined };
    this.#tickets.add(ticket);
    bump(this.#byKey, caller.key, 1);
    if (network !== undefined) bump(this.#byNetwork, network, 1);
    return ticket;
  }

  /** Gives the slot back (the offer failed, or the session connected or ended). Idempotent. */
  release(ticket: SetupTicket): void {
    if (!this.#tickets.delete(ticket)) return;
    bump(this.#byKey, ticket.key, -1);
    if (ticket.network !== undefined) bump(this.#byNetwork, ticket.network, -1);
  }

  // Connection is noticed lazily (no hook in the session): at most `capacity` tickets to look at.
  #sweep(): void {
    for (const t of this.#tickets) if (t.session && t.session.state !== "connecting") this.release(t);
  }

  #retryAfterS(match: (t: SetupTicket) => boolean, now: number): number {
    let oldest = now;
    for (const t of this.#tickets) if (match(t) && t.at < oldest) oldest = t.at;
    return Math.max(1, Math.ceil((oldest + this.#timeoutMs - now) / 1000));
  }
}

function bump(m: Map<string, number>, k: string, d: number): void {
  const n = (m.get(k) ?? 0) + d;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}
