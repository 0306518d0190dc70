// The sessions of one transceiver: creating one from a signed request (admission, the offer
// check, the call id, the setup limit), finding one by call id, and keeping the ended ones
// readable for a few minutes. The Transceiver owns the sockets and timers around it.
import { randomBytes } from "node:crypto";
import { mintCallId, verifyCallId } from "../../shared/callid/callid.ts";
import type { MacSync } from "../../shared/hint/codec.ts";
import { inspectOffer } from "../../shared/sdp/offer.ts";
import type { CreateCallRequest, CreateCallResponse } from "../../shared/signalling/call-request.ts";
import type { Caller } from "../../shared/signing/caller.ts";
import { type HostPort, parseHostPort } from "../../shared/topology/address.ts";
import { CONTINENTS } from "../../shared/topology/schema.ts";
import { hmacSha1 } from "../common/hmac.ts";
import type { Logger } from "../common/log.ts";
import type { BackendConnector } from "./backend-link.ts";
import type { CallStatus, EndReason } from "./call-types.ts";
import type { TransceiverConfig } from "./config.ts";
import type { Mux } from "./core/mux.ts";
import type { PathLimits } from "./core/paths.ts";
import { ApiError } from "./errors.ts";
import type { TransceiverMetrics } from "./metrics.ts";
import { adoptCallId } from "./resume.ts";
import type { SetupLimiter } from "./setup-limit.ts";
import { Call } from "./shell/call.ts";

export interface CreateRequest extends CreateCallRequest {
  /** From the signed x-gr-caller header: counted against the setup limits. */
  caller?: Caller;
  /** Resume this call (its transceiver failed) here, under the same call id (resume.ts). */
  resume?: string;
  /** This call's own backend (a leg's conference uplink); default: the transceiver's. */
  backend?: BackendConnector;
}

export interface CreateResult extends CreateCallResponse {
  session: Call;
}

export interface CallTableDeps {
  config: TransceiverConfig;
  metrics: TransceiverMetrics;
  log: Logger;
  hintMac: MacSync;
  callIdMac: MacSync;
  setupLimiter: SetupLimiter;
  backend: BackendConnector;
  pathLimits: Partial<PathLimits> | undefined;
  mux(): Mux;
  /** Throws the ApiError that refuses a new session (draining, at capacity), if any. */
  admit(load: number): void;
  stopped(): boolean;
  /** The last live session ended. */
  onEmpty(): void;
}

const ENDED_KEEP_MS = 5 * 60_000;
const ENDED_KEEP_MAX = 10_000;

/** Maps whatever the edge sent to a bounded label value (the topology's continent codes). */
export function regionOf(continent: unknown): string {
  return typeof continent === "string" && (CONTINENTS as readonly string[]).includes(continent)
    ? continent
    : "unknown";
}

/** Call ids are bearer-like; logs keep only a prefix. */
export function redactCallId(callId: string): string {
  return `${callId.slice(0, 12)}…`;
}

export class CallTable {
  readonly live = new Map<string, Call>();
  /** Recently ended sessions (status stays readable for a few minutes). */
  readonly ended = new Map<string, { status: CallStatus; at: number }>();
  readonly #byClientUfrag = new Map<string, string>();
  readonly #d: CallTableDeps;
  /** Peer connections still closing (stop waits for them). */
  readonly closing = new Set<Promise<void>>();
  #pending = 0;

  constructor(d: CallTableDeps) {
    this.#d = d;
  }

  get load(): number {
    return this.live.size + this.#pending;
  }

  async create(req: CreateRequest, receivedAt: number): Promise<CreateResult> {
    const { config, metrics: m } = this.#d;
    try {
      this.#d.admit(this.load);
      const offer = inspectOffer(req.sdp);
      if (!offer.ok) throw new ApiError(offer.code, offer.message);
      const dupKey = `${offer.iceUfrag}:${offer.icePwd}`;
      const dup = this.#byClientUfrag.get(dupKey);
      if (dup !== undefined && this.live.has(dup)) {
        throw new ApiError(
          "duplicate_offer",
          `this offer (ice-ufrag ${offer.iceUfrag}) already has a session`,
        );
      }
      let vip: HostPort = config.globalVip;
      if (req.ingress?.vip !== undefined) {
        const hp = parseHostPort(req.ingress.vip);
        if (typeof hp === "string") throw new ApiError("body_malformed", `ingress.vip: ${hp}`);
        vip = hp;
      }
      const mac = this.#d.callIdMac;
      const callId =
        req.resume !== undefined
          ? adoptCallId(req.resume, mac, config.clusterId, this.live)
          : mintCallId(config.clusterId, config.transceiverId, randomBytes(15), mac);
      const limiter = this.#d.setupLimiter;
      const ticket = req.caller ? limiter.admit(req.caller, Date.now()) : undefined;
      this.#pending++;
      let created: { session: Call; answer: string };
      try {
        created = await Call.create(
          {
            config,
            mux: this.#d.mux(),
            metrics: m,
            hintMac: this.#d.hintMac,
            hmacSha1,
            log: this.#d.log,
            backend: this.#d.backend,
            ...(this.#d.pathLimits ? { pathLimits: this.#d.pathLimits } : {}),
            onEnded: (s) => {
              if (ticket) limiter.release(ticket);
              this.#onEnded(s, dupKey);
            },
          },
          {
            callId,
            region: regionOf(req.client?.continent),
            client: { ...(req.client ?? {}) },
            ingressVip: vip,
            popId: req.ingress?.popId,
            sessionConfig: req.session,
            offer,
            receivedAt,
            resumed: req.resume !== undefined,
            ...(req.backend ? { backend: req.backend } : {}),
          },
        );
      } catch (e) {
        if (ticket) limiter.release(ticket);
        throw e;
      } finally {
        this.#pending--;
      }
      if (ticket) ticket.session = created.session;
      if (this.#d.stopped()) {
        created.session.end("shutdown");
        throw new ApiError("draining", "this transceiver is stopping", 5);
      }
      const { session, answer } = created;
      this.live.set(callId, session);
      this.#byClientUfrag.set(dupKey, callId);
      m.callsActive.set(this.live.size);
      m.region(session.region).created.inc();
      this.#d.log.info("session created", {
        callId: redactCallId(callId),
        region: session.region,
        mdnsStripped: offer.mdnsCandidatesStripped,
      });
      const { clusterId, transceiverId } = config;
      return { callId, sdp: answer, etag: session.etag, clusterId, transceiverId, session };
    } catch (e) {
      m.failed(e instanceof ApiError ? e.code : "internal");
      if (!(e instanceof ApiError)) {
        this.#d.log.error("session create failed", { error: e as Error });
        throw new ApiError("internal", "the session could not be created");
      }
      throw e;
    }
  }

  #onEnded(s: Call, dupKey: string): void {
    this.live.delete(s.callId);
    if (this.#byClientUfrag.get(dupKey) === s.callId) this.#byClientUfrag.delete(dupKey);
    this.ended.set(s.callId, { status: s.status(), at: Date.now() });
    this.#d.metrics.callsActive.set(this.live.size);
    const closing = s.closed;
    this.closing.add(closing);
    void closing.then(() => this.closing.delete(closing));
    this.#d.log.info("session ended", { callId: redactCallId(s.callId), reason: s.endReason });
    if (this.live.size === 0) this.#d.onEmpty();
  }

  /** Resolves a call id to this transceiver's live session, or throws the precise 4xx. */
  lookup(callId: string): Call {
    const v = verifyCallId(callId, this.#d.callIdMac);
    if (!v.ok) {
      if (v.reason === "malformed" || v.reason === "unsupported-version") {
        throw new ApiError("call_id_malformed", `call id is ${v.reason}`);
      }
      throw new ApiError("call_id_unknown", "no such call");
    }
    const { clusterId, transceiverId } = this.#d.config;
    // A resumed call keeps the id another transceiver minted (resume.ts).
    const here = v.callId.transceiverId === transceiverId || this.live.has(callId) || this.ended.has(callId);
    if (v.callId.clusterId !== clusterId || !here) {
      throw new ApiError(
        "wrong_transceiver",
        `call belongs to cluster ${v.callId.clusterId} transceiver ${v.callId.transceiverId}`,
      );
    }
    const s = this.live.get(callId);
    if (s) return s;
    if (this.ended.has(callId)) throw new ApiError("call_ended", "the call has ended");
    throw new ApiError("call_id_unknown", "no such call on this transceiver");
  }

  status(callId: string): CallStatus {
    try {
      return this.lookup(callId).status();
    } catch (e) {
      const ended = this.ended.get(callId);
      if (e instanceof ApiError && e.code === "call_ended" && ended) return ended.status;
      throw e;
    }
  }

  hangup(callId: string, reason: EndReason = "hangup"): void {
    this.lookup(callId).end(reason);
  }

  /** About once a second: session timers, and forgetting old ended sessions. */
  tick(now: number): void {
    for (const s of this.live.values()) s.tick(now);
    for (const [id, e] of this.ended) {
      if (now - e.at < ENDED_KEEP_MS && this.ended.size <= ENDED_KEEP_MAX) break;
      this.ended.delete(id);
    }
  }

  endAll(reason: EndReason): void {
    for (const s of [...this.live.values()]) s.end(reason);
  }
}
