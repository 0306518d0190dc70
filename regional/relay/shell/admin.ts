// Admin HTTP: /metrics (all workers summed), /healthz, /readyz, /flows (counts; ?client=ip:port
// finds one flow). Runs in the main thread, never on the data path.
import { createServer, type Server } from "node:http";
import { PROMETHEUS_CONTENT_TYPE } from "../../common/metrics.ts";
import type { WorkerHandle } from "./handles.ts";
import { mergeExpositions } from "./metrics.ts";

export interface AdminState {
  role: string;
  id: number;
  handles: () => readonly WorkerHandle[];
  draining: () => boolean;
  ready: () => boolean;
}

function json(res: import("node:http").ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export async function flowsSummary(
  s: AdminState,
  client?: string,
): Promise<{ status: number; body: unknown }> {
  const replies = await Promise.all(s.handles().map((h) => h.flows(client).then((r) => ({ h, r }))));
  const active = replies.reduce((a, x) => a + x.r.active, 0);
  const halfOpen = replies.reduce((a, x) => a + x.r.halfOpen, 0);
  if (client === undefined) {
    return { status: 200, body: { role: s.role, active, halfOpen, workers: replies.map((x) => x.r.active) } };
  }
  const hit = replies.find((x) => x.r.flow);
  if (!hit) return { status: 404, body: { client, flow: null } };
  return { status: 200, body: { client, worker: hit.h.index, ...hit.r.flow } };
}

export function startAdmin(s: AdminState, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://admin");
    const route = async (): Promise<void> => {
      if (req.method !== "GET") return json(res, 405, { error: "method not allowed" });
      switch (url.pathname) {
        case "/metrics": {
          const texts = await Promise.all(s.handles().map((h) => h.metrics()));
          const extra = [
            "# HELP gr_relay_workers Data-plane workers running",
            "# TYPE gr_relay_workers gauge",
            `gr_relay_workers{role="${s.role}"} ${s.handles().length}`,
            "# HELP gr_relay_draining 1 while draining",
            "# TYPE gr_relay_draining gauge",
            `gr_relay_draining{role="${s.role}"} ${s.draining() ? 1 : 0}`,
            "",
          ].join("\n");
          const body = mergeExpositions(texts) + extra;
          res.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE });
          res.end(body);
          return;
        }
        case "/healthz":
          return json(res, 200, {
            status: s.draining() ? "draining" : "ok",
            role: s.role,
            id: s.id,
            workers: s.handles().length,
          });
        case "/readyz": {
          const ok = s.ready() && !s.draining();
          return json(res, ok ? 200 : 503, { ready: ok });
        }
        case "/flows": {
          const r = await flowsSummary(s, url.searchParams.get("client") ?? undefined);
          return json(res, r.status, r.body);
        }
        default:
          return json(res, 404, { error: "not found" });
      }
    };
    route().catch((e: Error) => json(res, 500, { error: e.message }));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}
