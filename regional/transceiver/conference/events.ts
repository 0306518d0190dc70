// The JSON of events across the cascade (docs/transceiver.md "Conferences"): a joiner's event
// tagged for the backend, the notice of events lost, the Realtime error for a joiner's event too large.
import { EVENT_MAX_BYTES } from "../../../shared/conference/event.ts";

export const EVENTS_LOST = "transceiver.events_lost";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Whether a joiner may not send this event: what sets the instructions or the tools is the call's,
 * its owner's (a joiner's would hold for everyone): `session.*` and `transcription_session.*`,
 * a conversation item of role "system", a `response.create` that sets `instructions` or `tools`.
 */
export function joinerMayNotSend(ev: Obj): boolean {
  const type = ev.type;
  if (typeof type !== "string") return false;
  if (type.startsWith("session.") || type.startsWith("transcription_session.")) return true;
  if (type === "conversation.item.create") return isObj(ev.item) && ev.item.role === "system";
  if (type === "response.create" && isObj(ev.response))
    return ev.response.instructions !== undefined || ev.response.tools !== undefined;
  return false;
}

/**
 * A joiner's event for the backend: its JSON object with participant_id and slot set by the hub
 * (whatever the joiner wrote there), `{ refused: type }` for a type a joiner may not send, or
 * undefined if it is not a JSON object.
 */
export function readJoinerEvent(
  text: string,
  participantId: string,
  slot: number,
): string | { refused: string } | undefined {
  const ev = jsonObject(text);
  if (ev === undefined) return undefined;
  if (joinerMayNotSend(ev)) return { refused: ev.type as string };
  ev.participant_id = participantId;
  ev.slot = slot;
  return JSON.stringify(ev);
}

/** The JSON object in `text`, or undefined (not JSON, or not an object). */
function jsonObject(text: string): Obj | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isObj(v) ? v : undefined;
}

/**
 * The owner's client's event while the call has joiners: as it is, but without top-level
 * participant_id / slot (those name a joiner to the backend; the owner's client may not
 * pose as one). A text that names neither is not parsed.
 */
export function untagOwnerEvent(text: string): string {
  if (!text.includes('"participant_id"') && !text.includes('"slot"')) return text;
  const ev = jsonObject(text);
  if (ev === undefined) return text;
  if (!("participant_id" in ev) && !("slot" in ev)) return text;
  delete ev.participant_id;
  delete ev.slot;
  return JSON.stringify(ev);
}

/** A joiner's event for the backend, tagged; undefined if not an object or not a joiner's to send. */
export function tagJoinerEvent(text: string, participantId: string, slot: number): string | undefined {
  const r = readJoinerEvent(text, participantId, slot);
  return typeof r === "string" ? r : undefined;
}

/** The Realtime `error` a joiner gets for an event it may not send (it is not carried). */
export const eventNotAllowedError = (type: string): string =>
  JSON.stringify({
    type: "error",
    error: {
      type: "invalid_request_error",
      code: "event_not_allowed",
      message: `a participant who joined the call may not send this ${type.slice(0, 64)}: the session's instructions and tools are the owner's`,
      event_type: type.slice(0, 64),
    },
  });

/** Events of a stream given up: to_client (the leg's client missed backend events) or to_backend (its own). */
export const eventsLostEvent = (direction: "to_client" | "to_backend", lost: number): string =>
  JSON.stringify({ type: EVENTS_LOST, direction, lost });

/** The Realtime `error` a joiner's client gets for its own event too large to carry (`bytes` of UTF-8). */
export function eventTooLargeError(text: string, bytes: number): string {
  const m = /^\s*\{\s*"type"\s*:\s*"([A-Za-z0-9_.]{1,64})"/.exec(text);
  return JSON.stringify({
    type: "error",
    error: {
      type: "invalid_request_error",
      code: "event_too_large",
      message: `the event is ${bytes} bytes; a conference carries events of at most ${EVENT_MAX_BYTES} bytes`,
      event_type: m?.[1] ?? null,
    },
  });
}
