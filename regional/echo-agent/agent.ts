// The default backend: echoes the caller's audio after a delay and speaks the Realtime event
// protocol as an echoing model would (realtime.ts, docs/backend-protocol.md). One WebSocket per session; runs in-process (startEchoAgent) or as
// its own process (main.ts). Each connection keeps one FIFO and one timer, so a delay costs a
// queue entry per frame, not a timer per frame.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import {
  AUDIO_FRAME_HEADER_BYTES,
  newAudioFrameHeader,
  readAudioFrameHeader,
} from "../transceiver/backend-protocol.ts";
import { EchoEvents } from "./events-shell.ts";

export interface EchoAgentOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Audio comes back this many milliseconds after it arrived. */
  delayMs?: number;
}

export interface EchoAgent {
  url: string;
  port: number;
  /** Open backend connections (sessions). */
  readonly connections: number;
  /** Frames echoed so far. */
  readonly framesEchoed: number;
  /** Events received (parsed), newest last; bounded. */
  readonly events: unknown[];
  close(): Promise<void>;
}

const MAX_EVENTS_KEPT = 1000;

export async function startEchoAgent(o: EchoAgentOptions = {}): Promise<EchoAgent> {
  const delayMs = Math.max(0, o.delayMs ?? 0);
  const server: Server = createServer((_req, res) => {
    res.writeHead(426, { "content-type": "text/plain" }).end("WebSocket only\n");
  });
  const wss = new WebSocketServer({ server, perMessageDeflate: false, maxPayload: 1 << 20 });
  let framesEchoed = 0;
  const events: unknown[] = [];
  const h = newAudioFrameHeader();

  wss.on("connection", (ws: WebSocket) => {
    const queue: { at: number; data: Buffer }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const rt = new EchoEvents((text) => {
      if (ws.readyState === ws.OPEN) ws.send(text);
    });
    const flush = (): void => {
      timer = undefined;
      const now = performance.now();
      while (queue.length > 0 && queue[0]!.at <= now) {
        const item = queue.shift()!;
        if (ws.readyState === ws.OPEN) {
          ws.send(item.data, { binary: true });
          framesEchoed++;
        }
      }
      if (queue.length > 0) timer = setTimeout(flush, Math.max(0, queue[0]!.at - now));
    };
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        if (readAudioFrameHeader(data, h) !== "ok") return;
        rt.audio(h.codec, h.flags, data.subarray(AUDIO_FRAME_HEADER_BYTES));
        if (delayMs === 0) {
          ws.send(data, { binary: true });
          framesEchoed++;
          return;
        }
        queue.push({ at: performance.now() + delayMs, data });
        if (timer === undefined) timer = setTimeout(flush, delayMs);
        return;
      }
      const text = data.toString("utf8");
      try {
        events.push(JSON.parse(text));
        if (events.length > MAX_EVENTS_KEPT) events.shift();
      } catch {
        // the engine answers it with an error event
      }
      rt.event(text);
    });
    ws.on("close", () => {
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
      return wss.clients.size;
    },
    get framesEchoed() {
      return framesEchoed;
    },
    events,
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
