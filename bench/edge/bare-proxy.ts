// Baseline worker for bench/edge/run.ts: the least an edge can do (sign the offer, POST it to a
// fixed cluster, return the answer), with no auth, steering, health, validation or metrics. The
// difference between it and the real edge is the cost of the edge's own logic.
import { importSigningKeys, type SigningKeys, signRequest } from "../../shared/signing/request.ts";

interface Env {
  CLUSTER_URL: string;
  SECRET_B64: string;
}

let key: Promise<SigningKeys> | null = null;

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const secret = Uint8Array.from(atob(env.SECRET_B64), (ch) => ch.charCodeAt(0));
    key ??= importSigningKeys({ active: { id: 0, secret }, keys: [{ id: 0, secret }] });
    const body = new TextEncoder().encode(JSON.stringify({ sdp: await req.text(), client: {}, ingress: {} }));
    const nonce = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
      b.toString(16).padStart(2, "0"),
    ).join("");
    const sig = await signRequest(
      await key,
      { method: "POST", pathAndQuery: "/v1/calls", body, target: "gateway:1" },
      Date.now(),
      nonce,
    );
    const res = await fetch(`${env.CLUSTER_URL}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json", ...sig },
      body,
    });
    const j = (await res.json()) as { sdp: string; callId: string };
    return new Response(j.sdp, { status: 201, headers: { location: `/v1/realtime/calls/${j.callId}` } });
  },
};
