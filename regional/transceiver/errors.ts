// One error catalogue for the cluster signalling API. Every failure travels as an ApiError and is
// rendered the same way: `{ error: { type, code, message } }` with the catalogue's status.

export const ERRORS = {
  // 400
  body_malformed: { status: 400, type: "invalid_request_error" },
  sdp_malformed: { status: 400, type: "invalid_request_error" },
  sdpfrag_malformed: { status: 400, type: "invalid_request_error" },
  call_id_malformed: { status: 400, type: "invalid_request_error" },
  // 401
  unauthorized: { status: 401, type: "authentication_error" },
  // 404
  not_found: { status: 404, type: "not_found_error" },
  call_id_unknown: { status: 404, type: "not_found_error" },
  call_ended: { status: 404, type: "not_found_error" },
  participant_unknown: { status: 404, type: "not_found_error" },
  // Not 421: fetch implementations retry a 421 on a new connection, which replays the nonce.
  wrong_transceiver: { status: 404, type: "not_found_error" },
  // 405
  method_not_allowed: { status: 405, type: "invalid_request_error" },
  // 409
  duplicate_offer: { status: 409, type: "conflict_error" },
  // the call has CONFERENCE_MAX_PARTICIPANTS participants (its own client included)
  participant_limit: { status: 409, type: "conflict_error" },
  // 412 / 428
  etag_mismatch: { status: 412, type: "precondition_error" },
  if_match_required: { status: 428, type: "precondition_error" },
  // 429
  sideband_limit: { status: 429, type: "rate_limit_error" },
  // 413
  body_too_large: { status: 413, type: "invalid_request_error" },
  sdp_too_large: { status: 413, type: "invalid_request_error" },
  // 415
  unsupported_media_type: { status: 415, type: "invalid_request_error" },
  // 422
  no_audio: { status: 422, type: "invalid_request_error" },
  no_acceptable_codec: { status: 422, type: "invalid_request_error" },
  bundle_required: { status: 422, type: "invalid_request_error" },
  rtcp_mux_required: { status: 422, type: "invalid_request_error" },
  ice_lite_unsupported: { status: 422, type: "invalid_request_error" },
  offer_rejected: { status: 422, type: "invalid_request_error" },
  unsupported_patch: { status: 422, type: "invalid_request_error" },
  // 429: too many sessions in setup for one API key or client network (setup-limit.ts)
  setup_limit: { status: 429, type: "rate_limit_error" },
  // 500 / 503
  internal: { status: 500, type: "server_error" },
  at_capacity: { status: 503, type: "unavailable_error" },
  draining: { status: 503, type: "unavailable_error" },
  no_transceiver: { status: 503, type: "unavailable_error" },
  // GR_BACKBONE_KEYS unset: this transceiver takes part in no conference
  conference_unavailable: { status: 503, type: "unavailable_error" },
} as const satisfies Record<string, { status: number; type: string }>;

export type ErrorCode = keyof typeof ERRORS;

export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  /** Seconds, for 429 and 503. */
  readonly retryAfter: number | undefined;
  constructor(code: ErrorCode, message: string, retryAfter?: number) {
    super(message);
    this.code = code;
    this.status = ERRORS[code].status;
    this.type = ERRORS[code].type;
    this.retryAfter = retryAfter;
  }
  toJSON(): { error: { type: string; code: string; message: string } } {
    return { error: { type: this.type, code: this.code, message: this.message } };
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

/**
 * Refuses a WebSocket upgrade with the catalogue's status and JSON body, written on the raw
 * socket (no HTTP response object exists for an upgrade). One writer for every upgrade refusal.
 */
export function rejectUpgrade(socket: { end(data: string): void }, e: ApiError): void {
  const body = JSON.stringify(e.toJSON());
  const retry = e.retryAfter ? `Retry-After: ${e.retryAfter}\r\n` : "";
  socket.end(
    `HTTP/1.1 ${e.status} ${e.code}\r\nContent-Type: application/json\r\nContent-Length: ${new TextEncoder().encode(body).length}\r\n${retry}Connection: close\r\n\r\n${body}`,
  );
}
