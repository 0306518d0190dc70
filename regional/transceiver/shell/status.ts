// GET /v1/calls/{callId}: a session's status from its parts (docs/transceiver.md).
import type { BackendLink } from "../backend-link.ts";
import type { CallState, CallStatus, EndReason } from "../call-types.ts";

export interface StatusParts {
  session: {
    callId: string;
    state: CallState;
    region: string;
    createdAt: number;
    endedAt: number;
    endReason: EndReason | undefined;
    iceRestarts: number;
    addressChanges: number;
    packetsFromClient: number;
    packetsToClient: number;
  };
  ids: { clusterId: number; transceiverId: number };
  /** The POP named at create time, until a validated path names one. */
  popId: number | undefined;
  opusFec: boolean;
  path: { address: string; popId: number } | undefined;
  codec: string | undefined;
  timings: CallStatus["timings"];
  /** Selected pair round trip, seconds. */
  rtt: number | undefined;
  bridge: BackendLink | undefined;
  droppedToClient: number;
  conference: Record<string, unknown> | null;
  clientRepair: CallStatus["clientRepair"] | undefined;
}

export function callStatus(p: StatusParts): CallStatus {
  const s = p.session;
  const b = p.bridge;
  return {
    callId: s.callId,
    state: s.state,
    clusterId: p.ids.clusterId,
    transceiverId: p.ids.transceiverId,
    popId: p.path?.popId ?? p.popId ?? null,
    region: s.region,
    clientAddress: p.path?.address ?? null,
    codec: p.codec ?? null,
    opusFec: p.opusFec,
    createdAt: new Date(s.createdAt).toISOString(),
    durationMs: (s.endedAt || Date.now()) - s.createdAt,
    timings: p.timings,
    iceRttMs: p.rtt === undefined ? null : Math.round(p.rtt * 1000 * 10) / 10,
    iceRestarts: s.iceRestarts,
    addressChanges: s.addressChanges,
    packets: { fromClient: s.packetsFromClient, toClient: s.packetsToClient },
    backend: {
      state: b?.state ?? "closed",
      framesToBackend: b?.framesToBackend ?? 0,
      framesFromBackend: b?.framesFromBackend ?? 0,
      droppedToBackend: b?.droppedToBackend ?? 0,
      droppedToClient: p.droppedToClient,
    },
    endReason: s.endReason ?? null,
    endedAt: s.endedAt > 0 ? new Date(s.endedAt).toISOString() : null,
    conference: p.conference,
    clientRepair: p.clientRepair ?? null,
  };
}
