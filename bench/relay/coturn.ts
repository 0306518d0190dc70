// coturn as a comparison point: start `turnserver` on loopback with long-term credentials, then
// open one TURN allocation + channel binding per flow (RFC 8656) towards the sink, from local ports
// the C generator re-binds to send ChannelData.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import dgram from "node:dgram";
import { hmacSha1 } from "../../regional/common/hmac.ts";
import { encodeStunMessage, type StunAttribute } from "../../shared/stun/writer.ts";

const USER = "bench";
const PASS = "bench";
const REALM = "bench";

export interface Turn {
  port: number;
  pid: number;
  stop(): void;
}

function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket("udp4");
  return new Promise((resolve) =>
    s.bind(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    }),
  );
}

function request(sock: dgram.Socket, port: number, msg: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sock.off("message", onMsg);
      reject(new Error("TURN server did not answer"));
    }, 1_000);
    const onMsg = (m: Buffer): void => {
      clearTimeout(timer);
      sock.off("message", onMsg);
      resolve(m);
    };
    sock.on("message", onMsg);
    sock.send(msg, port, "127.0.0.1");
  });
}

function attrs(m: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  for (let i = 20; i + 4 <= m.length; ) {
    const t = m.readUInt16BE(i);
    const l = m.readUInt16BE(i + 2);
    if (!out.has(t)) out.set(t, m.subarray(i + 4, i + 4 + l));
    i += 4 + ((l + 3) & ~3);
  }
  return out;
}

export async function startCoturn(dir: string, cpus: string | null): Promise<Turn> {
  const port = await freeUdpPort();
  // Relay ports below the kernel's ephemeral range, so nothing else takes them meanwhile.
  const base = 10_000 + Math.floor(Math.random() * 9_000);
  const cmd = [
    "turnserver",
    "-n",
    "--listening-ip=127.0.0.1",
    `--listening-port=${port}`,
    "--relay-ip=127.0.0.1",
    `--min-port=${base}`,
    `--max-port=${base + 500}`,
    "--lt-cred-mech",
    `--user=${USER}:${PASS}`,
    `--realm=${REALM}`,
    "--allow-loopback-peers",
    "--no-cli",
    "--no-tls",
    "--no-dtls",
    "--no-tcp",
    "--no-tcp-relay",
    `--pidfile=${dir}/turn.pid`,
    "--log-file=stdout",
    "--simple-log",
  ];
  const argv = cpus ? ["taskset", "-c", cpus, ...cmd] : cmd;
  const child = spawn(argv[0]!, argv.slice(1), { stdio: "ignore" });
  const stop = (): void => {
    child.kill("SIGKILL");
  };
  // Ready when it answers a Binding request.
  const probe = dgram.createSocket("udp4");
  await new Promise<void>((r) => probe.bind(0, "127.0.0.1", () => r()));
  try {
    for (let i = 0; ; i++) {
      try {
        await request(
          probe,
          port,
          encodeStunMessage({ type: 0x0001, transactionId: new Uint8Array(12), attributes: [] }),
        );
        break;
      } catch (e) {
        if (i > 10 || child.exitCode !== null) throw e;
      }
    }
  } catch (e) {
    stop();
    throw e;
  } finally {
    probe.close();
  }
  return { port, pid: child.pid!, stop };
}

async function bindLowPort(): Promise<dgram.Socket> {
  for (;;) {
    const sock = dgram.createSocket("udp4");
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const ok = await new Promise<boolean>((resolve) => {
      sock.once("error", () => resolve(false));
      sock.bind(port, "127.0.0.1", () => resolve(true));
    });
    if (ok) return sock;
    sock.close();
  }
}

export interface TurnFlow {
  localPort: number;
  channelHeader(payloadLen: number): Uint8Array;
}

/** One allocation and channel binding per flow, each from its own local port. */
export async function setupTurn(turnPort: number, sinkPort: number, flows: number): Promise<TurnFlow[]> {
  const key = createHash("md5").update(`${USER}:${REALM}:${PASS}`).digest();
  const out: TurnFlow[] = [];
  const open: dgram.Socket[] = [];
  const peer = Buffer.alloc(8);
  peer.writeUInt16BE(0x0001, 0);
  peer.writeUInt16BE(sinkPort ^ 0x2112, 2);
  Buffer.from([127 ^ 0x21, 0 ^ 0x12, 0 ^ 0xa4, 1 ^ 0x42]).copy(peer, 4);
  for (let i = 0; i < flows; i++) {
    // Local ports below the ephemeral range: the generator re-binds them after this socket closes.
    const sock = await bindLowPort();
    const tid = (): Uint8Array =>
      new Uint8Array(createHash("sha256").update(`${i}:${Math.random()}`).digest().subarray(0, 12));
    const transport: StunAttribute = { type: 0x0019, value: new Uint8Array([17, 0, 0, 0]) };
    const first = await request(
      sock,
      turnPort,
      encodeStunMessage({ type: 0x0003, transactionId: tid(), attributes: [transport] }),
    );
    const a = attrs(first);
    const nonce = a.get(0x0015);
    if (first.readUInt16BE(0) !== 0x0113 || !nonce) {
      throw new Error(`expected a 401 with a nonce, got type 0x${first.readUInt16BE(0).toString(16)}`);
    }
    const auth: StunAttribute[] = [
      { type: 0x0006, value: Buffer.from(USER) },
      { type: 0x0014, value: Buffer.from(REALM) },
      { type: 0x0015, value: nonce },
    ];
    const alloc = await request(
      sock,
      turnPort,
      encodeStunMessage({
        type: 0x0003,
        transactionId: tid(),
        attributes: [transport, ...auth],
        integrityKey: key,
        hmacSha1,
      }),
    );
    if (alloc.readUInt16BE(0) !== 0x0103)
      throw new Error(`allocate failed (type 0x${alloc.readUInt16BE(0).toString(16)})`);
    const channel = 0x4000 + i;
    const bind = await request(
      sock,
      turnPort,
      encodeStunMessage({
        type: 0x0009,
        transactionId: tid(),
        attributes: [
          { type: 0x000c, value: new Uint8Array([channel >> 8, channel & 255, 0, 0]) },
          { type: 0x0012, value: peer },
          ...auth,
        ],
        integrityKey: key,
        hmacSha1,
      }),
    );
    if (bind.readUInt16BE(0) !== 0x0109)
      throw new Error(`channel bind failed (type 0x${bind.readUInt16BE(0).toString(16)})`);
    const localPort = sock.address().port;
    open.push(sock); // kept until every flow has its own port (a reused 5-tuple is a 437 mismatch)
    out.push({
      localPort,
      channelHeader: (len) => new Uint8Array([channel >> 8, channel & 255, len >> 8, len & 255]),
    });
  }
  await Promise.all(open.map((sock) => new Promise<void>((r) => sock.close(() => r()))));
  return out;
}
