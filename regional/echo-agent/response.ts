// The server events of one Realtime response, in the order a Realtime client expects them:
// response.created → output_item.added → conversation.item.added → content_part.added →
// (output_audio_transcript | output_text).delta → .done → content_part.done → output_item.done
// → conversation.item.done → response.done. The echo "model" answers with the text it was given
// (its audio is the caller's own, echoed on the media track, as WebRTC carries it).
import type { JsonObject } from "../../shared/realtime/session.ts";

export interface ResponseInput {
  responseId: string;
  itemId: string;
  conversationId: string;
  /** "audio" or "text" (the session's or the request's output_modalities). */
  modality: "audio" | "text";
  text: string;
  /** The item before this one in the conversation; undefined when out of band. */
  previousItemId: string | null | undefined;
  outOfBand: boolean;
  metadata: JsonObject | null;
  audioOutput: JsonObject | null;
}

/** The events without event_id (the caller stamps each as it sends it). */
export function responseEvents(r: ResponseInput): JsonObject[] {
  const response = (status: string, output: JsonObject[]): JsonObject => ({
    object: "realtime.response",
    id: r.responseId,
    status,
    status_details: null,
    output,
    conversation_id: r.outOfBand ? null : r.conversationId,
    output_modalities: [r.modality],
    max_output_tokens: "inf",
    audio: r.audioOutput ? { output: r.audioOutput } : null,
    metadata: r.metadata,
    usage:
      status === "completed"
        ? {
            total_tokens: 0,
            input_tokens: 0,
            output_tokens: 0,
            input_token_details: { text_tokens: 0, audio_tokens: 0, cached_tokens: 0 },
            output_token_details: { text_tokens: 0, audio_tokens: 0 },
          }
        : null,
  });
  const audio = r.modality === "audio";
  const finalContent: JsonObject = audio
    ? { type: "output_audio", transcript: r.text }
    : { type: "output_text", text: r.text };
  const item = (status: string, content: JsonObject[]): JsonObject => ({
    id: r.itemId,
    object: "realtime.item",
    type: "message",
    role: "assistant",
    status,
    content,
  });
  const at = { response_id: r.responseId, item_id: r.itemId, output_index: 0, content_index: 0 };
  const part = (text: string): JsonObject =>
    audio ? { type: "audio", transcript: text } : { type: "text", text };
  const done = item("completed", [finalContent]);
  const conv = (type: string, it: JsonObject): JsonObject[] =>
    r.outOfBand ? [] : [{ type, previous_item_id: r.previousItemId ?? null, item: it }];
  return [
    { type: "response.created", response: response("in_progress", []) },
    {
      type: "response.output_item.added",
      response_id: r.responseId,
      output_index: 0,
      item: item("in_progress", []),
    },
    ...conv("conversation.item.added", item("in_progress", [])),
    { type: "response.content_part.added", ...at, part: part("") },
    audio
      ? { type: "response.output_audio_transcript.delta", ...at, delta: r.text }
      : { type: "response.output_text.delta", ...at, delta: r.text },
    audio
      ? { type: "response.output_audio_transcript.done", ...at, transcript: r.text }
      : { type: "response.output_text.done", ...at, text: r.text },
    { type: "response.content_part.done", ...at, part: part(r.text) },
    { type: "response.output_item.done", response_id: r.responseId, output_index: 0, item: done },
    ...conv("conversation.item.done", done),
    { type: "response.done", response: response("completed", [done]) },
  ];
}
