// Port 0 for sockets that share their port by SO_REUSEPORT (relay workers, TRANSCEIVER_SOCKETS).
// Linux's ephemeral pick may hand such a socket a port another SO_REUSEPORT socket of the same
// user holds, and the two then split each other's datagrams: a CI run once saw a transceiver's
// three sockets share their port with another test's three. Both datagram paths must pick a port
// nobody holds, and other sockets must still be able to join it.
import dgram from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import { BatchSocket } from "../../regional/common/native/index.ts";
import { unsharedUdpPort } from "../../regional/common/reuse-port.ts";
import { bindUdp, closeUdp } from "../../regional/relay/shell/udp.ts";
import { until } from "./harness.ts";

const HELD = 800;
const NEW = 800;
const sockets: { close(): void }[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.close();
});

const shareDgram = async (port = 0): Promise<{ port: number; sock: dgram.Socket }> => {
  const sock = await bindUdp({ host: "127.0.0.1", port, reusePort: true, bufferBytes: 0 });
  sockets.push({ close: () => void closeUdp(sock) });
  return { port: sock.address().port, sock };
};
const shareBatch = (port = 0): { port: number; sock: BatchSocket } => {
  const sock = BatchSocket.open({ host: "127.0.0.1", port, reusePort: true, bufferBytes: 0 });
  sockets.push(sock);
  return { port: sock.address().port, sock };
};

/** Ports in the ephemeral range held by SO_REUSEPORT sockets on explicit ports (each from a plain port-0 bind first). */
async function holdPorts(): Promise<Set<number>> {
  const held = new Set<number>();
  for (let i = 0; i < HELD; i++) held.add((await shareDgram(await unsharedUdpPort("127.0.0.1"))).port);
  return held;
}

async function senders(n: number): Promise<dgram.Socket[]> {
  const out: dgram.Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = dgram.createSocket("udp4");
    await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
    sockets.push({ close: () => s.close() });
    out.push(s);
  }
  return out;
}

describe("port 0 with SO_REUSEPORT", () => {
  it("dgram (bindUdp): never a port another shared socket holds", async () => {
    const held = await holdPorts();
    let shared = 0;
    for (let i = 0; i < NEW; i++) if (held.has((await shareDgram()).port)) shared++;
    expect(shared).toBe(0);
  });

  it("batched addon: never a port another shared socket holds", async () => {
    const held = await holdPorts();
    let shared = 0;
    for (let i = 0; i < NEW; i++) if (held.has(shareBatch().port)) shared++;
    expect(shared).toBe(0);
  });

  it("dgram: a second socket joins the first's port, and the kernel spreads sources over both", async () => {
    const a = await shareDgram();
    const b = await shareDgram(a.port);
    const got = [0, 0];
    a.sock.on("message", () => got[0]!++);
    b.sock.on("message", () => got[1]!++);
    for (const s of await senders(64)) s.send(Buffer.from("x"), a.port, "127.0.0.1");
    await until(() => got[0]! + got[1]! === 64, "64 datagrams");
    expect(got[0]).toBeGreaterThan(0);
    expect(got[1]).toBeGreaterThan(0);
  });

  it("batched addon: a second socket joins a port-0 first socket, and the kernel spreads sources over both", async () => {
    const a = shareBatch();
    const b = shareBatch(a.port);
    const got = [0, 0];
    a.sock.start((n) => {
      got[0]! += n;
    });
    b.sock.start((n) => {
      got[1]! += n;
    });
    for (const s of await senders(64)) s.send(Buffer.from("x"), a.port, "127.0.0.1");
    await until(() => got[0]! + got[1]! === 64, "64 datagrams");
    expect(got[0]).toBeGreaterThan(0);
    expect(got[1]).toBeGreaterThan(0);
  });
});
