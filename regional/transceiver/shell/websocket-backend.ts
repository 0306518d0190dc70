// BACKEND_URL ws(s)://: the connector that main.ts / startTransceiver give the calls. With
// BACKEND_SHARED_CONNECTIONS > 0 (default 4) calls share a few WebSockets when the backend agrees
// (shared-backend.ts), else each call opens its own (bridge.ts), the call named in its headers.
import type { BackendCall, BackendConnector, BridgeErrorReason, BridgeHandlers } from "../backend-link.ts";
import { backendHeaders } from "../backend-protocol.ts";
import type { TransceiverConfig } from "../config.ts";
import type { TransceiverMetrics } from "../metrics.ts";
import { BackendBridge } from "./bridge.ts";
import { SharedBackend } from "./shared-backend.ts";

/** Where a shared connection counts what is no one call's: bad messages, connections open. */
export type WebSocketBackendMetrics = Pick<TransceiverMetrics, "backendError" | "backendSharedConnections">;

type BackendSettings = Pick<
  TransceiverConfig,
  | "backendUrl"
  | "backendQueueBytes"
  | "backendConnectTimeoutMs"
  | "backendSharedConnections"
  | "clusterId"
  | "transceiverId"
>;

export function webSocketBackend(c: BackendSettings, m?: WebSocketBackendMetrics): BackendConnector {
  const o = {
    url: c.backendUrl,
    queueBytes: c.backendQueueBytes,
    connectTimeoutMs: c.backendConnectTimeoutMs,
  };
  const perCall = (call: BackendCall, h: BridgeHandlers) =>
    new BackendBridge(
      {
        ...o,
        headers: backendHeaders(call.clusterId, call.transceiverId, call.callId),
      },
      h,
    );
  if (c.backendSharedConnections === 0) return { open: perCall };
  return new SharedBackend({
    ...o,
    clusterId: c.clusterId,
    transceiverId: c.transceiverId,
    connections: c.backendSharedConnections,
    perCall,
    onError: (reason: BridgeErrorReason) => m?.backendError(reason),
    onConnections: (open: number) => m?.backendSharedConnections.set(open),
    now: () => performance.now(),
  });
}
