// One request forwarded to a transceiver over keep-alive connections, signed again for that one
// transceiver ("transceiver:<cluster>/<id>", docs/wire-formats.md §6) with the caller the edge
// signed, so a request captured on the way in works nowhere else. Rejects on connection failure or timeout (the caller decides what that
// means for the member); any HTTP answer resolves.
import { Agent, request } from "node:http";
import { CALLER_HEADER } from "../../shared/signing/request.ts";
import type { RequestSigner } from "../transceiver/signing.ts";
import type { Member } from "./members.ts";

export interface Upstream {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The `error.code` of a JSON error answer, or undefined. */
export function errorCodeOf(up: Upstream): unknown {
  try {
    return (JSON.parse(up.body.toString("utf8")) as { error?: { code?: unknown } }).error?.code;
  } catch {
    return undefined;
  }
}

const FORWARD_HEADERS = ["content-type", "if-match"];
const RETURN_HEADERS = ["content-type", "etag", "location", "retry-after", "allow"];

export class UpstreamClient {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 256 });
  readonly #timeoutMs: number;
  readonly #signer: RequestSigner;
  readonly #clusterId: number;

  constructor(timeoutMs: number, signer: RequestSigner, clusterId: number) {
    this.#timeoutMs = timeoutMs;
    this.#signer = signer;
    this.#clusterId = clusterId;
  }

  /** `inHeaders` passed the gateway's signature check (or are the gateway's own: no caller). */
  async forward(
    m: Member,
    method: string,
    url: string,
    inHeaders: Headers,
    body: Uint8Array,
  ): Promise<Upstream> {
    const headers = await this.#signer.sign(
      { method, pathAndQuery: url, body, target: "", caller: inHeaders.get(CALLER_HEADER) ?? "" },
      { clusterId: this.#clusterId, transceiverId: m.id },
    );
    for (const h of FORWARD_HEADERS) {
      const v = inHeaders.get(h);
      if (v !== null) headers[h] = v;
    }
    if (body.length > 0 || method === "POST" || method === "PATCH")
      headers["content-length"] = String(body.length);
    return new Promise((resolve, reject) => {
      const r = request(
        {
          host: m.url.hostname.replace(/^\[|\]$/g, ""),
          port: m.url.port || 80,
          method,
          path: url,
          headers,
          agent: this.#agent,
          timeout: this.#timeoutMs,
        },
        (up) => {
          const chunks: Buffer[] = [];
          up.on("data", (c: Buffer) => chunks.push(c));
          up.on("end", () => {
            const h: Record<string, string> = {};
            for (const name of RETURN_HEADERS) {
              const v = up.headers[name];
              if (typeof v === "string") h[name] = v;
            }
            resolve({ status: up.statusCode ?? 502, headers: h, body: Buffer.concat(chunks) });
          });
          up.on("error", reject);
        },
      );
      r.on("timeout", () => r.destroy(new Error("upstream timeout")));
      r.on("error", reject);
      r.end(body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
