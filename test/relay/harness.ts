// Loopback harness: free ports, a topology for them, relay configs, a UDP socket standing in for
// the transceiver (decodes each frame, answers Binding requests with a framed success response to
// the frame's source and then a pathValidated frame, as the real transceiver does once its own
// check succeeded), and a client socket with a message queue.
import dgram from "node:dgram";
import type { RelayConfig } from "../../regional/relay/config.ts";
import { DEFAULT_RESTORE_LIMITS } from "../../regional/relay/core/restore.ts";
import { DEFAULT_TCP_LIMITS } from "../../regional/relay/shell/tcp-limits.ts";
import { FRAME_HEADER_BYTES, FrameType } from "../../shared/backbone/frame.ts";
import { newStunView, readStun } from "../../shared/stun/reader.ts";
import type { Topology } from "../../shared/topology/schema.ts";
import { freeUdpPort } from "../support/ports.ts";
import { FAST_TIMERS } from "../support/relay-timers.ts";
import { bindingSuccess, frame, HINT_KEYS, readFrame } from "./fixtures.ts";

export { freeUdpPort } from "../support/ports.ts";
export { until } from "../support/wait.ts";

export interface Ports {
  vip: number;
  popBackbone: number;
  clusterBackbone: number;
}

export async function ports(): Promise<Ports> {
  return { vip: await freeUdpPort(), popBackbone: await freeUdpPort(), clusterBackbone: await freeUdpPort() };
}

export function topology(p: Ports, opts: { colocated?: boolean; popCidrs?: string[] } = {}): Topology {
  return {
    version: 1,
    globalVip: `127.0.0.1:${p.vip}`,
    defaultClusterId: 1 as never,
    clusters: [
      {
        id: 1 as never,
        name: "c1",
        region: "r1",
        continent: "EU",
        countries: [],
        latitude: 0,
        longitude: 0,
        signallingUrl: "http://127.0.0.1:1",
        backbone: `127.0.0.1:${p.clusterBackbone}`,
        backboneCidrs: ["127.0.0.0/8"],
        capacity: 10,
      },
    ],
    pops: [
      {
        id: 7 as never,
        name: "p7",
        region: "r1",
        latitude: 0,
        longitude: 0,
        vip: `127.0.0.1:${p.vip}`,
        backbone: `127.0.0.1:${p.popBackbone}`,
        backboneCidrs: opts.popCidrs ?? ["127.0.0.0/8"],
        ...(opts.colocated ? { clusterId: 1 as never } : {}),
      },
    ],
  };
}

export function relayConfig(
  role: "pop" | "cluster",
  topo: Topology,
  over: Partial<RelayConfig> = {},
): RelayConfig {
  return {
    role,
    id: role === "pop" ? 7 : 1,
    topology: topo,
    hintKeys: HINT_KEYS,
    workers: 1,
    adminHost: "127.0.0.1",
    adminPort: 0,
    bindHost: null,
    redisUrl: null,
    transceivers: null,
    drainMs: 1_000,
    limits: { maxFlows: 20_000, maxFlowsPerPrefix: 20_000, maxHalfOpenPerPrefix: 20_000 },
    timers: FAST_TIMERS,
    restore: DEFAULT_RESTORE_LIMITS,
    socketBufferBytes: 1 << 20,
    mirrorTtlMs: 10_000,
    registryRefreshMs: 100,
    tcp: DEFAULT_TCP_LIMITS,
    ...over,
  };
}

export interface SeenFrame {
  type: number;
  popId: number;
  clusterId: number;
  transceiverId: number;
  clientIp: string;
  clientPort: number;
  tcp: boolean;
  payload: Buffer;
  from: { address: string; port: number };
}

/** A UDP socket standing in for a transceiver. */
export class FakeTransceiver {
  readonly sock: dgram.Socket;
  readonly seen: SeenFrame[] = [];
  /** Answer Binding requests (off: the flow stays half-open). */
  answer = true;
  /** Send pathValidated after each answer (off: the relays keep the flow half-open). */
  validate = true;
  /** Echo data frames that are not STUN back to the sender. */
  echo = true;
  readonly #view = newStunView();

  private constructor(sock: dgram.Socket) {
    this.sock = sock;
    sock.on("message", (msg, rinfo) => this.#onFrame(msg, rinfo));
  }

  static async start(port = 0): Promise<FakeTransceiver> {
    const sock = dgram.createSocket("udp4");
    await new Promise<void>((r) => sock.bind(port, "127.0.0.1", () => r()));
    return new FakeTransceiver(sock);
  }

  get address(): string {
    return `127.0.0.1:${this.sock.address().port}`;
  }

  #onFrame(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const f = readFrame(msg);
    if (f === null) return;
    // Liveness pings are answered with a pong, as the real transceiver does, and not recorded.
    if (f.type === FrameType.ping) {
      const pong = Buffer.from(msg);
      pong[1] = (pong[1]! & 0xf0) | FrameType.pong;
      this.sock.send(pong, rinfo.port, rinfo.address);
      return;
    }
    this.seen.push({ ...f, tcp: f.tcp === true, from: { address: rinfo.address, port: rinfo.port } });
    if (f.type !== FrameType.data) return;
    const p = f.payload;
    if (p[0]! <= 3) {
      if (!this.answer) return;
      if (readStun(p, p.length, this.#view) !== "ok" || this.#view.messageClass !== 0) return;
      const res = frame(f, bindingSuccess(p.subarray(8, 20)));
      this.sock.send(res, rinfo.port, rinfo.address);
      // As the real transceiver does once its own check to the client is answered.
      if (this.validate)
        this.sock.send(
          frame({ ...f, type: FrameType.pathValidated }, new Uint8Array(0)),
          rinfo.port,
          rinfo.address,
        );
    } else if (this.echo) {
      this.sock.send(msg, rinfo.port, rinfo.address);
    }
  }

  /** Sends a frame for a client to wherever that client's frames last came from. */
  sendTo(clientPort: number, type: number, payload: Uint8Array): void {
    const last = [...this.seen].reverse().find((f) => f.clientPort === clientPort);
    if (!last) throw new Error("no frame seen for that client");
    const f = frame({ ...last, type }, payload);
    this.sock.send(f, last.from.port, last.from.address);
  }

  close(): Promise<void> {
    return new Promise((r) => this.sock.close(() => r()));
  }
}

/** A client socket collecting what it receives. */
export class Client {
  readonly sock: dgram.Socket;
  readonly inbox: { msg: Buffer; from: string }[] = [];

  private constructor(sock: dgram.Socket) {
    this.sock = sock;
    sock.on("message", (msg, rinfo) => this.inbox.push({ msg, from: `${rinfo.address}:${rinfo.port}` }));
  }

  static async open(host = "127.0.0.1"): Promise<Client> {
    const sock = dgram.createSocket("udp4");
    await new Promise<void>((r) => sock.bind(0, host, () => r()));
    return new Client(sock);
  }

  get port(): number {
    return this.sock.address().port;
  }

  send(buf: Uint8Array, vipPort: number): void {
    this.sock.send(buf, vipPort, "127.0.0.1");
  }

  close(): Promise<void> {
    return new Promise((r) => this.sock.close(() => r()));
  }
}

export const PAYLOAD_OFFSET = FRAME_HEADER_BYTES;
