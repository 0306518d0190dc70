// The signalling contract between the edge and a transceiver (docs/transceiver.md): the body of
// POST /v1/calls (and of a WebSocket "offer" message) and the 201 answer. Pure: the edge
// builds the request and reads the answer with these types; the transceiver validates the
// request with readCreateCallRequest. Never throws on input.
import { MAX_SDP_BYTES } from "../sdp/offer.ts";

/** Where the client is, as the edge saw it (Cloudflare's request.cf). */
export interface ClientLocation {
  region?: string;
  country?: string;
  continent?: string;
  colo?: string;
  latitude?: number;
  longitude?: number;
}

export interface CreateCallRequest {
  sdp: string;
  /** The Realtime session config, passed to the backend untouched. */
  session?: Record<string, unknown>;
  client?: ClientLocation;
  /** The VIP the client reaches ("ip:port") and the POP it came through, when known. */
  ingress?: { vip?: string; popId?: number };
}

/** 201 body of POST /v1/calls (the ETag and Location headers carry the same values). */
export interface CreateCallResponse {
  callId: string;
  sdp: string;
  etag: string;
  clusterId: number;
  transceiverId: number;
}

export type RequestProblem = "body_malformed" | "sdp_too_large";

export type Read<T> = { ok: true; value: T } | { ok: false; code: RequestProblem; message: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const bad = (message: string): { ok: false; code: "body_malformed"; message: string } => ({
  ok: false,
  code: "body_malformed",
  message,
});

function readClient(c: unknown): Read<ClientLocation> {
  if (!isObj(c)) return bad("client: must be an object");
  for (const k of ["region", "country", "continent", "colo"] as const) {
    const v = c[k];
    if (v !== undefined && (typeof v !== "string" || v.length > 64)) {
      return bad(`client.${k}: must be a string of at most 64 characters`);
    }
  }
  for (const [k, lim] of [
    ["latitude", 90],
    ["longitude", 180],
  ] as const) {
    const x = c[k];
    if (x !== undefined && (typeof x !== "number" || !Number.isFinite(x) || Math.abs(x) > lim)) {
      return bad(`client.${k}: must be a number within ±${lim}`);
    }
  }
  return { ok: true, value: c as ClientLocation };
}

function readIngress(g: unknown): Read<NonNullable<CreateCallRequest["ingress"]>> {
  if (!isObj(g)) return bad("ingress: must be an object");
  if (g.vip !== undefined && typeof g.vip !== "string") return bad('ingress.vip: must be "ip:port"');
  const pop = g.popId;
  if (pop !== undefined && (typeof pop !== "number" || !Number.isInteger(pop) || pop < 1 || pop > 65535)) {
    return bad("ingress.popId: must be an integer 1-65535");
  }
  return {
    ok: true,
    value: {
      ...(g.vip !== undefined ? { vip: g.vip as string } : {}),
      ...(pop !== undefined ? { popId: pop as number } : {}),
    },
  };
}

/** Validates a parsed JSON create request. */
export function readCreateCallRequest(v: unknown): Read<CreateCallRequest> {
  if (!isObj(v)) return bad("body must be a JSON object");
  if (typeof v.sdp !== "string") return bad("sdp: must be a string");
  // A cheap bound before the offer check counts bytes exactly (a UTF-16 unit is at most 4 bytes).
  if (v.sdp.length > MAX_SDP_BYTES * 4) {
    return { ok: false, code: "sdp_too_large", message: `sdp is over ${MAX_SDP_BYTES} bytes` };
  }
  const req: CreateCallRequest = { sdp: v.sdp };
  if (v.session !== undefined && v.session !== null) {
    if (!isObj(v.session)) return bad("session: must be an object");
    req.session = v.session;
  }
  if (v.client !== undefined) {
    const c = readClient(v.client);
    if (!c.ok) return c;
    req.client = c.value;
  }
  if (v.ingress !== undefined) {
    const g = readIngress(v.ingress);
    if (!g.ok) return g;
    req.ingress = g.value;
  }
  return { ok: true, value: req };
}

/** Reads a 201 body; undefined when it is not a CreateCallResponse. */
export function readCreateCallResponse(v: unknown): CreateCallResponse | undefined {
  if (!isObj(v) || typeof v.callId !== "string" || typeof v.sdp !== "string") return undefined;
  return {
    callId: v.callId,
    sdp: v.sdp,
    etag: typeof v.etag === "string" ? v.etag : "",
    clusterId: typeof v.clusterId === "number" ? v.clusterId : 0,
    transceiverId: typeof v.transceiverId === "number" ? v.transceiverId : 0,
  };
}
