// Which plumbing carries the bench's clients to the server. BENCH_PROXY: "batch" (the batched UDP
// addon, an error if it does not load), "dgram" (a dgram socket pair per session, as before), or
// unset / "auto" (batch when the addon loads). BENCH_RELAY_SOURCES (8): the batched side's back
// sockets, in gr the relay workers the transceiver's SO_REUSEPORT sockets spread by source.
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
  return batchSide(transceiver, Number(env.BENCH_RELAY_SOURCES ?? 8));
}
