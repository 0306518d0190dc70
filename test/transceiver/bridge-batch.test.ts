// Audio batches on the backend WebSocket: the codec byte for byte and never throwing, and the
// bridge with real sockets: negotiated with the echo agent (one message per turn, echoed as a
// batch), not with a backend that does not answer the header (one frame per message, as before),
// and batches a hostile backend crafts (bad counts, lengths, versions, unasked) end as bad_frame.
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { type EchoAgent, startEchoAgent } from "../../regional/echo-agent/agent.ts";
import type { BridgeErrorReason } from "../../regional/transceiver/backend-link.ts";
import {
  AUDIO_BATCH_HEADER,
  AudioBatchReader,
  AudioCodec,
  type AudioFrameHeader,
  appendAudioFrame,
  newAudioFrameHeader,
  sealAudioBatch,
} from "../../regional/transceiver/backend-protocol.ts";
import { BackendBridge } from "../../regional/transceiver/shell/bridge.ts";
import { until } from "../support/wait.ts";

const frame = (seq: number): AudioFrameHeader => ({
  codec: AudioCodec.opus,
  flags: seq === 0 ? 1 : 0,
  sequenceNumber: seq,
  timestamp: seq * 960,
});

function batch(frames: [AudioFrameHeader, Uint8Array][]): Buffer {
  const b = Buffer.alloc(4096);
  let off = 2;
  for (const [h, p] of frames) off = appendAudioFrame(b, off, h, p);
  sealAudioBatch(b, frames.length);
  return b.subarray(0, off);
}

describe("audio batch codec", () => {
  it("matches the documented layout byte for byte", () => {
    const b = batch([
      [
        { codec: AudioCodec.opus, flags: 1, sequenceNumber: 0xbeef, timestamp: 0x01020304 },
        Uint8Array.of(0xfc),
      ],
      [{ codec: AudioCodec.pcmu, flags: 0, sequenceNumber: 1, timestamp: 2 }, Uint8Array.of()],
    ]);
    expect(b.toString("hex")).toBe(
      `0202000d010101 00beef01020304 0000fc000c01020000000100000002 0000`.replace(/ /g, ""),
    );
  });

  it("round-trips any frames, and the reader never throws on any bytes", () => {
    const r = new AudioBatchReader();
    const h = newAudioFrameHeader();
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 0xffff }), fc.uint8Array({ maxLength: 200 })), {
          minLength: 1,
          maxLength: 12,
        }),
        (xs) => {
          const b = batch(xs.map(([seq, p]) => [frame(seq), p]));
          expect(r.start(b)).toBe("ok");
          for (const [seq, p] of xs) {
            expect(r.next(h)).toBe("ok");
            expect(h.sequenceNumber).toBe(seq);
            expect(Buffer.from(b.subarray(r.payloadStart, r.payloadEnd)).equals(Buffer.from(p))).toBe(true);
          }
          expect(r.next(h)).toBe("end");
        },
      ),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        if (r.start(bytes) !== "ok") return;
        for (let i = 0; i < 70; i++) if (r.next(h) !== "ok") return;
      }),
    );
  });

  it("refuses a zero or excessive count, a short or overlong length, trailing bytes", () => {
    const r = new AudioBatchReader();
    const h = newAudioFrameHeader();
    const good = batch([[frame(1), Uint8Array.of(1, 2, 3)]]);
    const walk = (b: Uint8Array): string => {
      const s = r.start(b);
      if (s !== "ok") return s;
      for (;;) {
        const n = r.next(h);
        if (n !== "ok") return n;
      }
    };
    expect(walk(good)).toBe("end");
    expect(walk(Buffer.concat([good.subarray(0, 1), Buffer.of(0), good.subarray(2)]))).toBe("bad-count");
    expect(walk(Buffer.concat([good.subarray(0, 1), Buffer.of(65), good.subarray(2)]))).toBe("bad-count");
    expect(walk(Buffer.concat([good, Buffer.of(0)]))).toBe("bad-length");
    expect(walk(good.subarray(0, good.length - 1))).toBe("bad-length");
    const short = Buffer.from(good);
    short[3] = 11;
    expect(walk(short)).toBe("bad-length");
    const v = Buffer.from(good);
    v[4] = 9;
    expect(walk(v)).toBe("bad-version");
    expect(walk(Buffer.of(2, 1, 0))).toBe("truncated");
  });
});

describe("the bridge with batches", () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  function open(url: string) {
    const audio: { seq: number; slot: number; payload: Buffer }[] = [];
    const errors: BridgeErrorReason[] = [];
    const b = new BackendBridge(
      { url, headers: {}, queueBytes: 256 * 1024, connectTimeoutMs: 2000 },
      {
        onAudio: (h, p) =>
          audio.push({ seq: h.sequenceNumber, slot: h.participant ?? 0, payload: Buffer.from(p) }),
        onEvent: () => {},
        onDrop: () => {},
        onError: (r) => errors.push(r),
        onClose: () => {},
      },
    );
    cleanup.push(() => b.close());
    return { b, audio, errors };
  }

  // A backend that records raw messages and optionally answers the batch header.
  async function rawBackend(answerBatch: boolean) {
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise<void>((r) => wss.once("listening", () => r()));
    if (answerBatch) wss.on("headers", (hs) => hs.push(`${AUDIO_BATCH_HEADER}: 1`));
    const messages: { binary: boolean; data: Buffer }[] = [];
    const sockets: WebSocket[] = [];
    const asked: (string | undefined)[] = [];
    wss.on("connection", (ws, req) => {
      asked.push(req.headers[AUDIO_BATCH_HEADER] as string | undefined);
      sockets.push(ws);
      ws.on("message", (data: Buffer, binary) => messages.push({ binary, data }));
    });
    cleanup.push(() => {
      for (const c of wss.clients) c.terminate();
      return new Promise<void>((r) => wss.close(() => r()));
    });
    return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, messages, sockets, asked, wss };
  }

  it("sends one batch per turn to the echo agent and gets every frame back in order", async () => {
    const agent: EchoAgent = await startEchoAgent();
    cleanup.push(() => agent.close());
    const { b, audio, errors } = open(agent.url);
    await until(() => b.state === "open", 'b.state === "open"');
    expect(b.batching).toBe(true);
    for (let turn = 0; turn < 5; turn++) {
      for (let i = 0; i < 10; i++) b.sendAudio(frame(turn * 10 + i), Buffer.alloc(60 + i, turn * 10 + i));
      await new Promise((r) => setImmediate(r));
    }
    await until(() => audio.length === 50, "audio.length === 50");
    expect(audio.map((a) => a.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(audio.every((a, i) => a.payload.length === 60 + (i % 10) && a.payload[0] === i)).toBe(true);
    expect(agent.framesEchoed).toBe(50);
    expect(errors).toEqual([]);
  });

  it("echoes each frame with its participant slot and counts frames per slot (batched or not)", async () => {
    for (const audioBatch of [true, false]) {
      const agent: EchoAgent = await startEchoAgent({ audioBatch });
      cleanup.push(() => agent.close());
      const { b, audio } = open(agent.url);
      await until(() => b.state === "open", 'b.state === "open"');
      for (let i = 0; i < 9; i++) b.sendAudio({ ...frame(i), participant: 1 + (i % 3) }, Buffer.alloc(10, i));
      await until(() => audio.length === 9, "audio.length === 9");
      expect(audio.map((a) => a.slot)).toEqual([1, 2, 3, 1, 2, 3, 1, 2, 3]);
      expect(agent.framesBySlot()).toEqual({ 1: 3, 2: 3, 3: 3 });
      const st = (await (await fetch(`${agent.url.replace("ws:", "http:")}/status`)).json()) as {
        framesBySlot: Record<string, number>;
      };
      expect(st.framesBySlot).toEqual({ 1: 3, 2: 3, 3: 3 });
    }
  });

  it("batches per turn: ten frames in one turn are one message, an event after them comes after", async () => {
    const be = await rawBackend(true);
    const { b } = open(be.url);
    await until(() => b.state === "open", 'b.state === "open"');
    for (let i = 0; i < 10; i++) b.sendAudio(frame(i), Buffer.alloc(100, i));
    b.sendEvent('{"type":"x"}');
    await until(() => be.messages.length === 2, "be.messages.length === 2");
    expect(be.asked).toEqual(["1"]);
    expect(be.messages[0]!.binary).toBe(true);
    expect(be.messages[0]!.data[0]).toBe(2);
    expect(be.messages[0]!.data[1]).toBe(10);
    expect(be.messages[1]!.data.toString()).toBe('{"type":"x"}');
  });

  it("keeps one frame per message for a backend that does not answer the header", async () => {
    const be = await rawBackend(false);
    const { b, audio, errors } = open(be.url);
    await until(() => b.state === "open", 'b.state === "open"');
    expect(b.batching).toBe(false);
    for (let i = 0; i < 3; i++) b.sendAudio(frame(i), Buffer.alloc(20, i));
    await until(() => be.messages.length === 3, "be.messages.length === 3");
    expect(be.messages.map((m) => [m.data[0], m.data.length])).toEqual([
      [1, 32],
      [1, 32],
      [1, 32],
    ]);
    // The frames were built in one reused buffer: each message still carries its own bytes.
    expect(be.messages.map((m) => m.data[12])).toEqual([0, 1, 2]);
    // A batch it was never offered is a bad frame, not audio.
    be.sockets[0]!.send(batch([[frame(7), Uint8Array.of(1)]]));
    await until(() => errors.length === 1, "errors.length === 1");
    expect(errors).toEqual(["bad_frame"]);
    expect(audio).toEqual([]);
  });

  it("delivers frames before a forged one, then reports bad_frame and keeps serving", async () => {
    const be = await rawBackend(true);
    const { b, audio, errors } = open(be.url);
    await until(
      () => b.state === "open" && be.sockets.length === 1,
      'b.state === "open" && be.sockets.length === 1',
    );
    const ws = be.sockets[0]!;
    const good = batch([
      [frame(1), Uint8Array.of(1)],
      [frame(2), Uint8Array.of(2)],
    ]);
    const lying = Buffer.from(good);
    lying[1] = 3; // claims a third frame
    const overlong = Buffer.from(good);
    overlong[2] = 0xff; // first frame longer than the message
    const zero = Buffer.from(good);
    zero[1] = 0;
    ws.send(lying);
    ws.send(overlong);
    ws.send(zero);
    ws.send(Buffer.of(2));
    ws.send(good);
    await until(() => audio.length === 4 && errors.length === 4, "audio.length === 4 && errors.length === 4");
    expect(audio.map((a) => a.seq)).toEqual([1, 2, 1, 2]);
    expect(errors).toEqual(["bad_frame", "bad_frame", "bad_frame", "bad_frame"]);
    expect(b.state).toBe("open");
  });
});
