// How the bench's clients get their answers: gr over the transceiver's signed HTTP API (as the
// gateway calls it), werift over IPC to the server process (run.ts relays the offer).
import { randomBytes } from "node:crypto";
import { importSigningKeys, signRequest } from "../../shared/signing/request.ts";
import { keyringOf } from "../../test/support/signed-call.ts";

/** Offer SDP and the ingress VIP ("host:port", gr only) in, answer SDP out. */
export type Signal = (sdp: string, vip: string) => Promise<string>;

export async function signedHttpSignal(http: string, secretBase64: string): Promise<Signal> {
  const key = await importSigningKeys(keyringOf(new Uint8Array(Buffer.from(secretBase64, "base64"))));
  return async (sdp, vip) => {
    const body = JSON.stringify({ sdp, client: { continent: "EU" }, ingress: { vip, popId: 1 } });
    const headers = await signRequest(
      key,
      {
        method: "POST",
        pathAndQuery: "/v1/calls",
        body: new TextEncoder().encode(body),
        target: "transceiver:1/1",
      },
      Date.now(),
      randomBytes(16).toString("base64url"),
    );
    const r = await fetch(`${http}/v1/calls`, {
      method: "POST",
      body,
      headers: { ...headers, "content-type": "application/json" },
    });
    if (r.status !== 201) throw new Error(`create ${r.status}: ${await r.text()}`);
    return ((await r.json()) as { sdp: string }).sdp;
  };
}

/** Offers go to the parent as {cmd:"offer"}; `answered` resolves them when the answer comes back. */
export function ipcSignal(send: (m: unknown) => void): {
  signal: Signal;
  answered(id: number, sdp: string): void;
} {
  const pending = new Map<number, (sdp: string) => void>();
  let nextId = 1;
  return {
    signal: (sdp) =>
      new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        send({ cmd: "offer", id, sdp });
      }),
    answered(id, sdp) {
      pending.get(id)?.(sdp);
      pending.delete(id);
    },
  };
}
