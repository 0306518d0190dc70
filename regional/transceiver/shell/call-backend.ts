// A session's backend link: opened through the injected connector, its events wired to the
// client channel and the session's end, and the session.started event that opens the protocol
// (docs/backend-protocol.md).
import {
  type BackendConnector,
  type BackendLink,
  type BridgeErrorReason,
  isLinkEndReason,
} from "../backend-link.ts";
import { type AudioFrameHeader, BridgeEvent, ClientNotice } from "../backend-protocol.ts";
import type { EndReason } from "../call-types.ts";
import type { TransceiverMetrics } from "../metrics.ts";
import type { CallAudio } from "./audio.ts";
import type { CallDeps, CallInit } from "./call-deps.ts";
import type { ClientEvents } from "./client-events.ts";

export interface BackendHost {
  readonly callId: string;
  ended(): boolean;
  now(): number;
  onAudio(h: AudioFrameHeader, payload: Buffer): void;
  /** A backend event, after the client got it (a conference carries it on). */
  onEvent?(text: string): void;
  end(reason: EndReason): void;
}

/** Opens the call's link (its own connector, e.g. a leg's uplink, or the transceiver's) and says session.started. */
export function startBackend(
  d: CallDeps,
  host: BackendHost,
  events: ClientEvents,
  audio: CallAudio,
  init: CallInit,
): BackendLink {
  const ids = { clusterId: d.config.clusterId, transceiverId: d.config.transceiverId };
  const media = { codec: audio.sendCodec, opusFec: init.offer.opusFec };
  const link = openBackend(init.backend ?? d.backend, ids, media, host, events, d.metrics);
  link.sendEvent(
    startedEvent({
      callId: host.callId,
      ...ids,
      codec: audio.sendCodec,
      codecName: audio.codecName,
      opusFec: init.offer.opusFec,
      client: init.client,
      sessionConfig: init.sessionConfig,
      dataChannel: init.offer.hasDataChannel,
      resumed: init.resumed === true,
    }),
  );
  return link;
}

export function openBackend(
  connector: BackendConnector,
  ids: { clusterId: number; transceiverId: number },
  media: { codec: number; opusFec: boolean },
  host: BackendHost,
  events: ClientEvents,
  m: TransceiverMetrics,
): BackendLink {
  const link: BackendLink = connector.open(
    { callId: host.callId, ...ids, ...media },
    {
      onAudio: (h, payload) => host.onAudio(h, payload),
      onEvent: (text) => {
        events.send(text);
        host.onEvent?.(text);
      },
      onDrop: () => {
        m.backendDroppedToBackend.inc();
        events.noticeDropped(host.now(), link.droppedToBackend);
      },
      onError: (reason: BridgeErrorReason) => m.backendError(reason),
      onClose: (code, reason) => {
        if (host.ended()) return;
        // A conference uplink names the leg's end itself (docs/cascade.md).
        if (isLinkEndReason(reason)) {
          host.end(reason);
          return;
        }
        const never = link.framesFromBackend === 0 && code === 1006;
        events.send(
          JSON.stringify({
            type: ClientNotice.backendUnavailable,
            reason: never ? "backend connection failed" : `backend closed (${code})`,
          }),
        );
        host.end(never ? "backend_unavailable" : "backend_closed");
      },
    },
  );
  return link;
}

export interface StartedInfo {
  callId: string;
  clusterId: number;
  transceiverId: number;
  codec: number;
  codecName: string | undefined;
  opusFec: boolean;
  client: Record<string, unknown>;
  sessionConfig: unknown;
  dataChannel: boolean;
  /** Resumed here after its transceiver failed. */
  resumed: boolean;
}

export function startedEvent(s: StartedInfo): string {
  return JSON.stringify({
    type: BridgeEvent.started,
    call_id: s.callId,
    cluster_id: s.clusterId,
    transceiver_id: s.transceiverId,
    audio: {
      codec: s.codecName ?? "unknown",
      clock_rate: s.codec === 1 ? 48000 : 8000,
      channels: s.codec === 1 ? 2 : 1,
      frame_ms: 20,
      fec: s.opusFec,
    },
    client: s.client,
    session: s.sessionConfig ?? null,
    data_channel: s.dataChannel,
    resumed: s.resumed,
  });
}
