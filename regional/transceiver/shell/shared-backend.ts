// The connector of shared backend connections (backend-shared.ts): calls are spread over at most
// BACKEND_SHARED_CONNECTIONS WebSockets, each opened when the least loaded one already has a
// call. Until a backend has said yes once, one connection asks; a backend that says no (answers
// without x-gr-shared, or refuses the upgrade) gets one connection per call, as before, and is
// asked again after RETRY_MS, so a backend upgraded in place is picked up.
import type {
  BackendCall,
  BackendConnector,
  BackendLink,
  BridgeErrorReason,
  BridgeHandlers,
} from "../backend-link.ts";
import { backendHeaders } from "../backend-protocol.ts";
import { SharedChannel } from "./shared-channel.ts";
import { SharedConnection } from "./shared-connection.ts";

export interface SharedBackendOptions {
  url: string;
  clusterId: number;
  transceiverId: number;
  /** At most this many shared connections (1..64). */
  connections: number;
  queueBytes: number;
  connectTimeoutMs: number;
  /** A connection of the call's own, for a backend that takes no shared ones. */
  perCall(call: BackendCall, h: BridgeHandlers): BackendLink;
  onError(reason: BridgeErrorReason): void;
  /** Open shared connections changed. */
  onConnections?(open: number): void;
  now(): number;
}

export type SharedMode = "unknown" | "shared" | "per_call";

/** How long a backend that refused shared connections gets one connection per call before it is asked again. */
export const SHARED_RETRY_MS = 60_000;

export class SharedBackend implements BackendConnector {
  readonly #o: SharedBackendOptions;
  #mode: SharedMode = "unknown";
  #retryAt = 0;
  readonly #pool: SharedConnection[] = [];
  #open = 0;

  constructor(o: SharedBackendOptions) {
    this.#o = o;
  }

  get mode(): SharedMode {
    return this.#mode;
  }

  /** Shared connections open now. */
  get openConnections(): number {
    return this.#open;
  }

  open(call: BackendCall, h: BridgeHandlers): BackendLink {
    if (this.#mode === "per_call") {
      if (this.#o.now() < this.#retryAt) return this.#o.perCall(call, h);
      this.#mode = "unknown";
    }
    const ch = new SharedChannel(call, h, this.#o.queueBytes);
    this.#pick().attach(ch);
    return ch;
  }

  /** Closes every shared connection after what is queued (the calls have ended: their close records go first). */
  close(): void {
    for (const c of [...this.#pool]) c.end();
  }

  #pick(): SharedConnection {
    let best: SharedConnection | undefined;
    for (const c of this.#pool) if (!c.full && (best === undefined || c.calls < best.calls)) best = c;
    // Until the backend has said yes, a single connection asks.
    const limit = this.#mode === "shared" ? this.#o.connections : 1;
    if (best !== undefined && (best.calls === 0 || this.#pool.length >= limit)) return best;
    const c = new SharedConnection({
      url: this.#o.url,
      headers: backendHeaders(this.#o.clusterId, this.#o.transceiverId),
      connectTimeoutMs: this.#o.connectTimeoutMs,
      queueBytes: this.#o.queueBytes,
      onNegotiated: (_c, agreed, waiting) => {
        if (agreed) {
          this.#mode = "shared";
          this.#open++;
          this.#o.onConnections?.(this.#open);
          return;
        }
        this.#mode = "per_call";
        this.#retryAt = this.#o.now() + SHARED_RETRY_MS;
        for (const ch of waiting) ch.fallBack(this.#o.perCall(ch.call, ch.handlers));
      },
      onGone: (gone, wasOpen) => {
        const i = this.#pool.indexOf(gone);
        if (i >= 0) this.#pool.splice(i, 1);
        if (wasOpen) {
          this.#open--;
          this.#o.onConnections?.(this.#open);
        }
      },
      onError: this.#o.onError,
    });
    this.#pool.push(c);
    return c;
  }
}
