// Metrics of the datagram I/O layer: which one a worker runs (gr_relay_io_mode) and, on the
// batched path, the addon's own counters, copied from its stats arrays at scrape time.
import type { Registry } from "../../common/metrics.ts";
import { type IoMode, Stat } from "../../common/native/index.ts";

const EVENTS: [string, number][] = [
  ["rx_batches", Stat.rxBatches],
  ["rx_truncated", Stat.rxTruncated],
  ["rx_errors", Stat.rxErrors],
  ["tx_calls", Stat.txCalls],
  ["tx_would_block", Stat.txBlocked],
  ["tx_errors", Stat.txErrors],
  ["tx_gso_trains", Stat.txGsoTrains],
  ["rx_gro_joined", Stat.rxGro],
  ["connection_refused", Stat.refused],
];

export interface IoMetricNames {
  mode: string;
  events: string;
}
export const RELAY_IO_METRICS: IoMetricNames = {
  mode: "gr_relay_io_mode",
  events: "gr_relay_io_events_total",
};
export const TRANSCEIVER_IO_METRICS: IoMetricNames = {
  mode: "gr_transceiver_io_mode",
  events: "gr_transceiver_io_events_total",
};

/** Registers the families; returns the scrape-time update from the addon's totals (by Stat index). */
export function ioMetrics(
  r: Registry,
  io: IoMode,
  names: IoMetricNames = RELAY_IO_METRICS,
  /** Labels every series carries before its own (the transceiver's `cluster`). */
  base: Record<string, string> = {},
): (totals: Float64Array) => void {
  const keys = Object.keys(base);
  const mode = r.gauge(
    names.mode,
    "Workers (or sockets) on each datagram I/O: batch (recvmmsg/sendmmsg) or dgram",
    [...keys, "mode"],
  );
  mode.with({ ...base, mode: "batch" }).set(io === "batch" ? 1 : 0);
  mode.with({ ...base, mode: "dgram" }).set(io === "dgram" ? 1 : 0);
  if (io !== "batch") return () => {};
  const ev = r.counter(names.events, "Batched I/O events: batches, system calls, datagrams lost", [
    ...keys,
    "event",
  ]);
  const handles = EVENTS.map(([event, i]) => [ev.with({ ...base, event }), i] as const);
  return (totals) => {
    for (const [h, i] of handles) if (totals[i]! > h.value) h.inc(totals[i]! - h.value);
  };
}
