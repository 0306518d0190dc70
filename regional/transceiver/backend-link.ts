// The contract between a session and its backend (docs/backend-protocol.md): the session opens a
// link through the BackendConnector it was given (main.ts chooses the WebSocket bridge or an
// in-process backend), so the transceiver never imports a backend.
import type { AudioFrameHeader } from "./backend-protocol.ts";

export interface BridgeHandlers {
  onAudio(h: AudioFrameHeader, payload: Buffer): void;
  onEvent(text: string): void;
  /** Dropped frames towards the backend (already counted in `droppedToBackend`). */
  onDrop(kind: "audio" | "event"): void;
  onError(reason: BridgeErrorReason): void;
  /** The backend connection is gone for good (after open or after a failed connect). */
  onClose(code: number, reason: string): void;
}

/** What a session needs from its backend connection (WebSocket or in-process). */
export interface BackendLink {
  readonly state: "connecting" | "open" | "closed";
  readonly droppedToBackend: number;
  readonly framesToBackend: number;
  readonly framesFromBackend: number;
  sendAudio(h: AudioFrameHeader, payload: Uint8Array): void;
  sendEvent(text: string): void;
  close(finalEvent?: string): void;
}

export type BridgeErrorReason = "connect_failed" | "bad_frame" | "socket_error" | "event_too_large";

/** The call a backend link is opened for. */
export interface BackendCall {
  callId: string;
  clusterId: number;
  transceiverId: number;
  /** The codec the call's client receives (backend-protocol.ts AudioCodec) and its Opus FEC. */
  codec?: number;
  opusFec?: boolean;
}

/**
 * Close reasons a link may give `onClose` to end its call with that EndReason (a conference
 * uplink: the owner's call ended, the hub went silent, the participant was removed).
 */
export const LINK_END_REASONS = ["call_ended", "hub_lost", "removed"] as const;
export type LinkEndReason = (typeof LINK_END_REASONS)[number];
export const isLinkEndReason = (r: string): r is LinkEndReason =>
  (LINK_END_REASONS as readonly string[]).includes(r);

/** Opens one backend link per session. */
export interface BackendConnector {
  open(call: BackendCall, h: BridgeHandlers): BackendLink;
  /** The transceiver stops: connections that outlive a call (shared ones) close after what is queued. */
  close?(): void;
}

/** BACKEND_URL of the in-process echo agent (no sockets): `internal:echo` or `internal:echo?delay_ms=40`. */
export const INTERNAL_ECHO = "internal:echo";
