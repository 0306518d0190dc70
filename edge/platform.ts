// The few Cloudflare Workers runtime APIs the edge uses, typed locally. The repository compiles
// with Node and DOM types (one tsconfig for every part), and @cloudflare/workers-types would
// clash with them, so the edge declares only what it touches and reaches the runtime globals
// through the accessors below.

/** The subset of `request.cf` steering reads. Cloudflare sends latitude/longitude as strings. */
export interface CfProperties {
  latitude?: string | number;
  longitude?: string | number;
  country?: string;
  continent?: string;
  colo?: string;
  city?: string;
}

export interface KvNamespace {
  get(key: string, options?: { cacheTtl?: number }): Promise<string | null>;
}

/** Workers Rate Limiting binding (`[[ratelimits]]` in wrangler.toml). */
export interface RateLimitBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

/** Workers Analytics Engine binding (`[[analytics_engine_datasets]]`). */
export interface AnalyticsEngineDataset {
  writeDataPoint(point: { blobs?: string[]; doubles?: number[]; indexes?: string[] }): void;
}

export interface ExecutionContextLike {
  waitUntil(promise: Promise<unknown>): void;
}

/** The Workers WebSocket: `accept()` starts delivery of events on the server side of a pair. */
export interface WorkerWebSocket {
  accept(): void;
  send(data: string | ArrayBuffer): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message", fn: (ev: { data: string | ArrayBuffer }) => void): void;
  addEventListener(type: "close", fn: (ev: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", fn: (ev: unknown) => void): void;
  readonly readyState: number;
}

export function requestCf(req: Request): CfProperties | undefined {
  return (req as Request & { cf?: CfProperties }).cf;
}

export function newWebSocketPair(): [client: WorkerWebSocket, server: WorkerWebSocket] {
  const Pair = (globalThis as unknown as { WebSocketPair: new () => Record<0 | 1, WorkerWebSocket> })
    .WebSocketPair;
  const p = new Pair();
  return [p[0], p[1]];
}

/** The WebSocket of an upgraded fetch() response (outbound), or null. */
export function responseWebSocket(res: Response): WorkerWebSocket | null {
  return (res as Response & { webSocket?: WorkerWebSocket | null }).webSocket ?? null;
}

/** A 101 response that hands the client side of a pair to the runtime. */
export function upgradeResponse(client: WorkerWebSocket, headers: Headers): Response {
  return new Response(null, { status: 101, headers, webSocket: client } as ResponseInit);
}

/** The colo-local HTTP cache (`caches.default`), absent outside Workers. */
export function defaultCache(): Cache | undefined {
  return (globalThis as unknown as { caches?: { default?: Cache } }).caches?.default;
}
