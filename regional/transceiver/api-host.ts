// What the signalling API (api.ts, api-ws.ts) needs of the transceiver, which implements it: the
// API never imports transceiver.ts, so the two do not import each other.
import type { Logger } from "../common/log.ts";
import type { CallStatus, EndReason } from "./call-types.ts";
import type { CreateRequest, CreateResult } from "./calls.ts";
import type { Conferences } from "./conference/conferences.ts";
import type { TransceiverConfig } from "./config.ts";
import type { TransceiverMetrics } from "./metrics.ts";
import type { Call } from "./shell/call.ts";
import type { RequestVerifier } from "./signing.ts";

/** What the API needs of the transceiver (which implements it): no import back. */
export interface ApiHost {
  readonly config: TransceiverConfig;
  readonly metrics: TransceiverMetrics;
  readonly log: Logger;
  readonly verifier: RequestVerifier;
  readonly draining: boolean;
  readonly load: number;
  /** Conferences (participants, legs); undefined without GR_BACKBONE_KEYS. */
  readonly conferences: Conferences | undefined;
  health(): Record<string, unknown>;
  create(req: CreateRequest, receivedAt: number): Promise<CreateResult>;
  lookup(callId: string): Call;
  status(callId: string): CallStatus;
  hangup(callId: string, reason?: EndReason): void;
}
