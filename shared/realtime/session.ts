// The Realtime session object as the edge reports it (client_secrets) and the default backend
// keeps it (session.created / session.updated): OpenAI's defaults for a realtime session, with
// what the caller configured merged over them. Pure: ids and time come in as arguments.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** The model name the echo backend reports; a real backend reports its own. */
export const ECHO_MODEL = "gr-echo";

/** A realtime session with every field a client reads, before the caller's configuration. */
export function defaultSession(id: string, expiresAt: number): JsonObject {
  return {
    type: "realtime",
    object: "realtime.session",
    id,
    model: ECHO_MODEL,
    output_modalities: ["audio"],
    instructions: "",
    tools: [],
    tool_choice: "auto",
    max_output_tokens: "inf",
    tracing: null,
    prompt: null,
    truncation: "auto",
    expires_at: expiresAt,
    include: null,
    audio: {
      input: {
        format: { type: "audio/pcm", rate: 24000 },
        transcription: null,
        noise_reduction: null,
        turn_detection: {
          type: "server_vad",
          threshold: 0.5,
          prefix_padding_ms: 300,
          silence_duration_ms: 500,
          idle_timeout_ms: null,
          create_response: true,
          interrupt_response: true,
        },
      },
      output: { format: { type: "audio/pcm", rate: 24000 }, voice: "alloy", speed: 1 },
    },
  };
}

/** Fields a client may not change: they identify the session. */
const FIXED = new Set(["id", "object", "expires_at"]);
const MAX_DEPTH = 8;

/**
 * `patch` merged over `base` (a new object): objects merge key by key, anything else (arrays,
 * null, scalars) replaces. Identity fields keep their value; `type` may only be "realtime".
 */
export function mergeSession(base: JsonObject, patch: unknown): JsonObject {
  if (!isObject(patch)) return base;
  const out = mergeObjects(base, patch, 0);
  for (const k of FIXED) if (k in base) out[k] = base[k]!;
  out.type = "realtime";
  return out;
}

function mergeObjects(base: JsonObject, patch: JsonObject, depth: number): JsonObject {
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (k === "__proto__" || v === undefined) continue;
    const b = out[k];
    out[k] = isObject(b) && isObject(v) && depth < MAX_DEPTH ? mergeObjects(b, v, depth + 1) : v;
  }
  return out;
}
