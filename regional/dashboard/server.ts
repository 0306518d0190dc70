// The dashboard's HTTP server: the page (static files, uPlot served from node_modules at runtime,
// no CDN, no build step) and a small JSON API over a DataSource.
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { Logger } from "../common/log.ts";
import type { Filters } from "./core/evaluate.ts";
import { FILTER_LABELS } from "./core/panel-def.ts";
import { PANELS } from "./panels.ts";
import type { DataSource, PanelsRequest, PanelsResponse } from "./source.ts";

const gzipAsync = promisify(gzip);

interface StaticFile {
  type: string;
  body: Buffer;
}

function loadStatic(): Map<string, StaticFile> {
  const dir = new URL("./static/", import.meta.url);
  const require = createRequire(import.meta.url);
  const files = new Map<string, StaticFile>();
  const add = (path: string, file: string | URL, type: string) =>
    files.set(path, { type, body: readFileSync(file) });
  add("/", new URL("index.html", dir), "text/html; charset=utf-8");
  add("/app.js", new URL("app.js", dir), "text/javascript; charset=utf-8");
  add("/style.css", new URL("style.css", dir), "text/css; charset=utf-8");
  add(
    "/vendor/uPlot.iife.min.js",
    require.resolve("uplot/dist/uPlot.iife.min.js"),
    "text/javascript; charset=utf-8",
  );
  add("/vendor/uPlot.min.css", require.resolve("uplot/dist/uPlot.min.css"), "text/css; charset=utf-8");
  return files;
}

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
};

/** Rounds every value to `digits` significant digits (the page asks for 6: it prints at most 3). */
export function roundPanels(data: PanelsResponse, digits: number): void {
  for (const p of data.panels)
    for (const s of p.series)
      for (let i = 0; i < s.values.length; i++) {
        const v = s.values[i];
        if (v !== null && v !== undefined && v !== 0) s.values[i] = Number(v.toPrecision(digits));
      }
}

export class RequestError extends Error {
  override name = "RequestError";
}

/** Parses /api/panels query parameters; throws RequestError with a message for the client. */
export function parsePanelsRequest(params: URLSearchParams): PanelsRequest {
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = params.get(name);
    if (raw === null || raw === "") return def;
    const v = Number(raw);
    if (!Number.isInteger(v) || v < min || v > max) throw new RequestError(`${name}: integer ${min}-${max}`);
    return v;
  };
  const filters: Filters = {};
  for (const l of FILTER_LABELS) {
    const raw = params.get(l);
    if (raw === null || raw === "") continue;
    const values = raw.split(",").filter((v) => v !== "");
    if (values.length > 64 || values.some((v) => v.length > 128))
      throw new RequestError(`${l}: too many or too long values`);
    filters[l] = values;
  }
  const panelIds = (params.get("panels") ?? "").split(",").filter((x) => x !== "");
  for (const id of panelIds)
    if (!PANELS.some((p) => p.id === id)) throw new RequestError(`panels: unknown panel ${id}`);
  const since = params.get("since");
  const r: PanelsRequest = {
    rangeS: int("range", 900, 10, 7 * 86_400),
    maxPoints: int("points", 300, 2, 2000),
    filters,
    panelIds,
  };
  if (since !== null && since !== "") {
    const v = Number(since);
    if (!Number.isFinite(v) || v < 0) throw new RequestError("since: a time in ms");
    r.since = v;
  }
  return r;
}

export interface DashboardServer {
  server: Server;
  address: AddressInfo;
  close(): Promise<void>;
}

export async function startServer(
  source: DataSource,
  listen: { host: string; port: number },
  log?: Logger,
): Promise<DashboardServer> {
  const files = loadStatic();
  const json = async (res: ServerResponse, status: number, body: unknown, req?: IncomingMessage) => {
    const text = JSON.stringify(body);
    const headers: Record<string, string> = {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      vary: "accept-encoding",
      ...SECURITY_HEADERS,
    };
    // Panel data is mostly digits: gzip shrinks it ~4x for pages reading a remote dashboard.
    if (text.length > 1024 && /\bgzip\b/.test(String(req?.headers["accept-encoding"] ?? ""))) {
      const z = await gzipAsync(text, { level: 4 });
      res.writeHead(status, { ...headers, "content-encoding": "gzip", "content-length": String(z.length) });
      res.end(z);
      return;
    }
    res.writeHead(status, headers);
    res.end(text);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://dashboard.invalid");
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", ...SECURITY_HEADERS }).end();
      return;
    }
    const path = url.pathname === "/index.html" ? "/" : url.pathname;
    const file = files.get(path);
    if (file !== undefined) {
      res.writeHead(200, {
        "content-type": file.type,
        "content-length": file.body.length,
        "cache-control": path.startsWith("/vendor/") ? "public, max-age=3600" : "no-cache",
        ...SECURITY_HEADERS,
      });
      res.end(req.method === "HEAD" ? undefined : file.body);
      return;
    }
    switch (path) {
      case "/healthz":
        return json(res, 200, { status: "ok" });
      case "/api/meta":
        return json(res, 200, await source.meta(), req);
      case "/api/panels": {
        let r: PanelsRequest;
        try {
          r = parsePanelsRequest(url.searchParams);
        } catch (e) {
          if (e instanceof RequestError)
            return json(res, 400, { error: { type: "invalid_request", message: e.message } });
          throw e;
        }
        const data = await source.panels(r);
        const digits = url.searchParams.get("digits");
        if (digits !== null) {
          const d = Number(digits);
          if (!Number.isInteger(d) || d < 1 || d > 17)
            return json(res, 400, { error: { type: "invalid_request", message: "digits: integer 1-17" } });
          roundPanels(data, d);
        }
        return json(res, 200, data, req);
      }
      default:
        return json(res, 404, { error: { type: "not_found", message: "no such path" } });
    }
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      log?.error("request failed", { path: req.url?.split("?")[0], error: e as Error });
      if (!res.headersSent)
        void json(res, 502, { error: { type: "upstream", message: (e as Error).message } });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    server,
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
