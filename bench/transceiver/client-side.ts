// Which plumbing carries the bench's clients to the server. BENCH_PROXY: "batch" (the batched UDP
// addon, an error if it does not load), "dgram" (a dgram socket pair per session, as before), or
// unset / "auto" (batch when the addon loads). BENCH_RELAY_SOURCES (8): the batched side's back
// sockets, in gr the relay workers the transceiver's SO_REUSEPORT sockets spread by source.
// BENCH_CLIENT_SEND (batched side only): "direct" (default) hands what the clients send to the
// back sockets in-process; "socket" sends it through each client's socket to the front socket.
import type { RTCPeerConnection } from "werift";
import { batchSide, batchUnavailable } from "./proxy-batch.ts";
import { type ClientSide, dgramSide } from "./proxy-dgram.ts";

/** `transceiver`: gr (framed, toward the transceiver's socket); null: werift's per-session sockets. */
export function chooseClientSide(
  transceiver: { host: string; port: number } | null,
  env: NodeJS.ProcessEnv = process.env,
): ClientSide {
  const want = env.BENCH_PROXY ?? "auto";
  if (want !== "auto" && want !== "batch" && want !== "dgram")
    throw new RangeError(`BENCH_PROXY: "batch", "dgram" or "auto", got ${JSON.stringify(want)}`);
  const host = transceiver?.host ?? "127.0.0.1";
  if (want === "dgram") return dgramSide(transceiver !== null, host, "BENCH_PROXY=dgram");
  const why = batchUnavailable();
  if (why !== null) {
    if (want === "batch") throw new Error(`BENCH_PROXY=batch: ${why}`);
    return dgramSide(transceiver !== null, host, `batched addon: ${why}`);
  }
  const send = env.BENCH_CLIENT_SEND ?? "direct";
  if (send !== "direct" && send !== "socket")
    throw new RangeError(`BENCH_CLIENT_SEND: "direct" or "socket", got ${JSON.stringify(send)}`);
  return batchSide(transceiver, Number(env.BENCH_RELAY_SOURCES ?? 8), send === "direct");
}

/** werift's UDP transport of a client (private to werift 0.25.2: its `send` is an own property). */
interface TransportInternals {
  send(data: Uint8Array, addr?: readonly [string, number]): Promise<void>;
}
interface PcInternals {
  iceTransports: { connection: { protocols: { transport?: TransportInternals }[] } }[];
}

const SENT: Promise<void> = Promise.resolve();

/**
 * With a side that takes datagrams in-process (BENCH_CLIENT_SEND=direct): what the client sends to `frontPort` is handed to `side` in-process
 * instead of crossing the kernel twice (client socket, front socket); the datagrams the server
 * receives are the same. The client keeps its socket for what comes back. Returns whether it did.
 */
export function handOver(
  pc: RTCPeerConnection,
  clientPort: number,
  frontPort: number,
  side: ClientSide,
): boolean {
  const direct = side.direct;
  if (direct === undefined) return false;
  for (const t of (pc as unknown as PcInternals).iceTransports) {
    for (const p of t.connection.protocols) {
      const tr = p.transport;
      if (tr === undefined) continue;
      const viaSocket = tr.send;
      tr.send = (data, addr) =>
        addr !== undefined && addr[1] === frontPort && addr[0] === "127.0.0.1" && direct(clientPort, data)
          ? SENT
          : viaSocket(data, addr);
    }
  }
  return true;
}
