// The smallest bridge from node:http to a fetch handler (Hono's `app.fetch`): the request becomes
// a web Request (body streamed), the Response is written back. Upgrades go to `onUpgrade`. One
// adapter for every Node service that speaks Hono (the transceiver API, the gateway).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { Readable } from "node:stream";

export type FetchHandler = (req: Request, env: { incoming: IncomingMessage }) => Response | Promise<Response>;

export function toRequest(req: IncomingMessage, base: string): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(new URL(req.url ?? "/", base), {
    method,
    headers,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" } : {}),
  });
}

export async function writeResponse(res: ServerResponse, r: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  r.headers.forEach((v, k) => {
    headers[k] = v;
  });
  const body = r.body ? Buffer.from(await r.arrayBuffer()) : undefined;
  if (body && headers["content-length"] === undefined) headers["content-length"] = String(body.length);
  // Answered before the body was read (413, 401): the rest of it is still on the wire, so the
  // connection cannot carry another request.
  if (!res.req.complete) headers.connection = "close";
  res.writeHead(r.status, headers);
  res.end(body);
}

export function serve(
  handler: FetchHandler,
  onUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
  onFailure: (e: unknown) => void,
): Server {
  const server = createServer((req, res) => {
    // The Host header is the client's to choose: never parse it. Handlers that need the exact
    // request target (signatures) read `incoming.url`.
    Promise.resolve()
      .then(() => handler(toRequest(req, "http://service.invalid"), { incoming: req }))
      .then((r) => writeResponse(res, r))
      .catch((e: unknown) => {
        onFailure(e);
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end('{"error":{"type":"server_error","code":"internal","message":"internal error"}}');
      });
  });
  server.on("upgrade", onUpgrade);
  return server;
}

export function serverUrl(server: Server): string {
  const a = server.address() as AddressInfo;
  return a.family === "IPv6" ? `http://[${a.address}]:${a.port}` : `http://${a.address}:${a.port}`;
}
