// The conference routes of the transceiver API (docs/transceiver.md, docs/cascade.md), signed
// like every /v1 route: participants of a call on its own transceiver (the hub), and legs
// (POST /v1/legs: a joiner's call here, linked to the hub). Registered before /v1/calls/*.
import type { Hono } from "hono";
import type { ApiEnv } from "./api.ts";
import { MAX_JSON_BODY, mediaType, parseJson, readBody } from "./api-body.ts";
import type { ApiHost } from "./api-host.ts";
import type { Conferences } from "./conference/conferences.ts";
import { ApiError } from "./errors.ts";

const PARTICIPANTS = /^\/v1\/calls\/([A-Za-z0-9_-]{1,128})\/participants(?:\/([A-Za-z0-9_-]{1,64}))?$/;

type Json = (status: number, body: unknown, headers?: Record<string, string>) => Response;

const conferencesOf = (t: ApiHost): Conferences => {
  if (t.conferences === undefined)
    throw new ApiError(
      "conference_unavailable",
      "this transceiver has no backbone keyring (GR_BACKBONE_KEYS)",
    );
  return t.conferences;
};

/** The roster of a call nobody joined: its own client. */
export const ownerOnly = (createdAt: number): Record<string, unknown>[] => [
  {
    participantId: "owner",
    slot: 1,
    state: "connected",
    joinedAt: new Date(createdAt).toISOString(),
    leg: null,
  },
];

const needJson = (contentType: string | undefined): void => {
  if (mediaType(contentType) !== "application/json")
    throw new ApiError("unsupported_media_type", "content-type must be application/json");
};

export function participantRoutes(app: Hono<ApiEnv>, t: ApiHost, json: Json): void {
  app.all("/v1/legs", async (c) => {
    const receivedAt = performance.now();
    const method = c.req.method;
    if (method !== "POST") throw new ApiError("method_not_allowed", `${method} is not allowed on /v1/legs`);
    const body = await readBody(c.req.raw, MAX_JSON_BODY);
    await t.verifier.verify(method, c.env.incoming.url ?? "/", body, c.env.incoming.headers);
    needJson(c.req.header("content-type"));
    const r = await conferencesOf(t).createLeg(parseJson(body), receivedAt);
    return json(201, r, { etag: `"${r.etag}"`, location: `/v1/calls/${r.legId}` });
  });

  app.all("/v1/calls/:id/participants/*", (c) => handle(c.req.raw, c.env.incoming, t, json));
  app.all("/v1/calls/:id/participants", (c) => handle(c.req.raw, c.env.incoming, t, json));
}

async function handle(req: Request, incoming: ApiEnv["Bindings"]["incoming"], t: ApiHost, json: Json) {
  const url = incoming.url ?? "/";
  const m = PARTICIPANTS.exec(url.split("?")[0]!);
  if (!m) throw new ApiError("participant_unknown", "no such participant");
  const [, callId, pid] = m as unknown as [string, string, string | undefined];
  const method = req.method;
  const body = await readBody(req, MAX_JSON_BODY);
  await t.verifier.verify(method, url, body, incoming.headers);
  // The call first: a transceiver that does not hold it says so (404), whatever its conferences.
  const call = t.lookup(callId);
  const list = () => t.conferences?.list(call) ?? ownerOnly(call.createdAt);
  if (pid === undefined) {
    if (method === "POST") {
      if (body.length > 0) {
        needJson(req.headers.get("content-type") ?? undefined);
        parseJson(body); // `{ client?: {...} }`: nothing in it changes the admission yet
      }
      return json(201, conferencesOf(t).admit(call));
    }
    if (method === "GET") return json(200, { participants: list() });
    throw new ApiError("method_not_allowed", `${method} is not allowed on participants`);
  }
  if (method === "DELETE") {
    if (t.conferences === undefined)
      throw new ApiError("participant_unknown", "no such participant in this call");
    t.conferences.remove(call, pid);
    return new Response(null, { status: 204 });
  }
  if (method === "GET") {
    const p = list().find((x) => x.participantId === pid);
    if (!p) throw new ApiError("participant_unknown", "no such participant in this call");
    return json(200, p);
  }
  throw new ApiError("method_not_allowed", `${method} is not allowed on a participant`);
}
