// One request forwarded to a transceiver, unchanged (it verifies the edge's signature again), over
// keep-alive connections. Rejects on connection failure or timeout (the caller decides what that
// means for the member); any HTTP answer resolves.
import { Agent, request } from "node:http";
import type { Member } from "./members.ts";

export interface Upstream {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const FORWARD_HEADERS = ["content-type", "if-match", "x-gr-signature", "x-gr-timestamp", "x-gr-nonce"];
const RETURN_HEADERS = ["content-type", "etag", "location", "retry-after", "allow"];

export class UpstreamClient {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 256 });
  readonly #timeoutMs: number;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  forward(m: Member, method: string, url: string, inHeaders: Headers, body: Uint8Array): Promise<Upstream> {
    const headers: Record<string, string> = {};
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
