// A cluster stand-in for edge tests: a real node:http server on loopback that VERIFIES every
// request's signature with shared/signing (401 otherwise) and speaks the cluster signalling API
// (calls, WHIP PATCH rules, healthz, /v1/ws). Its behaviour is switchable per test.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { nodeMac } from "../../regional/common/hmac.ts";
import { mintCallId, verifyCallId } from "../../shared/callid/callid.ts";
import type { Keyring } from "../../shared/keys.ts";
import {
  importSigningKeys,
  NonceWindow,
  type SigningKeys,
  verifyRequest,
} from "../../shared/signing/request.ts";
import { formatTarget } from "../../shared/signing/target.ts";
import { keyringOf } from "../support/signed-call.ts";

export type CallMode = "ok" | "full" | "error" | "hang" | "bad-request";

export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  signature: "ok" | string;
}

export class FakeCluster {
  readonly name: string;
  readonly id: number;
  readonly #ring: Keyring;
  #server: Server | null = null;
  #wss = new WebSocketServer({ noServer: true });
  #nonces = new NonceWindow();
  #key: Promise<SigningKeys>;
  port = 0;
  mode: CallMode = "ok";
  retryAfter = "3";
  health: { status: "ok" | "draining"; load: number; capacity: number } | "error" | "hang" = {
    status: "ok",
    load: 0,
    capacity: 100,
  };
  readonly requests: RecordedRequest[] = [];
  readonly wsMessages: Record<string, unknown>[] = [];
  readonly calls = new Map<string, { etag: string }>();
  /** Routes a test adds (fake-conference.ts): an answer, or undefined to fall through. */
  extra: ((method: string, path: string, body: string) => FakeAnswer | undefined) | undefined;
  #sockets = new Set<import("node:net").Socket>();

  /** `secret`: raw bytes (key id 0, the single-secret form) or a GR_CLUSTER_SECRET keyring. */
  constructor(name: string, id: number, secret: Uint8Array | Keyring, callIdRing: Keyring) {
    this.name = name;
    this.id = id;
    this.#ring = callIdRing;
    this.#key = importSigningKeys(keyringOf(secret));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** POSTs that reached the calls API (signed). */
  get creates(): RecordedRequest[] {
    return this.requests.filter((r) => r.method === "POST" && r.path === "/v1/calls");
  }

  async start(port = 0): Promise<void> {
    const server = createServer((req, res) => void this.#handle(req, res));
    server.on("connection", (s) => {
      this.#sockets.add(s);
      s.on("close", () => this.#sockets.delete(s));
    });
    server.on(
      "upgrade",
      (req, socket, head) => void this.#upgrade(req, socket as import("node:net").Socket, head),
    );
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Closes the listener and every connection: the port then refuses. */
  async stop(): Promise<void> {
    const s = this.#server;
    this.#server = null;
    if (!s) return;
    for (const c of this.#wss.clients) c.terminate();
    for (const sock of this.#sockets) sock.destroy();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  async #check(req: IncomingMessage, body: Buffer): Promise<string> {
    const r = await verifyRequest(
      await this.#key,
      { method: req.method!, pathAndQuery: req.url!, body, target: formatTarget({ clusterId: this.id }) },
      {
        get: (n: string) => {
          const v = req.headers[n.toLowerCase()];
          return typeof v === "string" ? v : null;
        },
      },
      Date.now(),
    );
    if (!r.ok) return r.reason;
    return this.#nonces.accept(r.nonce, Date.now()) ? "ok" : "replay";
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const ch of req) chunks.push(ch as Buffer);
    const body = Buffer.concat(chunks);
    const signature = await this.#check(req, body);
    const path = req.url ?? "/";
    this.requests.push({ method: req.method!, path, headers: req.headers, body: body.toString(), signature });
    const json = (status: number, v: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(v));
    };
    if (signature !== "ok")
      return json(401, {
        error: { type: "authentication_error", code: "bad_signature", message: signature },
      });

    const extra = this.extra?.(req.method!, path, body.toString());
    if (extra) {
      if (extra.body === undefined) {
        res.writeHead(extra.status, extra.headers).end();
        return;
      }
      return json(extra.status, extra.body, extra.headers);
    }
    if (path === "/healthz" && req.method === "GET") {
      if (this.health === "hang") return;
      if (this.health === "error") return json(500, { error: "boom" });
      return json(200, { ...this.health, clusterId: this.id, transceivers: 1 });
    }
    if (path === "/v1/calls" && req.method === "POST") {
      if (this.mode === "hang") return;
      if (this.mode === "full")
        return json(
          503,
          { error: { type: "service_unavailable", code: "full", message: "full" } },
          { "retry-after": this.retryAfter },
        );
      if (this.mode === "error")
        return json(500, { error: { type: "server_error", code: "boom", message: "boom" } });
      if (this.mode === "bad-request")
        return json(422, {
          error: {
            type: "invalid_request_error",
            code: "no_opus",
            message: "offer has no opus",
            secret: "x",
          },
        });
      const parsed = JSON.parse(body.toString()) as { sdp: string };
      const created = this.#create(parsed.sdp);
      // Like the transceiver: a bare etag in the JSON, the quoted entity-tag in the header.
      return json(201, created, { etag: `"${created.etag}"` });
    }
    const m = /^\/v1\/calls\/([^/]+)$/.exec(path);
    if (m) {
      if (req.method === "POST") {
        // Resume: the call anew under the same id (the real gateway picks a live transceiver).
        const created = this.#create((JSON.parse(body.toString()) as { sdp: string }).sdp);
        this.calls.delete(created.callId);
        this.calls.set(m[1]!, { etag: created.etag });
        return json(200, { ...created, callId: m[1] }, { etag: `"${created.etag}"` });
      }
      const s = this.calls.get(m[1]!);
      if (!s)
        return json(404, {
          error: { type: "not_found_error", code: "unknown_session", message: "no such session" },
        });
      if (req.method === "GET")
        return json(200, {
          state: "connected",
          cluster: this.name,
          clientAddress: "203.0.113.7:5000",
          codec: "opus",
          iceRttMs: 41,
          iceRestarts: 0,
          endReason: null,
        });
      if (req.method === "DELETE") {
        this.calls.delete(m[1]!);
        res.writeHead(204).end();
        return;
      }
      if (req.method === "PATCH") {
        const ifMatch = req.headers["if-match"];
        if (ifMatch === undefined)
          return json(428, {
            error: { type: "invalid_request_error", code: "if_match_required", message: "If-Match required" },
          });
        if (ifMatch === "*") {
          s.etag = randomBytes(6).toString("hex");
          res.writeHead(200, { "content-type": "application/trickle-ice-sdpfrag", etag: `"${s.etag}"` });
          res.end("a=ice-ufrag:NEWU\r\na=ice-pwd:newpasswordnewpassword12\r\n");
          return;
        }
        if (
          String(ifMatch)
            .replace(/^W\//, "")
            .replace(/^"(.*)"$/, "$1") !== s.etag
        )
          return json(412, {
            error: { type: "invalid_request_error", code: "stale_etag", message: "stale" },
          });
        if (body.toString().includes("a=unsupported"))
          return json(422, {
            error: { type: "invalid_request_error", code: "unsupported", message: "unsupported" },
          });
        // Like the transceiver: a trickle's 204 carries the (unchanged) ETag.
        res.writeHead(204, { etag: `"${s.etag}"` }).end();
        return;
      }
    }
    json(404, { error: { type: "not_found_error", code: "no_route", message: path } });
  }

  #create(sdp: string): {
    callId: string;
    sdp: string;
    etag: string;
    clusterId: number;
    transceiverId: number;
  } {
    const callId = mintCallId(this.id, 7, randomBytes(15), nodeMac(this.#ring));
    const etag = randomBytes(6).toString("hex");
    this.calls.set(callId, { etag });
    if (verifyCallId(callId, nodeMac(this.#ring)).ok !== true) throw new Error("self-check");
    return {
      callId,
      sdp: `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=${this.name}\r\nt=0 0\r\n# answer to ${sdp.length} bytes\r\n`,
      etag,
      clusterId: this.id,
      transceiverId: 7,
    };
  }

  async #upgrade(req: IncomingMessage, socket: import("node:net").Socket, head: Buffer): Promise<void> {
    const signature = await this.#check(req, Buffer.alloc(0));
    this.requests.push({ method: "GET", path: req.url ?? "", headers: req.headers, body: "", signature });
    if (signature !== "ok" || req.url !== "/v1/ws") {
      socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    if (this.mode === "full") {
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\nRetry-After: ${this.retryAfter}\r\nContent-Length: 0\r\n\r\n`,
      );
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on("message", (data) => {
        const msg = JSON.parse(String(data)) as Record<string, unknown>;
        this.wsMessages.push(msg);
        if (msg.type === "offer") {
          const a = this.#create(String(msg.sdp));
          ws.send(JSON.stringify({ type: "answer", sdp: a.sdp, callId: a.callId, etag: a.etag }));
          ws.send(JSON.stringify({ type: "event", event: { type: "session.created", cluster: this.name } }));
        } else if (msg.type === "hangup") {
          ws.send(JSON.stringify({ type: "ended", reason: "hangup" }));
          ws.close(1000, "bye");
        }
      });
    });
  }
}
