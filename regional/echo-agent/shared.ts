// The echo agent's side of a shared connection (docs/backend-protocol.md, "Shared connections"):
// many calls on one WebSocket, each a channel with its own Realtime engine. Audio records come
// back as the same records (after the delay, in order); what the calls answer in one turn leaves
// as one message.
import type { WebSocket } from "ws";
import { SharedKind, SharedMessageReader } from "../transceiver/backend-shared.ts";
import { SharedMessageWriter } from "../transceiver/backend-shared-writer.ts";
import { EchoEvents, type KeepDeps } from "./events-shell.ts";

export interface SharedEchoDeps {
  delayMs: number;
  keep: KeepDeps;
  /** A call opened (+1) or ended (-1) on the connection. */
  calls(delta: number): void;
  /** An audio frame of `slot` was echoed. */
  echoed(slot: number): void;
  /** An event a call sent (its text). */
  event(text: string): void;
}

export function serveShared(ws: WebSocket, d: SharedEchoDeps): void {
  const engines = new Map<number, EchoEvents>();
  const reader = new SharedMessageReader();
  const out = new SharedMessageWriter({
    // A view of the writer's buffer is copied: the server does not mask, so ws may keep it queued.
    send: (m, view) => {
      if (ws.readyState === ws.OPEN) ws.send(view ? Buffer.from(m) : m, { binary: true });
    },
    started: () => setImmediate(() => out.flush()),
  });
  const sendEvent = (channel: number, text: string): void => {
    out.text(SharedKind.event, channel, text, Buffer.byteLength(text, "utf8"));
  };
  const end = (channel: number): void => {
    const e = engines.get(channel);
    if (e === undefined) return;
    engines.delete(channel);
    e.close();
    d.calls(-1);
  };

  // The delay: echoed records wait in one FIFO with one timer per connection.
  const delayed: { at: number; channel: number; body: Buffer; slot: number }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const echo = (channel: number, body: Buffer, slot: number): void => {
    if (!engines.has(channel)) return; // ended while it waited
    out.record(SharedKind.audio, channel, body);
    d.echoed(slot);
  };
  const release = (): void => {
    timer = undefined;
    const now = performance.now();
    while (delayed.length > 0 && delayed[0]!.at <= now) {
      const x = delayed.shift()!;
      echo(x.channel, x.body, x.slot);
    }
    if (delayed.length > 0) timer = setTimeout(release, Math.max(0, delayed[0]!.at - now));
  };

  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (!isBinary || reader.start(data) !== "ok") return;
    for (let s = reader.next(); s !== "end"; s = reader.next()) {
      if (s !== "ok") return;
      const channel = reader.channel;
      const body = data.subarray(reader.bodyStart, reader.bodyEnd);
      if (reader.kind === SharedKind.open) {
        if (engines.has(channel)) continue;
        engines.set(channel, new EchoEvents((text) => sendEvent(channel, text), d.keep));
        d.calls(1);
        continue;
      }
      const engine = engines.get(channel);
      if (engine === undefined) continue;
      if (reader.kind === SharedKind.close) {
        end(channel);
      } else if (reader.kind === SharedKind.event) {
        const text = body.toString("utf8");
        d.event(text);
        engine.event(text);
      } else {
        const f = reader.frame;
        engine.audio(f.codec, f.flags, body.subarray(12));
        if (d.delayMs === 0) {
          echo(channel, body, f.participant ?? 0);
        } else {
          delayed.push({ at: performance.now() + d.delayMs, channel, body, slot: f.participant ?? 0 });
          timer ??= setTimeout(release, d.delayMs);
        }
      }
    }
  });
  ws.on("close", () => {
    if (timer) clearTimeout(timer);
    delayed.length = 0;
    for (const channel of [...engines.keys()]) end(channel);
  });
  ws.on("error", () => {});
}
