// Call vocabulary shared by the session, the API and the client-event channel.
import { FlowCloseReason } from "../../shared/backbone/frame.ts";

export type EndReason =
  | "hangup"
  | "consent_lost"
  | "max_duration"
  | "setup_timeout"
  | "ice_failed"
  | "dtls_failed"
  | "client_closed"
  | "backend_closed"
  | "backend_unavailable"
  | "drain"
  | "shutdown"
  | "error"
  // A leg (docs/cascade.md): the owner's call ended, the hub went silent, the participant was removed.
  | "call_ended"
  | "hub_lost"
  | "removed";

export const FLOW_CLOSE: Record<EndReason, number> = {
  hangup: FlowCloseReason.hangup,
  consent_lost: FlowCloseReason.consentLost,
  max_duration: FlowCloseReason.maxDuration,
  setup_timeout: FlowCloseReason.timeout,
  ice_failed: FlowCloseReason.consentLost,
  dtls_failed: FlowCloseReason.error,
  client_closed: FlowCloseReason.hangup,
  backend_closed: FlowCloseReason.hangup,
  backend_unavailable: FlowCloseReason.error,
  drain: FlowCloseReason.drain,
  shutdown: FlowCloseReason.drain,
  error: FlowCloseReason.error,
  call_ended: FlowCloseReason.hangup,
  hub_lost: FlowCloseReason.error,
  removed: FlowCloseReason.hangup,
};

export type CallState = "connecting" | "connected" | "ended";

/** GET /v1/calls/{callId} (docs/transceiver.md). */
export interface CallStatus {
  callId: string;
  state: CallState;
  clusterId: number;
  transceiverId: number;
  popId: number | null;
  region: string;
  clientAddress: string | null;
  codec: string | null;
  opusFec: boolean;
  createdAt: string;
  durationMs: number;
  timings: {
    offerToAnswerMs: number | null;
    answerToIceConnectedMs: number | null;
    answerToDtlsConnectedMs: number | null;
    answerToFirstAudioMs: number | null;
  };
  iceRttMs: number | null;
  iceRestarts: number;
  addressChanges: number;
  packets: { fromClient: number; toClient: number };
  backend: {
    state: string;
    framesToBackend: number;
    framesFromBackend: number;
    droppedToBackend: number;
    droppedToClient: number;
  };
  endReason: EndReason | null;
  endedAt: string | null;
  /** The call's conference (the hub's participants, or the leg's link to its hub); null: none. */
  conference: Record<string, unknown> | null;
  /** Repair of the client's audio (shell/client-hop.ts); null before the answer. */
  clientRepair: ClientRepairStatus | null;
}

/** The client hop's repair counters (shell/client-hop.ts), as the call's status shows them. */
export interface ClientRepairStatus {
  red: boolean;
  nack: boolean;
  /** RED packets received from the client (it sends RED when red precedes Opus in the answer). */
  redPackets: number;
  /** Frames taken from a RED redundant block because the packet carrying them was lost. */
  recovered: number;
  duplicates: number;
  /** Seqs asked again by NACK (retries included), and those that then arrived. */
  nacked: number;
  repaired: number;
  /** Gaps given up (neither recovered nor repaired). */
  lost: number;
}
