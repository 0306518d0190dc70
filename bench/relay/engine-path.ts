// The POP engine's per-datagram work alone (no sockets): client datagrams of established flows
// through `fromClient`, as the batched socket layer hands them over (address text from its cache
// and the numeric IPv4 from the receive metadata). Medians of interleaved rounds, ns per datagram.
// usage: node bench/relay/engine-path.ts [flows=64] [rounds=15] [datagramsPerRound=2000000]
import { Action } from "../../regional/relay/core/types.ts";
import { parseIpv4 } from "../../shared/backbone/address.ts";
import { benchPopEngine, hintedRequest as req } from "./bench-engine.ts";

const FLOWS = Number(process.argv[2] ?? 64);
const ROUNDS = Number(process.argv[3] ?? 15);
const PER_ROUND = Number(process.argv[4] ?? 2_000_000);

const e = benchPopEngine(4096);
// One address per flow, the strings a socket layer's cache hands over; ports differ per flow.
const addr = Array.from({ length: FLOWS }, (_, i) => `127.0.${i >> 8}.${(i & 255) + 1}`);
const ip = addr.map((a) => parseIpv4(a));
for (let i = 0; i < FLOWS; i++) {
  if (e.fromClient(1, addr[i]!, 40_000 + i, req, req.length) !== Action.forwardWrapped)
    throw new Error("no flow");
}
// A 200-byte RTP-like datagram (version 2), the benchmark's payload.
const rtp = Buffer.alloc(2048);
rtp[0] = 0x80;
rtp[1] = 111;

function round(n: number): number {
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < n; k++) {
    const f = k % FLOWS;
    if (e.fromClient(2, addr[f]!, 40_000 + f, rtp, 200, ip[f]!) !== Action.forwardWrapped)
      throw new Error("dropped");
  }
  return Number(process.hrtime.bigint() - t0) / n;
}
round(PER_ROUND); // warm-up: optimized code before timing
const ns: number[] = [];
for (let r = 0; r < ROUNDS; r++) ns.push(round(PER_ROUND));
ns.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({ flows: FLOWS, rounds: ROUNDS, medianNs: Number(ns[ns.length >> 1]!.toFixed(1)), minNs: Number(ns[0]!.toFixed(1)) })}\n`,
);
