// The bench's client-side plumbing on Node's dgram, one socket pair per session (BENCH_PROXY=dgram,
// or when the batched addon does not load): kept to compare with proxy-batch.ts. Both count and
// drop echoed RTP where it enters the client process, so the clients spend no CPU decrypting it.
import { createSocket, type Socket } from "node:dgram";
import { parseIpv4, writeIpv4 } from "../../shared/backbone/address.ts";
import {
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  FrameType,
  newFrameHeader,
} from "../../shared/backbone/frame.ts";

/** One session's way to the server, as the client process sees it. */
export interface Leg {
  /** The port the client sends to (the answer's candidate). */
  readonly front: number;
  /** Echoed RTP counted (and dropped) so far. */
  echoes(): number;
}

/** How every client of a run reaches the server. */
export interface ClientSide {
  /** What the bench prints. */
  readonly description: string;
  /** The leg of the client whose socket is `clientPort`, toward server port `serverPort`. */
  open(clientPort: number, serverPort: number): Promise<Leg>;
  /**
   * A datagram of the client whose socket is `clientPort`, handed over in-process instead of sent
   * (the batched side only); false when the side cannot take it.
   */
  direct?(clientPort: number, data: Uint8Array): boolean;
  /** Local ports of the plumbing's sockets (their kernel drops are read from /proc/net/udp). */
  ports(): number[];
  /** Anomalies (0 unless something is wrong): datagrams from no known session, sends refused. */
  counters(): Record<string, number>;
  close(): void;
}

/** RTP (RFC 7983 byte 0 in 128-191) and not RTCP (payload types 192-223). */
export function isRtp(b0: number, b1: number): boolean {
  return b0 >= 128 && b0 <= 191 && (b1 < 192 || b1 > 223);
}

const bind = async (): Promise<Socket> => {
  const s = createSocket({ type: "udp4", recvBufferSize: 1 << 20 });
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  return s;
};

/** A socket pair between one client and `serverPort`: frames (gr) or forwards as is (werift). */
class DgramProxy {
  front!: Socket;
  back!: Socket;
  client: { port: number; address: string } | null = null;
  rtp = 0;
  readonly #header = Buffer.alloc(FRAME_HEADER_BYTES);

  static async start(host: string, serverPort: number, framed: boolean): Promise<DgramProxy> {
    const p = new DgramProxy();
    p.front = await bind();
    p.back = await bind();
    p.back.connect(serverPort, host);
    await new Promise((r) => p.back.once("connect", r));
    const skip = framed ? FRAME_HEADER_BYTES : 0;
    p.front.on("message", (msg, from) => {
      if (framed && !p.client) p.#frameFor(from);
      p.client = from;
      if (framed) p.back.send([p.#header, msg]);
      else p.back.send(msg);
    });
    p.back.on("message", (msg) => {
      if (framed && (msg.length <= FRAME_HEADER_BYTES || (msg[1]! & 15) !== FrameType.data)) return;
      if (isRtp(msg[skip] ?? 0, msg[skip + 1] ?? 0)) {
        p.rtp++;
        return;
      }
      if (p.client) p.front.send(framed ? msg.subarray(skip) : msg, p.client.port, p.client.address);
    });
    return p;
  }

  /** The relay's backbone header for this client (POP 1, cluster 1, transceiver 1). */
  #frameFor(from: { port: number; address: string }): void {
    const h = newFrameHeader();
    h.type = FrameType.data;
    h.popId = 1;
    h.clusterId = 1;
    h.transceiverId = 1;
    h.clientPort = from.port;
    writeIpv4(h.clientIp, parseIpv4(from.address));
    encodeFrameHeader(this.#header, 0, h);
  }

  get frontPort(): number {
    return this.front.address().port;
  }

  close(): void {
    this.front.close();
    this.back.close();
  }
}

/**
 * gr (framed): each session's proxy plays the relay, wrapping datagrams in backbone frames for the
 * transceiver's socket; werift: each stands between a client and its own server socket.
 */
export function dgramSide(framed: boolean, host: string, why: string): ClientSide {
  const proxies: DgramProxy[] = [];
  return {
    description: `dgram: a socket pair per session (${why})`,
    async open(_clientPort, serverPort) {
      const p = await DgramProxy.start(host, serverPort, framed);
      proxies.push(p);
      return { front: p.frontPort, echoes: () => p.rtp };
    },
    ports: () => proxies.flatMap((p) => [p.front.address().port, p.back.address().port]),
    counters: () => ({}),
    close() {
      for (const p of proxies) p.close();
    },
  };
}
