// The default backend: echoes the caller's audio after a delay and speaks the Realtime event
// protocol as an echoing model would (realtime.ts, docs/backend-protocol.md). One WebSocket per
// session, or many sessions on a shared connection when the transceiver asks (x-gr-shared,
// shared.ts); runs in-process (startEchoAgent) or as its own process (main.ts). Each connection
// keeps one FIFO and one timer, so a delay costs a queue entry per frame, not a timer per frame.
// It accepts audio batches when the transceiver asks (x-gr-audio-batch) and echoes a batch as
// the same batch.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import {
  AUDIO_BATCH_HEADER,
  AUDIO_BATCH_VERSION,
  AUDIO_FRAME_HEADER_BYTES,
  AudioBatchReader,
  newAudioFrameHeader,
  readAudioFrameHeader,
} from "../transceiver/backend-protocol.ts";
import { SHARED_HEADER } from "../transceiver/backend-shared.ts";
import { EchoEvents } from "./events-shell.ts";
import { DEFAULT_KEEP, type KeepLimits, KeptCalls, type KeptStats } from "./kept-calls.ts";
import type { EchoConversationState } from "./realtime.ts";
import { serveShared } from "./shared.ts";

export interface EchoAgentOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Audio comes back this many milliseconds after it arrived. */
  delayMs?: number;
  /** Accept audio batches when the transceiver asks (default true; false acts as an old backend). */
  audioBatch?: boolean;
  /** Accept shared connections when the transceiver asks (default true; false acts as an old backend). */
  shared?: boolean;
  /** Conversations kept for resumed calls (default 1,000 calls, 10 minutes; kept-calls.ts). */
  keep?: Partial<KeepLimits>;
  /** The clock of the kept conversations' ages, ms (default performance.now; tests pass their own). */
  now?: () => number;
}

export interface EchoAgent {
  url: string;
  port: number;
  /** Sessions open (one per connection of its own, or a channel of a shared connection). */
  readonly connections: number;
  /** Shared connections open. */
  readonly sharedConnections: number;
  /** Frames echoed so far. */
  readonly framesEchoed: number;
  /** Frames echoed per participant slot (audio frame byte 3), e.g. { "1": 250, "2": 248 }. */
  framesBySlot(): Record<string, number>;
  /** Events received (parsed), newest last; bounded. */
  readonly events: unknown[];
  /** The conversations kept for resumed calls. */
  readonly kept: KeptStats;
  close(): Promise<void>;
}

const MAX_EVENTS_KEPT = 1000;

export async function startEchoAgent(o: EchoAgentOptions = {}): Promise<EchoAgent> {
  const delayMs = Math.max(0, o.delayMs ?? 0);
  const calls = new KeptCalls<EchoConversationState>({ ...DEFAULT_KEEP, ...o.keep });
  const keep = { calls, now: o.now ?? (() => performance.now()) };
  // Frames echoed per participant slot: the echo keeps each frame's slot byte, so each
  // participant hears only its own echo and a test can tell the streams apart.
  const bySlot = new Float64Array(256);
  const slotCounts = (): Record<string, number> => {
    const out: Record<string, number> = {};
    for (let i = 0; i < 256; i++) if (bySlot[i]! > 0) out[String(i)] = bySlot[i]!;
    return out;
  };
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/status") {
      const body = { connections: sessions, sharedConnections, framesEchoed, framesBySlot: slotCounts() };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      return;
    }
    res.writeHead(426, { "content-type": "text/plain" }).end("WebSocket only\n");
  });
  const wss = new WebSocketServer({ server, perMessageDeflate: false, maxPayload: 1 << 20 });
  let framesEchoed = 0;
  const events: unknown[] = [];
  const h = newAudioFrameHeader();
  const reader = new AudioBatchReader();
  const wantsBatch = (req: IncomingMessage) =>
    o.audioBatch !== false && req.headers[AUDIO_BATCH_HEADER] === "1";
  // A shared connection names no call: its calls come as open records.
  const wantsShared = (req: IncomingMessage) =>
    o.shared !== false && req.headers[SHARED_HEADER] === "1" && req.headers["x-gr-call-id"] === undefined;
  wss.on("headers", (headers: string[], req: IncomingMessage) => {
    if (wantsShared(req)) headers.push(`${SHARED_HEADER}: 1`);
    else if (wantsBatch(req)) headers.push(`${AUDIO_BATCH_HEADER}: 1`);
  });
  let sessions = 0;
  let sharedConnections = 0;
  const recordEvent = (text: string): void => {
    try {
      events.push(JSON.parse(text));
      if (events.length > MAX_EVENTS_KEPT) events.shift();
    } catch {
      // the engine answers it with an error event
    }
  };
  const sharedDeps = {
    delayMs,
    keep,
    calls: (delta: number) => {
      sessions += delta;
    },
    echoed: (slot: number) => {
      bySlot[slot]!++;
      framesEchoed++;
    },
    event: recordEvent,
  };

  wss.on("connection", (ws: WebSocket, req: IncomingMessage) => {
    if (wantsShared(req)) {
      sharedConnections++;
      ws.on("close", () => sharedConnections--);
      serveShared(ws, sharedDeps);
      return;
    }
    sessions++;
    const batch = wantsBatch(req);
    const queue: { at: number; data: Buffer; frames: number }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const rt = new EchoEvents((text) => {
      if (ws.readyState === ws.OPEN) ws.send(text);
    }, keep);
    const flush = (): void => {
      timer = undefined;
      const now = performance.now();
      while (queue.length > 0 && queue[0]!.at <= now) {
        const item = queue.shift()!;
        if (ws.readyState === ws.OPEN) {
          ws.send(item.data, { binary: true });
          framesEchoed += item.frames;
        }
      }
      if (queue.length > 0) timer = setTimeout(flush, Math.max(0, queue[0]!.at - now));
    };
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        let frames = 0;
        if (batch && data[0] === AUDIO_BATCH_VERSION) {
          if (reader.start(data) !== "ok") return;
          for (let s = reader.next(h); s !== "end"; s = reader.next(h)) {
            if (s !== "ok") return;
            rt.audio(h.codec, h.flags, data.subarray(reader.payloadStart, reader.payloadEnd));
            bySlot[h.participant ?? 0]!++;
            frames++;
          }
        } else {
          if (readAudioFrameHeader(data, h) !== "ok") return;
          rt.audio(h.codec, h.flags, data.subarray(AUDIO_FRAME_HEADER_BYTES));
          bySlot[h.participant ?? 0]!++;
          frames = 1;
        }
        if (delayMs === 0) {
          ws.send(data, { binary: true });
          framesEchoed += frames;
          return;
        }
        queue.push({ at: performance.now() + delayMs, data, frames });
        if (timer === undefined) timer = setTimeout(flush, delayMs);
        return;
      }
      const text = data.toString("utf8");
      recordEvent(text);
      rt.event(text);
    });
    ws.on("close", () => {
      sessions--;
      rt.close();
      if (timer) clearTimeout(timer);
      queue.length = 0;
    });
    ws.on("error", () => {});
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port ?? 0, o.host ?? "127.0.0.1", () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  return {
    url: `ws://${host}:${addr.port}`,
    port: addr.port,
    get connections() {
      return sessions;
    },
    get sharedConnections() {
      return sharedConnections;
    },
    get framesEchoed() {
      return framesEchoed;
    },
    framesBySlot: slotCounts,
    events,
    get kept() {
      return calls.stats;
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
