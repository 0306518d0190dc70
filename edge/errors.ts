// One error catalogue for the edge. Every failure leaves as `{ error: { type, code, message, param } }`
// (the Realtime API's shape, so the official SDKs surface it as an APIError)
// with the status its type maps to; handlers throw EdgeError and app.onError renders it.
// Messages are written for the developer on the other side and never contain a secret.

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "rate_limit_error"
  | "server_error"
  | "service_unavailable_error";

export class EdgeError extends Error {
  override readonly name = "EdgeError";
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string;
  readonly headers: Record<string, string>;
  constructor(status: number, type: ErrorType, code: string, message: string, headers = {}) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = code;
    this.headers = headers;
  }
}

export interface ErrorBody {
  error: { type: ErrorType; code: string; message: string; param: null };
}

export function errorBody(e: EdgeError): ErrorBody {
  return { error: { type: e.type, code: e.code, message: e.message, param: null } };
}

const bad = (code: string, message: string, status = 400) =>
  new EdgeError(status, "invalid_request_error", code, message);

export const Errors = {
  missingCredentials: () =>
    new EdgeError(
      401,
      "authentication_error",
      "missing_credentials",
      "Authorization: Bearer <key> is required",
    ),
  badAuthorization: () =>
    new EdgeError(
      401,
      "authentication_error",
      "invalid_authorization_header",
      "Authorization must be 'Bearer <API key or client secret>'",
    ),
  invalidApiKey: () =>
    new EdgeError(401, "authentication_error", "invalid_api_key", "the API key is not valid"),
  invalidClientSecret: () =>
    new EdgeError(401, "authentication_error", "invalid_client_secret", "the client secret is not valid"),
  expiredClientSecret: () =>
    new EdgeError(401, "authentication_error", "expired_client_secret", "the client secret has expired"),
  clientSecretNotAllowed: (what: string) =>
    new EdgeError(403, "permission_error", "client_secret_not_allowed", `a client secret cannot ${what}`),
  sessionBound: () =>
    new EdgeError(
      403,
      "permission_error",
      "session_bound",
      "this client secret is bound to a session configuration; the request may not supply a different one",
    ),
  secretScoped: () =>
    new EdgeError(
      403,
      "permission_error",
      "client_secret_scoped",
      "this client secret is scoped to joining one call; it cannot be used for this request",
    ),
  forbidden: (message: string) => new EdgeError(403, "permission_error", "forbidden", message),
  rateLimited: (scope: "key" | "ip", retryAfterS: number) =>
    new EdgeError(
      429,
      "rate_limit_error",
      scope === "key" ? "rate_limit_key" : "rate_limit_ip",
      `too many requests for this ${scope === "key" ? "credential" : "client address"}; retry after ${retryAfterS} s`,
      { "retry-after": String(retryAfterS) },
    ),
  tooLarge: (max: number) => bad("body_too_large", `the request body is over ${max} bytes`, 413),
  unsupportedType: (
    got: string,
    accepted: string,
    headers: Record<string, string> = { "accept-post": "application/sdp, multipart/form-data" },
  ) =>
    new EdgeError(
      415,
      "invalid_request_error",
      "unsupported_media_type",
      `content type ${JSON.stringify(got || "(none)")} is not accepted here; send ${accepted}`,
      headers,
    ),
  invalidSdp: (reason: string) => bad("invalid_sdp", `the SDP offer is not valid: ${reason}`),
  invalidRequest: (code: string, message: string) => bad(code, message),
  callNotFound: () => new EdgeError(404, "not_found_error", "call_not_found", "no such call"),
  participantNotFound: () =>
    new EdgeError(404, "not_found_error", "participant_not_found", "no such participant"),
  /** Admitted, but its leg's hello has not reached the hub yet: nothing to PATCH so far. */
  participantConnecting: () =>
    new EdgeError(
      409,
      "invalid_request_error",
      "participant_connecting",
      "the participant's leg is not connected to the call yet; retry after 1 s",
      { "retry-after": "1" },
    ),
  /** A cluster's 2xx the edge cannot use (an owner's participant record without a usable leg). */
  clusterBadAnswer: (cluster: string) =>
    new EdgeError(
      502,
      "server_error",
      "cluster_bad_answer",
      `the cluster ${cluster} sent an unreadable answer`,
    ),
  notFound: () => new EdgeError(404, "not_found_error", "not_found", "no such route"),
  methodNotAllowed: (allow: string) =>
    new EdgeError(405, "invalid_request_error", "method_not_allowed", `this route allows ${allow}`, {
      allow,
    }),
  /** accept / reject / refer act on incoming SIP calls at OpenAI; there are none here. */
  sipNotSupported: (action: string) =>
    new EdgeError(
      501,
      "invalid_request_error",
      "sip_not_supported",
      `calls.${action} acts on incoming SIP calls, which Global Relay does not take: calls here are WebRTC calls created with POST /v1/realtime/calls`,
    ),
  callIdRequired: () =>
    bad(
      "missing_call_id",
      "GET /v1/realtime needs ?call_id=rtc_... (sideband control of a call made with POST /v1/realtime/calls)",
    ),
  upgradeRequired: () =>
    new EdgeError(426, "invalid_request_error", "upgrade_required", "this route speaks WebSocket only", {
      upgrade: "websocket",
    }),
  noCluster: (retryAfterS: number, detail: string) =>
    new EdgeError(
      503,
      "service_unavailable_error",
      "no_cluster_available",
      `no cluster can take the call right now (${detail}); retry after ${retryAfterS} s`,
      { "retry-after": String(retryAfterS) },
    ),
  clusterUnreachable: (cluster: string) =>
    new EdgeError(
      502,
      "server_error",
      "cluster_unreachable",
      `the cluster that owns this call (${cluster}) did not answer`,
    ),
  clusterTimeout: (cluster: string) =>
    new EdgeError(
      504,
      "server_error",
      "cluster_timeout",
      `the cluster that owns this call (${cluster}) timed out`,
    ),
  misconfigured: (message: string) => new EdgeError(500, "server_error", "edge_misconfigured", message),
  invalidTopology: (message: string) => new EdgeError(500, "server_error", "invalid_topology", message),
  internal: () => new EdgeError(500, "server_error", "internal_error", "internal error"),
} as const;
