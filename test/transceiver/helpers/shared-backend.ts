// Test parts for shared backend connections (regional/transceiver/backend-shared.ts): calls opened
// on a connector with handlers that record everything, and a backend written for the tests that
// speaks shared connections, acts as an old backend (answers without x-gr-shared), or refuses an
// upgrade without x-gr-call-id; it records every upgrade, message and record it sees.
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import type {
  BackendConnector,
  BackendLink,
  BridgeErrorReason,
} from "../../../regional/transceiver/backend-link.ts";
import {
  AudioCodec,
  type AudioFrameHeader,
  encodeAudioFrame,
  newAudioFrameHeader,
  readAudioFrameHeader,
} from "../../../regional/transceiver/backend-protocol.ts";
import {
  SHARED_HEADER,
  SHARED_RECORD_HEADER_BYTES,
  SHARED_VERSION,
  SharedKind,
  SharedMessageReader,
  type SharedStatus,
} from "../../../regional/transceiver/backend-shared.ts";

/** Clean-ups a test registers, run after it newest first; call once per test file. */
export function cleanupAfterEach(): (() => Promise<void> | void)[] {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });
  return cleanup;
}

export const frame = (seq: number): AudioFrameHeader => ({
  codec: AudioCodec.opus,
  flags: 0,
  sequenceNumber: seq,
  timestamp: seq * 960,
  participant: 1,
});

/** A payload that names its call and frame: [tag, seq low byte, …]. */
export const payload = (tag: number, seq: number, bytes = 40): Buffer => {
  const p = Buffer.alloc(bytes, seq & 0xff);
  p[0] = tag;
  return p;
};

// ---- calls ---------------------------------------------------------------------------------------

export interface TestCall {
  callId: string;
  link: BackendLink;
  audio: { seq: number; payload: Buffer }[];
  events: string[];
  drops: ("audio" | "event")[];
  errors: BridgeErrorReason[];
  closes: { code: number; reason: string }[];
}

export function openCall(c: BackendConnector, callId: string): TestCall {
  const t: Omit<TestCall, "link"> = { callId, audio: [], events: [], drops: [], errors: [], closes: [] };
  const link = c.open(
    { callId, clusterId: 3, transceiverId: 7, codec: AudioCodec.opus },
    {
      onAudio: (h, p) => t.audio.push({ seq: h.sequenceNumber, payload: Buffer.from(p) }),
      onEvent: (text) => t.events.push(text),
      onDrop: (k) => t.drops.push(k),
      onError: (r) => t.errors.push(r),
      onClose: (code, reason) => t.closes.push({ code, reason }),
    },
  );
  return { ...t, link };
}

export const seqs = (c: TestCall): number[] => c.audio.map((a) => a.seq);

// ---- messages a backend sends --------------------------------------------------------------------

export interface RawRecord {
  kind: number;
  channel: number;
  body: Uint8Array;
  /** The length written in the header, when it should lie. */
  len?: number;
}

/** A shared message built byte by byte, so a test can break any field. */
export function sharedMessage(records: RawRecord[], version = SHARED_VERSION): Buffer {
  const parts: Buffer[] = [Buffer.of(version)];
  for (const r of records) {
    const h = Buffer.alloc(SHARED_RECORD_HEADER_BYTES);
    h[0] = r.kind;
    h.writeUInt32BE(r.channel, 1);
    h.writeUInt32BE(r.len ?? r.body.length, 5);
    parts.push(h, Buffer.from(r.body));
  }
  return Buffer.concat(parts);
}

export const audioRecord = (channel: number, seq: number, tag = 0): RawRecord => ({
  kind: SharedKind.audio,
  channel,
  body: encodeAudioFrame(frame(seq), payload(tag, seq, 20)),
});

export const closeRecord = (channel: number, code: number, reason: string): RawRecord => {
  const body = Buffer.alloc(2 + Buffer.byteLength(reason));
  body.writeUInt16BE(code, 0);
  body.write(reason, 2);
  return { kind: SharedKind.close, channel, body };
};

// ---- the test backend ----------------------------------------------------------------------------

export interface SeenRecord {
  kind: number;
  channel: number;
  body: Buffer;
  /** Audio: the frame's sequence number. */
  seq?: number;
}

/** One shared connection as the backend sees it. */
export interface SharedPeer {
  ws: WebSocket;
  headers: IncomingHttpHeaders;
  messages: Buffer[];
  /** Records of every message, in order. */
  records: SeenRecord[];
  /** Statuses other than "ok" the reader met (a transceiver that writes a bad message). */
  bad: SharedStatus[];
  /** call id → channel, from the open records. */
  channels: Map<string, number>;
  closed: boolean;
}

/** One per-call connection as the backend sees it. */
export interface PerCallPeer {
  ws: WebSocket;
  callId: string;
  headers: IncomingHttpHeaders;
  /** Text messages as strings, audio frames as their sequence numbers. */
  messages: (string | number)[];
}

export type BackendMode = "shared" | "old" | "refuse";

export interface TestBackend {
  url: string;
  /** Can change while it runs (an old backend upgraded in place). */
  mode: BackendMode;
  /** Request headers of every upgrade that was asked for (refused ones too), in order. */
  upgrades: IncomingHttpHeaders[];
  shared: SharedPeer[];
  perCall: PerCallPeer[];
  /** Connections an old backend accepted without a call id (probes), with the code they closed with. */
  unnamed: { ws: WebSocket; closeCode?: number }[];
  /** The shared peer carrying `callId`. */
  peerOf(callId: string): SharedPeer;
  close(): Promise<void>;
}

export const asksShared = (h: IncomingHttpHeaders): boolean =>
  h[SHARED_HEADER] === "1" && h["x-gr-call-id"] === undefined;

/**
 * "shared": answers x-gr-shared to an upgrade that asks for it; "old": never answers it (a
 * connection without a call id is accepted, then gets nothing); "refuse": HTTP 400 without
 * x-gr-call-id. `echo`: audio comes back as it came (a record on its channel, or the frame).
 */
export async function startTestBackend(o: { mode: BackendMode; echo?: boolean }): Promise<TestBackend> {
  const echo = o.echo ?? true;
  const be: TestBackend = {
    url: "",
    mode: o.mode,
    upgrades: [],
    shared: [],
    perCall: [],
    unnamed: [],
    peerOf(callId) {
      const p = be.shared.find((s) => s.channels.has(callId));
      if (!p) throw new Error(`no shared connection carries ${callId}`);
      return p;
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
  const wss = new WebSocketServer({
    port: 0,
    host: "127.0.0.1",
    perMessageDeflate: false,
    verifyClient: ({ req }, done) => {
      be.upgrades.push(req.headers);
      if (be.mode === "refuse" && req.headers["x-gr-call-id"] === undefined)
        done(false, 400, "call id needed");
      else done(true);
    },
  });
  await new Promise<void>((r) => wss.once("listening", () => r()));
  be.url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  wss.on("headers", (hs, req) => {
    if (be.mode === "shared" && asksShared(req.headers)) hs.push(`${SHARED_HEADER}: 1`);
  });
  wss.on("connection", (ws, req) => {
    ws.on("error", () => {});
    if (be.mode === "shared" && asksShared(req.headers)) serveShared(ws, req.headers);
    else if (req.headers["x-gr-call-id"] !== undefined) servePerCall(ws, req.headers);
    else {
      // An old backend's answer to a connection that names no call: nothing.
      const u: TestBackend["unnamed"][number] = { ws };
      be.unnamed.push(u);
      ws.on("close", (code) => {
        u.closeCode = code;
      });
    }
  });

  function serveShared(ws: WebSocket, headers: IncomingHttpHeaders): void {
    const peer: SharedPeer = {
      ws,
      headers,
      messages: [],
      records: [],
      bad: [],
      channels: new Map(),
      closed: false,
    };
    be.shared.push(peer);
    const r = new SharedMessageReader();
    ws.on("close", () => {
      peer.closed = true;
    });
    ws.on("message", (data: Buffer) => {
      peer.messages.push(data);
      const back: RawRecord[] = [];
      let s: SharedStatus | "end" = r.start(data);
      if (s !== "ok") peer.bad.push(s);
      for (s = r.next(); s === "ok"; s = r.next()) {
        const body = Buffer.from(data.subarray(r.bodyStart, r.bodyEnd));
        const rec: SeenRecord = { kind: r.kind, channel: r.channel, body };
        if (r.kind === SharedKind.audio) {
          rec.seq = r.frame.sequenceNumber;
          back.push({ kind: SharedKind.audio, channel: r.channel, body });
        } else if (r.kind === SharedKind.open) {
          peer.channels.set((JSON.parse(body.toString()) as { call_id: string }).call_id, r.channel);
        }
        peer.records.push(rec);
      }
      if (s !== "end") peer.bad.push(s);
      if (echo && back.length > 0) ws.send(sharedMessage(back));
    });
  }

  function servePerCall(ws: WebSocket, headers: IncomingHttpHeaders): void {
    const peer: PerCallPeer = { ws, callId: String(headers["x-gr-call-id"]), headers, messages: [] };
    be.perCall.push(peer);
    const h = newAudioFrameHeader();
    ws.on("message", (data: Buffer, binary: boolean) => {
      if (!binary) {
        peer.messages.push(data.toString());
        return;
      }
      // No x-gr-audio-batch answered: one frame per message.
      peer.messages.push(readAudioFrameHeader(data, h) === "ok" ? h.sequenceNumber : -1);
      if (echo) ws.send(data, { binary: true });
    });
  }

  return be;
}

/** Audio sequence numbers a peer received on `channel`. */
export const peerSeqs = (p: SharedPeer, channel: number): number[] =>
  p.records.filter((r) => r.kind === SharedKind.audio && r.channel === channel).map((r) => r.seq!);
