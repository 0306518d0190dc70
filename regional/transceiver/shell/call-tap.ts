// What a conference attaches to a call (docs/cascade.md): the hub side of the owner's call, or
// the leg's view of its own call. The call hands it the client's audio after the backend got it,
// offers it each backend frame before playing it, and tells it the end; with no tap the call's
// media path is exactly the one-client path.
import type { AudioFrameHeader } from "../backend-protocol.ts";
import type { EndReason } from "../call-types.ts";

export interface CallTap {
  /** The client's frame (labelled with its slot), after it went to the backend. */
  clientAudio?(h: AudioFrameHeader, payload: Uint8Array): void;
  /** A backend frame; true when the tap took it (the call does not play it itself). */
  backendAudio?(h: AudioFrameHeader, payload: Uint8Array): boolean;
  /** The client's text event before it goes to the backend: what to send instead. */
  clientEvent?(text: string): string;
  /** A backend text event (the call's own client got it already). */
  backendEvent?(text: string): void;
  /** The call ended (once). */
  ended(reason: EndReason): void;
  /** The `conference` block of the call's status. */
  status(): Record<string, unknown>;
}
