// POST /v1/realtime/calls/{id} (application/sdp): resume a call whose transceiver failed with a
// new offer from a new peer connection. Routed by the call id like every follow-up; the cluster
// creates the call anew on a sibling transceiver under the same call id (the backend reattaches
// by call id) and the answer comes back with 200, the same Location and a new ETag.
import type { Hono } from "hono";
import { clusterErrorBody, readJson } from "../cluster/client.ts";
import type { AppEnv } from "../env.ts";
import { Errors } from "../errors.ts";
import { admit, decodeUtf8, mediaType, readBody } from "../http.ts";
import { checkSdpOffer, offerError } from "../sdp.ts";
import { clusterClient } from "../steering/client.ts";
import { steerScope } from "../steering/steer.ts";
import { quoteEtag, resolveSession } from "./calls.ts";
import { fetchOwner, owningCluster } from "./followups.ts";

export function registerResume(app: Hono<AppEnv>): void {
  app.post("/v1/realtime/calls/:id", async (c) => {
    c.set("route", "calls.resume");
    // A resume creates a session: it is admitted (and rate limited) like a new call.
    const principal = await admit(c, { create: true });
    const type = mediaType(c.req.header("content-type"));
    if (type !== "application/sdp") throw Errors.unsupportedType(type, "application/sdp");
    const sdp = decodeUtf8(await readBody(c.req.raw), "the SDP offer");
    const check = checkSdpOffer(sdp);
    if (!check.ok) throw offerError(check.code, check.message);
    const callId = c.req.param("id");
    const cluster = await owningCluster(c, callId);
    const s = await steerScope(c);
    const session = resolveSession(principal, undefined);
    const { client } = s;
    const payload = new TextEncoder().encode(
      JSON.stringify({
        sdp,
        ...(session !== undefined ? { session } : {}),
        client: clusterClient(client),
        ingress: { vip: s.topo.topology.globalVip },
      }),
    );
    const res = await fetchOwner(c, s, cluster, {
      method: "POST",
      path: `/v1/calls/${callId}`,
      body: payload,
      headers: { "content-type": "application/json", accept: "application/json" },
    });
    const body = (await readJson(res)) as { sdp?: unknown; etag?: unknown } | null;
    const headers: Record<string, string> = { "x-relay-cluster": cluster.name };
    if (res.status !== 200 || typeof body?.sdp !== "string") {
      const status = res.status === 200 ? 502 : res.status;
      return c.json(clusterErrorBody(body, status), status as 400, headers);
    }
    headers["content-type"] = "application/sdp";
    headers.location = `/v1/realtime/calls/${callId}`;
    headers["accept-patch"] = "application/trickle-ice-sdpfrag";
    const etag = res.headers.get("etag") ?? (typeof body.etag === "string" ? quoteEtag(body.etag) : null);
    if (etag) headers.etag = etag;
    c.get("log").info("call resumed", { cluster: cluster.name });
    return c.body(body.sdp, 200, headers);
  });
}
