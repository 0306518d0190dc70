// The POP engine's per-datagram work alone (no sockets): client datagrams of established flows
// through `fromClient`, as the batched socket layer hands them over (address text from its cache
// and the numeric IPv4 from the receive metadata). Medians of interleaved rounds, ns per datagram.
// usage: node bench/relay/engine-path.ts [flows=64] [rounds=15] [datagramsPerRound=2000000]
import { randomBytes } from "node:crypto";
import { nodeMac } from "../../regional/common/hmac.ts";
import { PopEngine } from "../../regional/relay/core/pop-engine.ts";
import { SourceList } from "../../regional/relay/core/sources.ts";
import { Action } from "../../regional/relay/core/types.ts";
import { parseIpv4 } from "../../shared/backbone/address.ts";
import { HintVerifier, mintHint } from "../../shared/hint/codec.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { encodeBindingRequest } from "../../shared/stun/writer.ts";

const FLOWS = Number(process.argv[2] ?? 64);
const ROUNDS = Number(process.argv[3] ?? 15);
const PER_ROUND = Number(process.argv[4] ?? 2_000_000);

const mac = nodeMac(parseKeyring(`1:${Buffer.alloc(32, 3).toString("base64")}`, "keys", 15));
const req = Buffer.from(
  encodeBindingRequest({
    transactionId: new Uint8Array(12),
    username: `${mintHint({ clusterId: 1, transceiverId: 1, random: randomBytes(4) }, mac)}:abcd`,
  }),
);
const e = new PopEngine({
  popId: 1,
  clusters: [1],
  clusterSources: new Map([[1, new SourceList(["127.0.0.0/8"])]]),
  colocatedClusterId: 0,
  transceivers: { has: () => false },
  hint: new HintVerifier(mac),
  limits: { maxFlows: 4096, maxFlowsPerPrefix: 4096, maxHalfOpenPerPrefix: 4096 },
  timers: {
    tickMs: 250,
    halfOpenMs: 600_000,
    idleMs: 600_000,
    maxLifetimeMs: 3_600_000,
    mirrorRefreshMs: 20_000,
  },
  mirror: false,
  restore: null,
  now: 0,
});
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
