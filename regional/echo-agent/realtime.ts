// The echo backend as a Realtime model would behave on `oai-events` (docs/backend-protocol.md):
// session.created at the start, session.update → session.updated with the merged session,
// speech_started / speech_stopped from a VAD over the caller's audio (then commit, the user item
// and, with turn_detection.create_response, a response), conversation items and responses, and a
// Realtime `error` event for anything it does not take. Every server event carries an event_id.
// A resumed call (session.started with `resumed: true`) gets its kept conversation back through
// `attach` (kept-calls.ts) and session.created says so.
// Pure: text, frames and time in; event text out through `send`.
import { defaultSession, type Json, type JsonObject, mergeSession } from "../../shared/realtime/session.ts";
import { BridgeEvent } from "../transceiver/backend-protocol.ts";
import { Conversation } from "./conversation.ts";
import { responseEvents } from "./response.ts";
import { Vad, type VadSettings } from "./vad.ts";

export interface RealtimeEchoDeps {
  /** One server event (JSON text) for the client. */
  send(text: string): void;
  /** A fresh id with this prefix ("event", "item", "resp", …). */
  id(prefix: string): string;
  /** session.started for `callId`: a resumed call's kept conversation, if any (kept-calls.ts). */
  attach?(callId: string, resumed: boolean): EchoConversationState | undefined;
  /** session.ended for `callId` (with the reason the transceiver gave). */
  ended?(callId: string, reason: string): void;
}

/** What a resumed call gets back: the conversation as it stood when its connection dropped. */
export interface EchoConversationState {
  session: JsonObject;
  conversationId: string;
  items: JsonObject[];
  lastItemId: string | null;
  responses: number;
}

/** A session larger than this (as JSON) is refused: it is echoed in every session.updated. */
export const MAX_SESSION_JSON = 16 * 1024;
const SESSION_TTL_S = 3600;

const CLIENT_EVENTS = [
  "session.update",
  "input_audio_buffer.append",
  "input_audio_buffer.commit",
  "input_audio_buffer.clear",
  "output_audio_buffer.clear",
  "conversation.item.create",
  "conversation.item.retrieve",
  "conversation.item.truncate",
  "conversation.item.delete",
  "response.create",
  "response.cancel",
];

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

export class RealtimeEcho {
  readonly #d: RealtimeEchoDeps;
  #session: JsonObject;
  #conversationId: string;
  readonly #conv: Conversation;
  readonly #vad: Vad;
  #speechItemId = "";
  #audioStartMs = -1;
  #started = false;
  #callId: string | undefined;
  #responses = 0;

  constructor(d: RealtimeEchoDeps, nowS: number) {
    this.#d = d;
    this.#session = defaultSession(d.id("sess"), nowS + SESSION_TTL_S);
    this.#conversationId = d.id("conv");
    this.#conv = new Conversation({
      emit: (ev) => this.#emit(ev),
      error: (code, message, cause, param) => this.#error(code, message, cause, param ?? null),
      id: d.id,
    });
    this.#vad = new Vad(this.#vadSettings());
  }

  get session(): JsonObject {
    return this.#session;
  }

  /** The call id session.started named (undefined before it). */
  get callId(): string | undefined {
    return this.#callId;
  }

  snapshot(): EchoConversationState {
    return {
      session: this.#session,
      conversationId: this.#conversationId,
      items: this.#conv.items,
      lastItemId: this.#conv.lastItemId,
      responses: this.#responses,
    };
  }

  /** Whether the owner should call tick() (speech is in progress and frames may stop). */
  get speaking(): boolean {
    return this.#vad.speaking;
  }

  #emit(ev: JsonObject): void {
    this.#d.send(JSON.stringify({ type: ev.type, event_id: this.#d.id("event"), ...ev }));
  }

  #error(code: string, message: string, cause: JsonObject | null, param: string | null = null): void {
    this.#emit({
      type: "error",
      error: {
        type: "invalid_request_error",
        code,
        message,
        param,
        event_id: cause ? (str(cause.event_id) ?? null) : null,
      },
    });
  }

  /** Any text message from the transceiver: bridge events and the client's events. */
  event(text: string): void {
    let ev: unknown;
    try {
      ev = JSON.parse(text);
    } catch {
      this.#error("invalid_json", "the event is not valid JSON", null);
      return;
    }
    if (!isObject(ev) || typeof ev.type !== "string") {
      this.#error("invalid_event", "an event must be a JSON object with a string `type`", null, "type");
      return;
    }
    this.#dispatch(ev.type, ev);
  }

  #dispatch(type: string, ev: JsonObject): void {
    switch (type) {
      case BridgeEvent.started:
        this.#start(ev);
        break;
      case BridgeEvent.ended:
        if (this.#callId !== undefined) this.#d.ended?.(this.#callId, str(ev.reason) ?? "");
        break;
      case BridgeEvent.participantJoined:
      case BridgeEvent.participantLeft:
        // The bridge's roster news (docs/backend-protocol.md): nothing to answer; each
        // participant's audio is echoed to that participant by its slot.
        break;
      case "ping": // the demo page's round trip
        this.#emit({ type: "pong" });
        break;
      case "session.update":
        this.#update(ev);
        break;
      case "input_audio_buffer.append":
        break; // WebRTC carries audio on the media track; accepted and ignored
      case "input_audio_buffer.commit":
        this.#commit(this.#speechItemId || this.#d.id("item"));
        break;
      case "input_audio_buffer.clear":
        this.#emit({ type: "input_audio_buffer.cleared" });
        break;
      case "output_audio_buffer.clear":
        this.#emit({ type: "output_audio_buffer.cleared", response_id: null });
        break;
      case "conversation.item.create":
        this.#conv.create(ev);
        break;
      case "conversation.item.retrieve":
      case "conversation.item.delete":
      case "conversation.item.truncate":
        this.#conv.act(type, ev);
        break;
      case "response.create":
        this.#respond(ev);
        break;
      case "response.cancel":
        this.#error("response_cancel_not_active", "there is no response in progress to cancel", ev);
        break;
      default:
        this.#error(
          "invalid_value",
          `unknown event type ${JSON.stringify(type.slice(0, 64))}; supported: ${CLIENT_EVENTS.join(", ")}`,
          ev,
          "type",
        );
    }
  }

  #start(ev: JsonObject): void {
    if (this.#started) return;
    this.#started = true;
    this.#callId = str(ev.call_id);
    const resumed = ev.resumed === true;
    const kept = this.#callId === undefined ? undefined : this.#d.attach?.(this.#callId, resumed);
    if (kept) {
      // The kept session already holds the start config and every session.update since.
      this.#session = kept.session;
      this.#conversationId = kept.conversationId;
      this.#conv.restore(kept.items, kept.lastItemId);
      this.#responses = kept.responses;
    } else if (isObject(ev.session)) {
      // The session configured at calls.create (or bound to the client secret) is the start.
      this.#session = mergeSession(this.#session, ev.session);
    }
    this.#vad.configure(this.#vadSettings());
    // Extra top-level fields are ignored by the OpenAI SDKs; a resumed call says what it got back.
    const resume: JsonObject = !resumed
      ? {}
      : {
          resumed: kept !== undefined,
          conversation_id: this.#conversationId,
          item_count: kept ? this.#conv.items.length : 0,
          response_count: this.#responses,
        };
    this.#emit({ type: "session.created", session: this.#session, ...resume });
  }

  #update(ev: JsonObject): void {
    if (!isObject(ev.session)) {
      this.#error("missing_required_parameter", "session.update needs a `session` object", ev, "session");
      return;
    }
    if (ev.session.type !== undefined && ev.session.type !== "realtime") {
      this.#error("invalid_value", 'session.type must be "realtime"', ev, "session.type");
      return;
    }
    const next = mergeSession(this.#session, ev.session);
    if (JSON.stringify(next).length > MAX_SESSION_JSON) {
      this.#error("session_too_large", `the session may be at most ${MAX_SESSION_JSON} bytes of JSON`, ev);
      return;
    }
    this.#session = next;
    this.#vad.configure(this.#vadSettings());
    this.#emit({ type: "session.updated", session: next });
  }

  #turnDetection(): JsonObject | null {
    const audio = this.#session.audio;
    const input = isObject(audio) ? audio.input : undefined;
    const td = isObject(input) ? input.turn_detection : undefined;
    return isObject(td) ? td : null;
  }

  #vadSettings(): VadSettings {
    const td = this.#turnDetection();
    const num = (v: Json | undefined, d: number, lo: number, hi: number): number =>
      typeof v === "number" && Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : d;
    return {
      threshold: num(td?.threshold, 0.5, 0, 1),
      startMs: 60,
      silenceMs: num(td?.silence_duration_ms, 500, 100, 10_000),
    };
  }

  #respond(ev: JsonObject | null): void {
    const r = ev && isObject(ev.response) ? ev.response : {};
    const modalities = r.output_modalities ?? this.#session.output_modalities;
    const modality = Array.isArray(modalities) && modalities[0] === "text" ? "text" : "audio";
    const outOfBand = r.conversation === "none";
    const audio = this.#session.audio;
    const output = isObject(audio) && isObject(audio.output) ? audio.output : null;
    const events = responseEvents({
      responseId: this.#d.id("resp"),
      itemId: this.#d.id("item"),
      conversationId: this.#conversationId,
      modality,
      text: this.#conv.echoText(r.input),
      previousItemId: this.#conv.lastItemId,
      outOfBand,
      metadata: isObject(r.metadata) ? r.metadata : null,
      audioOutput: output ? { format: output.format ?? null, voice: output.voice ?? null } : null,
    });
    this.#responses++;
    for (const e of events) this.#emit(e);
    if (!outOfBand) {
      const done = events.at(-1)!.response as JsonObject;
      this.#conv.remember((done.output as JsonObject[])[0]!);
    }
  }

  #commit(itemId: string): void {
    const previous = this.#conv.lastItemId;
    this.#emit({ type: "input_audio_buffer.committed", previous_item_id: previous, item_id: itemId });
    const item: JsonObject = {
      id: itemId,
      object: "realtime.item",
      type: "message",
      role: "user",
      status: "completed",
      content: [{ type: "input_audio", transcript: null }],
    };
    this.#conv.announce(item, previous);
    this.#speechItemId = "";
  }

  // ---- audio ----------------------------------------------------------------------------

  /** One audio frame from the caller at `nowMs` (wall or monotonic, consistently). */
  audio(codec: number, flags: number, payload: Uint8Array, nowMs: number): void {
    if (this.#audioStartMs < 0) this.#audioStartMs = nowMs;
    const td = this.#turnDetection();
    if (td === null) return;
    this.#onVad(this.#vad.frame(codec, flags, payload, nowMs), td);
  }

  tick(nowMs: number): void {
    const td = this.#turnDetection();
    if (td !== null) this.#onVad(this.#vad.tick(nowMs), td);
  }

  #onVad(v: ReturnType<Vad["tick"]>, td: JsonObject): void {
    if (v === null) return;
    const at = Math.max(0, Math.round(v.atMs - this.#audioStartMs));
    if (v.kind === "started") {
      this.#speechItemId = this.#d.id("item");
      this.#emit({
        type: "input_audio_buffer.speech_started",
        audio_start_ms: at,
        item_id: this.#speechItemId,
      });
      return;
    }
    const itemId = this.#speechItemId || this.#d.id("item");
    this.#emit({ type: "input_audio_buffer.speech_stopped", audio_end_ms: at, item_id: itemId });
    this.#commit(itemId);
    if (td.create_response !== false) this.#respond(null);
  }
}
