// What a session is built from: its dependencies (one set per transceiver) and its init (one
// per call, from the checked offer and the signed request).
import type { MacSync } from "../../../shared/hint/codec.ts";
import type { OfferInfo } from "../../../shared/sdp/offer.ts";
import type { HmacSha1 } from "../../../shared/stun/integrity.ts";
import type { HostPort } from "../../../shared/topology/address.ts";
import type { Logger } from "../../common/log.ts";
import type { BackendConnector } from "../backend-link.ts";
import type { TransceiverConfig } from "../config.ts";
import type { Mux } from "../core/mux.ts";
import type { PathLimits } from "../core/paths.ts";
import type { TransceiverMetrics } from "../metrics.ts";
import type { Call } from "./call.ts";

export interface CallDeps {
  config: TransceiverConfig;
  mux: Mux;
  metrics: TransceiverMetrics;
  hintMac: MacSync;
  hmacSha1: HmacSha1;
  log: Logger;
  backend: BackendConnector;
  /** Overrides of the path book's limits (tests); `quietMs` comes from PATH_QUIET_MS. */
  pathLimits?: Partial<PathLimits>;
  onEnded(s: Call): void;
}

export interface CallInit {
  callId: string;
  region: string;
  client: Record<string, unknown>;
  ingressVip: HostPort;
  popId: number | undefined;
  sessionConfig: unknown;
  offer: OfferInfo;
  /** performance.now() when the request arrived. */
  receivedAt: number;
  /** The call was resumed here after its transceiver failed (told to the backend). */
  resumed?: boolean;
  /** This call's own backend (a leg's conference uplink); default: the transceiver's. */
  backend?: BackendConnector;
}
