// Run by batch-udp.test.ts inside a network namespace of its own whose loopback has a 1,300-byte
// MTU (unshare -rn): GSO trains from flushArena to a peer on 127.0.0.1, one of them of datagrams
// too long for that MTU. Prints what the peer received and the socket's counters, as JSON.
import dgram from "node:dgram";
import { BatchSocket, NO_HEADER, Stat } from "../../regional/common/native/index.ts";

const peer = dgram.createSocket("udp4");
await new Promise<void>((r) => peer.bind(0, "127.0.0.1", () => r()));
const got: number[] = [];
peer.on("message", (m) => got.push(m.length));
const s = BatchSocket.open({ host: "127.0.0.1", port: 0, reusePort: false, bufferBytes: 1 << 20, gso: true });
const arena = Buffer.alloc(4 * 1_290, 1);
const train = (len: number): { sent: number; calls: number } => {
  const calls = s.stats[Stat.txCalls]!;
  for (let i = 0; i < 4; i++) s.queue(0, i * len, len, NO_HEADER, 4, peer.address().port, 0x7f000001);
  return { sent: s.flushArena(arena), calls: s.stats[Stat.txCalls]! - calls };
};
// 1,290 + 28 bytes of headers is over the MTU (fine for a plain send, which fragments); 100 is not.
const flushes = [train(1_290), train(100), train(1_290)];
await new Promise((r) => setTimeout(r, 200));
process.stdout.write(
  JSON.stringify({
    flushes,
    got: got.sort((a, b) => a - b),
    txErrors: s.stats[Stat.txErrors],
    gsoTrains: s.stats[Stat.txGsoTrains],
  }),
);
s.close();
peer.close();
