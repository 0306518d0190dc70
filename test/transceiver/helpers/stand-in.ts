// A transceiver stand-in for gateway routing tests: a node:http server on loopback that VERIFIES
// every /v1 request is signed for it ("transceiver:<cluster>/<id>", the real RequestVerifier),
// records what reached it and answers what the test scripts (per method and path, default 404
// not_found). /healthz reports its load, so the gateway's membership treats it as a member.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ApiError } from "../../../regional/transceiver/errors.ts";
import { RequestVerifier } from "../../../regional/transceiver/signing.ts";
import type { Keyring } from "../../../shared/keys.ts";

export interface StandInRequest {
  method: string;
  path: string;
  body: string;
  caller: string;
}

export interface StandInAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export class StandIn {
  readonly id: number;
  readonly requests: StandInRequest[] = [];
  /** Scripted answers, by "METHOD /path"; a function sees the request. */
  readonly answers = new Map<string, StandInAnswer | ((r: StandInRequest) => StandInAnswer)>();
  load = 0;
  capacity = 10;
  #server: Server | null = null;
  #verifier!: RequestVerifier;
  port = 0;

  constructor(id: number) {
    this.id = id;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(ring: Keyring, clusterId = 1, port = 0): Promise<void> {
    // Signed "before start" is refused: a restarted stand-in keeps its old verifier.
    this.#verifier ??= await RequestVerifier.create(
      ring,
      { clusterId, transceiverId: this.id },
      { windowMs: 30_000 },
    );
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const ch of req) chunks.push(ch as Buffer);
      const body = Buffer.concat(chunks);
      const send = (a: StandInAnswer) => {
        res.writeHead(a.status, { "content-type": "application/json", ...a.headers });
        res.end(a.body === undefined ? undefined : JSON.stringify(a.body));
      };
      const path = req.url ?? "/";
      if (path === "/healthz")
        return send({ status: 200, body: { status: "ok", load: this.load, capacity: this.capacity } });
      let caller: string;
      try {
        caller = await this.#verifier.verify(req.method!, path, new Uint8Array(body), req.headers);
      } catch (e) {
        const err = e instanceof ApiError ? e : new ApiError("internal", "error");
        return send({ status: err.status, body: err.toJSON() });
      }
      const r = { method: req.method!, path, body: body.toString(), caller };
      this.requests.push(r);
      const a = this.answers.get(`${r.method} ${path}`);
      if (a) return send(typeof a === "function" ? a(r) : a);
      send({ status: 404, body: new ApiError("not_found", `no route for ${r.method} ${path}`).toJSON() });
    });
    await new Promise<void>((resolve) => server.listen(port || this.port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Closes the listener and its connections: the port then refuses. */
  async stop(): Promise<void> {
    const s = this.#server;
    this.#server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
