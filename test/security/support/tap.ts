// Where an attacker on the client's network would sit: the client's only way to the POP goes
// through this UDP proxy (one inside socket for the client, one outside socket towards the VIP),
// which keeps a copy of every STUN Binding request the client sends, as a packet capture would.
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";

/** STUN Binding request (type 0x0001, magic cookie at 4). */
function isBindingRequest(b: Buffer): boolean {
  return b.length >= 20 && b[0] === 0 && b[1] === 1 && b.readUInt32BE(4) === 0x2112a442;
}

/** True when the STUN message carries USE-CANDIDATE (0x0025). */
export function hasUseCandidate(b: Buffer): boolean {
  for (let i = 20; i + 4 <= b.length; ) {
    const type = b.readUInt16BE(i);
    const len = b.readUInt16BE(i + 2);
    if (type === 0x0025) return true;
    i += 4 + ((len + 3) & ~3);
  }
  return false;
}

export class Tap {
  inside!: Socket;
  outside!: Socket;
  client: RemoteInfo | null = null;
  readonly captured: Buffer[] = [];

  static async start(vipPort: number): Promise<Tap> {
    const t = new Tap();
    t.inside = await bind();
    t.outside = await bind();
    t.inside.on("message", (msg, from) => {
      t.client = from;
      if (isBindingRequest(msg)) t.captured.push(Buffer.from(msg));
      t.outside.send(msg, vipPort, "127.0.0.1");
    });
    t.outside.on("message", (msg) => {
      if (t.client) t.inside.send(msg, t.client.port, t.client.address);
    });
    return t;
  }

  get insidePort(): number {
    return this.inside.address().port;
  }
  /** The client's address as the POP sees it. */
  get outsideAddress(): string {
    return `127.0.0.1:${this.outside.address().port}`;
  }

  /** The latest captured check with (or without) USE-CANDIDATE. */
  check(useCandidate: boolean): Buffer | undefined {
    return this.captured.findLast((c) => hasUseCandidate(c) === useCandidate);
  }

  close(): void {
    this.inside.close();
    this.outside.close();
  }
}

async function bind(host = "127.0.0.1"): Promise<Socket> {
  const s = createSocket({ type: "udp4", recvBufferSize: 1 << 20 });
  await new Promise<void>((r) => s.bind(0, host, () => r()));
  return s;
}
