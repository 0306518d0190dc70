// A network change between UDP and TCP for a werift client (which speaks UDP only): the client
// sends to this box's UDP port as if it were the VIP, and the box carries its datagrams to the
// POP either as UDP from a socket of its own or over a fresh ICE-TCP connection (RFC 4571), as
// the client's network would after a move. Like a real ICE-TCP client, a new TCP connection
// carries nothing before the client's next connectivity check (the POP routes by that check).
import { createSocket, type Socket } from "node:dgram";
import { isBindingRequest, newStunView, readStun } from "../../shared/stun/reader.ts";
import { TcpClient } from "./support.ts";

export class Switch {
  readonly #inside: Socket;
  readonly #vipUdp: number;
  readonly #vipTcp: number;
  #client: { port: number; address: string } | null = null;
  #udp: Socket | null = null;
  #tcp: TcpClient | null = null;
  #tcpReady = false;
  #view = newStunView();
  mode: "udp" | "tcp" = "udp";

  private constructor(inside: Socket, vipUdp: number, vipTcp: number) {
    this.#inside = inside;
    this.#vipUdp = vipUdp;
    this.#vipTcp = vipTcp;
    inside.on("message", (m, r) => {
      this.#client = { port: r.port, address: r.address };
      this.#forward(m);
    });
  }

  static async start(vipUdp: number, vipTcp: number): Promise<Switch> {
    const inside = createSocket("udp4");
    await new Promise<void>((r) => inside.bind(0, "127.0.0.1", () => r()));
    const s = new Switch(inside, vipUdp, vipTcp);
    await s.toUdp();
    return s;
  }

  get insidePort(): number {
    return this.#inside.address().port;
  }

  /** The source port the POP sees now. */
  get outsidePort(): number {
    return this.mode === "udp" ? this.#udp!.address().port : this.#tcp!.port;
  }

  #back(m: Buffer): void {
    const c = this.#client;
    if (c) this.#inside.send(m, c.port, c.address);
  }

  #forward(m: Buffer): void {
    if (this.mode === "udp") {
      this.#udp!.send(m, this.#vipUdp, "127.0.0.1");
      return;
    }
    if (!this.#tcpReady) {
      if (readStun(m, m.length, this.#view) !== "ok" || !isBindingRequest(this.#view)) return;
      this.#tcpReady = true;
    }
    this.#tcp!.send(m);
  }

  /** Moves to a new UDP source socket. */
  async toUdp(): Promise<void> {
    const old = this.#udp;
    const u = createSocket("udp4");
    await new Promise<void>((r) => u.bind(0, "127.0.0.1", () => r()));
    u.on("message", (m) => {
      if (this.#udp === u) this.#back(m);
    });
    this.#udp = u;
    this.mode = "udp";
    this.#tcp?.close();
    this.#tcp = null;
    old?.close();
  }

  /** Moves to a new TCP connection. */
  async toTcp(): Promise<void> {
    const t = await TcpClient.connect(this.#vipTcp);
    // Registered after the client's own reader: its inbox holds this chunk's packets.
    t.socket.on("data", () => {
      for (const m of t.inbox.splice(0)) if (this.#tcp === t) this.#back(m);
    });
    this.#tcp = t;
    this.#tcpReady = false;
    this.mode = "tcp";
  }

  close(): void {
    this.#tcp?.close();
    this.#udp?.close();
    this.#inside.close();
  }
}
