// ICE-TCP test parts: a client that speaks RFC 4571 over a real TCP connection to the POP, and a
// POP + cluster relay + fake transceiver path on loopback with the POP's TCP listener enabled.
import net from "node:net";
import { createLogger } from "../../regional/common/log.ts";
import type { RelayConfig } from "../../regional/relay/config.ts";
import { RelayWorker } from "../../regional/relay/shell/worker.ts";
import { frame, type ReadResult, Rfc4571Reader } from "../../shared/tcp/rfc4571.ts";
import { Client, FakeTransceiver, ports, relayConfig, topology } from "../relay/harness.ts";
import { freeTcpPort } from "../support/ports.ts";

export { until } from "../support/wait.ts";

const log = createLogger({ test: "tcp" }, "error");

/** A TCP client collecting the packets the POP frames back. */
export class TcpClient {
  readonly socket: net.Socket;
  readonly inbox: Buffer[] = [];
  readonly #reader = new Rfc4571Reader(65_535);
  closed = false;
  ended = false;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on("data", (chunk: Buffer) => {
      this.#reader.push(chunk);
      for (let x: ReadResult = this.#reader.next(); x.kind !== "more"; x = this.#reader.next()) {
        if (x.kind === "packet") this.inbox.push(Buffer.from(x.bytes));
      }
    });
    socket.on("end", () => {
      this.ended = true;
    });
    socket.on("close", () => {
      this.closed = true;
    });
    socket.on("error", () => {});
  }

  static connect(
    port: number,
    opts: { allowHalfOpen?: boolean; localPort?: number; localAddress?: string } = {},
  ): Promise<TcpClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect({
        host: "127.0.0.1",
        port,
        noDelay: true,
        allowHalfOpen: opts.allowHalfOpen ?? false,
        ...(opts.localPort ? { localPort: opts.localPort } : {}),
        localAddress: opts.localAddress ?? "127.0.0.1",
      });
      s.once("error", reject);
      s.once("connect", () => {
        s.off("error", reject);
        resolve(new TcpClient(s));
      });
    });
  }

  get port(): number {
    return this.socket.localPort!;
  }

  /** Writes one RFC 4571 packet. */
  send(packet: Uint8Array): void {
    this.socket.write(frame(packet));
  }

  /** Writes raw bytes (hostile framing). */
  raw(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  close(): void {
    this.socket.destroy();
  }
}

export interface TcpPath {
  vipTcp: number;
  vipUdp: number;
  t: FakeTransceiver;
  pop: RelayWorker;
  cluster: RelayWorker;
  udp: Client;
  close(): Promise<void>;
}

/** Client -> POP (UDP and TCP on the VIP) -> cluster relay -> fake transceiver, and back. */
export async function tcpPath(over: Partial<RelayConfig> = {}): Promise<TcpPath> {
  const p = await ports();
  const topo = topology(p);
  const vipTcp = await freeTcpPort();
  topo.pops[0]!.vipTcpPort = vipTcp;
  topo.globalVipTcpPort = vipTcp;
  const t = await FakeTransceiver.start();
  const transceivers: [number, string][] = [[1, t.address]];
  const cluster = await RelayWorker.start(relayConfig("cluster", topo, { transceivers }), log);
  const pop = await RelayWorker.start(relayConfig("pop", topo, over), log);
  const udp = await Client.open();
  return {
    vipTcp,
    vipUdp: p.vip,
    t,
    pop,
    cluster,
    udp,
    close: async () => {
      await udp.close();
      await pop.close();
      await cluster.close();
      await t.close();
    },
  };
}

/** One sample of a metric from the POP's exposition (0 when absent). */
export function metric(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}
