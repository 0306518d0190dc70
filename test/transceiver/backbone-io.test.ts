// The backbone socket's datagram I/O (TRANSCEIVER_IO), on whichever path the test project selects
// (vitest.config.ts: "batch" in main, "dgram" in transceiver-dgram): real sockets on 127.0.0.1, a
// recording stand-in for the mux. Data frames reach the mux intact and as copies of their own
// (the batched path reuses its receive slots), bursts larger than one sendmmsg batch are all
// answered, sends outside a receive batch leave in the same event-loop turn, and the choice of
// path, with its reason, is explicit.
import { createSocket, type Socket } from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import {
  BatchSocket,
  loadBinding,
  NO_HEADER,
  RESUMABLE_MISSING,
  Stat,
} from "../../regional/common/native/index.ts";
import { ConfigError, configWithDefaults, loadConfig } from "../../regional/transceiver/config.ts";
import type { Mux } from "../../regional/transceiver/core/mux.ts";
import { TransceiverMetrics } from "../../regional/transceiver/metrics.ts";
import type { Backbone } from "../../regional/transceiver/shell/backbone.ts";
import { chooseBackboneIo, openBackbone } from "../../regional/transceiver/shell/backbone-open.ts";
import { writeIpv4 } from "../../shared/backbone/address.ts";
import {
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  type FrameHeader,
  FrameType,
  newFrameHeader,
} from "../../shared/backbone/frame.ts";
import { until } from "../support/wait.ts";
import { randomKeyring } from "./helpers/harness.ts";

const IO = process.env.TRANSCEIVER_IO === "dgram" ? "dgram" : "batch";
/** A test of the batched path itself: registered only where it runs (the main project). */
const batchOnly = (name: string, fn: () => Promise<void>): void => {
  if (IO === "batch") it(name, fn);
};

interface Received {
  payload: Buffer;
  host: string;
  port: number;
  clientPort: number;
}

function frame(type: number, clientPort: number, payload: Uint8Array, transceiverId = 7): Buffer {
  const h: FrameHeader = { ...newFrameHeader(), type, clusterId: 3, transceiverId, popId: 1, clientPort };
  writeIpv4(h.clientIp, 0x0a000001);
  const b = Buffer.alloc(FRAME_HEADER_BYTES + payload.length);
  encodeFrameHeader(b, 0, h);
  b.set(payload, FRAME_HEADER_BYTES);
  return b;
}

let open: { backbone: Backbone; relay: Socket }[] = [];
afterEach(async () => {
  for (const o of open) {
    await o.backbone.close();
    o.relay.close();
  }
  open = [];
});

type Handler = (payload: Buffer, h: FrameHeader) => void;

async function setUp(socketCount = 1, onFrame?: Handler, host = "127.0.0.1", gro = true) {
  const metrics = new TransceiverMetrics(3);
  const config = configWithDefaults({
    clusterId: 3,
    transceiverId: 7,
    hintKeys: randomKeyring(1),
    callIdKeys: randomKeyring(2),
    clusterSecret: new Uint8Array(32),
    socketCount,
    gro,
    udp: { host, port: 0, ipv6: host.includes(":") },
  });
  const opened = await openBackbone(config, metrics);
  metrics.datagramIo(opened.io, opened.totals);
  const received: Received[] = [];
  const hooks: { onFrame: Handler | undefined } = { onFrame };
  opened.socket.attach({
    handle(payload: Buffer, h: FrameHeader, host: string, port: number) {
      received.push({ payload, host, port, clientPort: h.clientPort });
      hooks.onFrame?.(payload, h);
    },
  } as unknown as Mux);
  // A burst of sendmmsg batches lands faster than a dgram reader drains it: room for all of it.
  const relay = createSocket({ type: host.includes(":") ? "udp6" : "udp4", recvBufferSize: 4 << 20 });
  await new Promise<void>((r) => relay.bind(0, host, () => r()));
  const fromRelay: Buffer[] = [];
  relay.on("message", (m) => fromRelay.push(m));
  open.push({ backbone: opened.socket, relay });
  const to = opened.socket.address;
  const send = (b: Buffer) => relay.send(b, to.port, to.host);
  return { ...opened, metrics, received, relay, fromRelay, send, hooks };
}

describe(`backbone datagram I/O (${IO})`, () => {
  it("runs the path the project asked for, and says so in the metrics", async () => {
    const s = await setUp();
    expect(s.io).toBe(IO);
    const text = s.metrics.render();
    expect(text).toContain(`gr_transceiver_io_mode{cluster="3",mode="${IO}"} 1`);
    if (IO === "batch") {
      s.send(frame(FrameType.data, 1000, Buffer.from("x")));
      await until(() => s.received.length === 1, "frame received");
      expect(s.metrics.render()).toMatch(
        /gr_transceiver_io_events_total\{cluster="3",event="rx_batches"\} [1-9]/,
      );
    }
  });

  it("hands every data frame to the mux whole, as a copy that later batches do not overwrite", async () => {
    const s = await setUp();
    const count = 600;
    for (let i = 0; i < count; i++)
      s.send(frame(FrameType.data, 2000 + i, Buffer.from(`payload-${i}-`.repeat(8))));
    await until(() => s.received.length === count, `${count} frames received`);
    const relayPort = s.relay.address().port;
    for (const [i, r] of s.received.entries()) {
      expect(r.payload.toString()).toBe(`payload-${i}-`.repeat(8));
      expect([r.host, r.port, r.clientPort]).toEqual(["127.0.0.1", relayPort, 2000 + i]);
    }
  });

  it("answers a burst of pings longer than one send batch, each with its own payload", async () => {
    const s = await setUp();
    const count = 300;
    for (let i = 0; i < count; i++) s.send(frame(FrameType.ping, 0, Buffer.from(`probe-${i}`), 99));
    await until(() => s.fromRelay.length === count, `${count} pongs`);
    const got = s.fromRelay.map((m) => {
      expect(m[1]! & 0x0f).toBe(FrameType.pong);
      return m.subarray(FRAME_HEADER_BYTES).toString();
    });
    expect(new Set(got)).toEqual(new Set(Array.from({ length: count }, (_, i) => `probe-${i}`)));
  });

  it("runs what a handshake datagram started before the frames behind it, as dgram does", async () => {
    // werift finishes a DTLS handshake (and installs the SRTP keys) in promise continuations; on
    // dgram they run before the next datagram's callback. A batch must not hand over the RTP
    // that follows a client's last handshake flight before they have run.
    let installed = -1;
    const seenBy: number[][] = [];
    const s = await setUp(1, (payload) => {
      const round = payload[1]!;
      if (payload[0] === 0x16)
        void Promise.resolve().then(() =>
          Promise.resolve().then(() => {
            installed = round;
          }),
        );
      else {
        seenBy[round] ??= [];
        seenBy[round].push(installed);
      }
    });
    const rounds = 40;
    for (let r = 0; r < rounds; r++) {
      s.send(frame(FrameType.data, 1, Uint8Array.of(0x16, r, 0xfe, 0xfd)));
      for (let k = 0; k < 5; k++) s.send(frame(FrameType.data, 1, Uint8Array.of(0x80, r, 0, k)));
    }
    await until(() => s.received.length === rounds * 6, "every frame");
    for (let r = 0; r < rounds; r++) expect(seenBy[r]).toEqual([r, r, r, r, r]);
    // and in the order they came
    expect(
      s.received.map((f) => f.payload[1]! * 10 + (f.payload[0] === 0x16 ? 0 : 1 + f.payload[3]!)),
    ).toEqual(Array.from({ length: rounds * 6 }, (_, i) => Math.floor(i / 6) * 10 + (i % 6)));
  });

  it("gives a flood of STUN-like frames a callback each and holds no other call's frames back", async () => {
    // Frames that look like STUN (first byte 0-3) make the batched path wait for werift's
    // continuations before the next frame; the mux drops these (bad_stun), but only after. Held
    // in a backlog that drained one per event-loop turn, such a flood from one client (or anyone
    // who reaches the port) pushed every other call's RTP out, dropped as io_backlog.
    const s = await setUp();
    const chunks = 24;
    const perChunk = 250;
    for (let c = 0; c < chunks; c++) {
      for (let i = 0; i < perChunk; i++) {
        if (i % 10 === 9) s.send(frame(FrameType.data, 2, Uint8Array.of(0x80, c, i)));
        else s.send(frame(FrameType.data, 1, Uint8Array.of(0x00, 0x01, 0, 0)));
      }
      await new Promise((r) => setImmediate(r));
    }
    const total = chunks * perChunk;
    await until(() => s.received.length === total, `${total} frames handed over`, 20_000);
    const rtp = s.received.filter((r) => r.clientPort === 2).map((r) => r.payload[1]! * 1000 + r.payload[2]!);
    expect(rtp).toEqual(
      Array.from(
        { length: chunks * (perChunk / 10) },
        (_, k) => Math.floor(k / 25) * 1000 + (k % 25) * 10 + 9,
      ),
    );
  });

  it("hands the mux nothing more once the socket is closed from inside a batch", async () => {
    let backbone: Backbone | undefined;
    const s = await setUp(1, () => {
      void backbone?.close();
    });
    backbone = s.socket;
    // Sent before the transceiver's loop reads: one batch on the batched path.
    for (let i = 0; i < 10; i++) s.send(frame(FrameType.data, 100 + i, Uint8Array.of(0x80, i)));
    await until(() => s.received.length > 0, "first frame");
    await new Promise((r) => setTimeout(r, 50));
    expect(s.received.map((r) => r.clientPort)).toEqual([100]);
  });

  it("serves an IPv6 relay: frames from [::1] reach the mux with its address, pings are answered", async () => {
    const s = await setUp(1, undefined, "::1");
    s.send(frame(FrameType.data, 3000, Buffer.from("over six")));
    s.send(frame(FrameType.ping, 0, Buffer.from("probe-6"), 99));
    await until(() => s.received.length === 1 && s.fromRelay.length === 1, "frame and pong");
    expect([s.received[0]!.host, s.received[0]!.port]).toEqual(["::1", s.relay.address().port]);
    expect(s.received[0]!.payload.toString()).toBe("over six");
    expect(s.fromRelay[0]![1]! & 0x0f).toBe(FrameType.pong);
    expect(s.fromRelay[0]!.subarray(FRAME_HEADER_BYTES).toString()).toBe("probe-6");
    // and a send to the mux's text form of that address goes out
    s.socket.send(Buffer.alloc(FRAME_HEADER_BYTES, 1), Buffer.from("back"), s.relay.address().port, "::1");
    await until(() => s.fromRelay.length === 2, "send to ::1");
    expect(s.fromRelay[1]!.subarray(FRAME_HEADER_BYTES).toString()).toBe("back");
  });

  batchOnly("counts a send longer than any datagram instead of losing it silently", async () => {
    const s = await setUp();
    s.socket.send(
      Buffer.alloc(FRAME_HEADER_BYTES),
      Buffer.alloc(300_000),
      s.relay.address().port,
      "127.0.0.1",
    );
    expect(s.metrics.render()).toMatch(/gr_transceiver_io_events_total\{cluster="3",event="tx_errors"\} 1\b/);
  });

  it("drops and counts frames for another transceiver and garbage, and keeps serving", async () => {
    const s = await setUp(2);
    s.send(frame(FrameType.data, 1, Buffer.from("elsewhere"), 8));
    s.send(Buffer.from("not a frame at all"));
    s.send(frame(FrameType.data, 2, Buffer.from("mine")));
    await until(() => s.received.length === 1, "own frame");
    expect(s.received[0]!.payload.toString()).toBe("mine");
    await until(() => s.metrics.drops.bad_frame.value === 1, "garbage counted");
    expect(s.metrics.drops.wrong_transceiver.value).toBe(1);
  });

  batchOnly("has every send on the wire within one event-loop turn, wherever it was made", async () => {
    // The kernel has taken a datagram once the addon counts it sent (stats tx). Each probe sends,
    // then queues a setImmediate behind the flush that send scheduled (or behind the end of the
    // receive callback it was made in): by then it must be counted.
    const s = await setUp();
    const header = Buffer.alloc(FRAME_HEADER_BYTES, 7);
    const rp = s.relay.address().port;
    const sent = () => s.totals!()[Stat.tx]!;
    const probe = () =>
      new Promise<number>((resolve) => {
        const before = sent();
        s.socket.send(header, Buffer.from("probe"), rp, "127.0.0.1");
        setImmediate(() => resolve(sent() - before));
      });
    const from = (schedule: (f: () => void) => void) =>
      new Promise<number>((resolve) => schedule(() => void probe().then(resolve)));
    const got: Record<string, number> = {};
    got.timer = await from((f) => setTimeout(f, 1));
    got.immediate = await from((f) => setImmediate(f));
    got.microtask = await from((f) => queueMicrotask(f));
    // inside a receive callback, and in a continuation it started (what werift's handshake code does)
    got.receive = await from((f) => {
      s.hooks.onFrame = f;
      s.send(frame(FrameType.data, 1, Uint8Array.of(0x80)));
    });
    got.continuation = await from((f) => {
      s.hooks.onFrame = () => void Promise.resolve().then(f);
      s.send(frame(FrameType.data, 1, Uint8Array.of(0x16, 0xfe, 0xfd)));
    });
    expect(got).toEqual({ timer: 1, immediate: 1, microtask: 1, receive: 1, continuation: 1 });
  });

  // A relay sends a run of one length to one transceiver as a UDP GSO train (relay.md); with
  // UDP_GRO the train is one queue entry here, split back into its frames in order.
  for (const gro of [true, false]) {
    batchOnly(
      `takes a relay's GSO train ${gro ? "joined (UDP GRO), split into its frames" : "frame by frame (TRANSCEIVER_GRO=0)"}`,
      async () => {
        const s = await setUp(1, undefined, "127.0.0.1", gro);
        const relay = BatchSocket.open({
          host: "127.0.0.1",
          port: 0,
          reusePort: false,
          bufferBytes: 1 << 20,
          gso: true,
        });
        try {
          const arena = Buffer.alloc(64 * 1024);
          const count = 40;
          let used = 0;
          for (let i = 0; i < count; i++) {
            // All the same length but the last (a train's last datagram may be shorter).
            const f = frame(
              FrameType.data,
              3000 + i,
              Buffer.from(i === count - 1 ? "last" : `train-${String(i).padStart(3, "0")}`),
            );
            f.copy(arena, used);
            relay.queue(0, used, f.length, NO_HEADER, 4, s.socket.address.port, 0x7f000001);
            used += f.length;
          }
          relay.flushArena(arena);
          await until(() => s.received.length === count, `${count} frames`);
          expect(s.received.map((r) => r.clientPort)).toEqual(
            Array.from({ length: count }, (_, i) => 3000 + i),
          );
          expect(s.received.at(-1)!.payload.toString()).toBe("last");
          expect(s.received[7]!.payload.toString()).toBe("train-007");
          expect(s.received.every((r) => r.port === relay.address().port)).toBe(true);
          expect(relay.stats[Stat.txGsoTrains]).toBeGreaterThan(0);
          const joined = s.totals!()[Stat.rxGro]!;
          if (gro) expect(joined).toBeGreaterThan(0);
          else expect(joined).toBe(0);
        } finally {
          relay.close();
        }
      },
    );
  }

  it("sends outside a receive batch (a timer, a backend message) in the same event-loop turn", async () => {
    const s = await setUp();
    const header = Buffer.alloc(FRAME_HEADER_BYTES, 7);
    const rp = s.relay.address().port;
    setTimeout(() => {
      for (let i = 0; i < 100; i++) s.socket.send(header, Buffer.from(`out-${i}`), rp, "127.0.0.1");
    }, 5);
    const peer = s.socket.peerFor("127.0.0.1", rp);
    setTimeout(() => peer.send(header, Buffer.from("via-peer")), 10);
    await until(() => s.fromRelay.length === 101, "101 datagrams at the relay");
    expect(s.fromRelay.map((m) => m.subarray(FRAME_HEADER_BYTES).toString())).toEqual([
      ...Array.from({ length: 100 }, (_, i) => `out-${i}`),
      "via-peer",
    ]);
  });
});

describe("choosing the backbone datagram I/O", () => {
  const missing = new Error("addon not built (npm run build:native)");
  it("auto takes the addon when it loads, else dgram with the reason", () => {
    expect(chooseBackboneIo("auto", missing)).toEqual({ io: "dgram", reason: missing.message });
    const b = loadBinding();
    if (!(b instanceof Error)) expect(chooseBackboneIo("auto", b).io).toBe("batch");
    expect(chooseBackboneIo("dgram")).toEqual({ io: "dgram", reason: "TRANSCEIVER_IO=dgram" });
  });

  it("batch refuses to start without the addon, naming the variable and the reason", () => {
    expect(() => chooseBackboneIo("batch", missing)).toThrow(/TRANSCEIVER_IO=batch: addon not built/);
  });

  it("takes an addon built before resumable batches for none (its start would skip frames)", () => {
    const b = loadBinding();
    if (b instanceof Error) return;
    const old = { ...b, resumableBatches: undefined };
    expect(chooseBackboneIo("auto", old)).toEqual({ io: "dgram", reason: RESUMABLE_MISSING });
    expect(() => chooseBackboneIo("batch", old)).toThrow(
      /TRANSCEIVER_IO=batch: addon predates resumable batches/,
    );
  });

  it("a bad TRANSCEIVER_IO is a configuration error naming it", () => {
    const env = {
      CLUSTER_ID: "1",
      TRANSCEIVER_ID: "1",
      TRANSCEIVER_IO: "fast",
    };
    let err: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/TRANSCEIVER_IO: "fast" is not one of auto, batch, dgram/);
  });
});
