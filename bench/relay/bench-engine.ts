// A POP engine for the benchmarks that drive it without sockets (memory.ts, engine-path.ts): one
// cluster, hints under a fixed key, timers long enough that nothing expires during a run, and a
// hinted Binding request that opens a flow to transceiver 1.
import { randomBytes } from "node:crypto";
import { nodeMac } from "../../regional/common/hmac.ts";
import { PopEngine } from "../../regional/relay/core/pop-engine.ts";
import { SourceList } from "../../regional/relay/core/sources.ts";
import { HintVerifier, mintHint } from "../../shared/hint/codec.ts";
import { parseKeyring } from "../../shared/keys.ts";
import { encodeBindingRequest } from "../../shared/stun/writer.ts";

const mac = nodeMac(parseKeyring(`1:${Buffer.alloc(32, 3).toString("base64")}`, "keys", 15));

/** A Binding request whose ufrag is a valid hint for cluster 1, transceiver 1. */
export const hintedRequest: Buffer = Buffer.from(
  encodeBindingRequest({
    transactionId: new Uint8Array(12),
    username: `${mintHint({ clusterId: 1, transceiverId: 1, random: randomBytes(4) }, mac)}:abcd`,
  }),
);

/** An engine for up to `maxFlows` flows, none of them limited per prefix below that. */
export function benchPopEngine(maxFlows: number): PopEngine {
  return new PopEngine({
    popId: 1,
    clusters: [1],
    clusterSources: new Map([[1, new SourceList(["127.0.0.0/8"])]]),
    colocatedClusterId: 0,
    transceivers: { has: () => false },
    hint: new HintVerifier(mac),
    limits: { maxFlows, maxFlowsPerPrefix: maxFlows, maxHalfOpenPerPrefix: maxFlows },
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
}
