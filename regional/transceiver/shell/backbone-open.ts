// Chooses the backbone socket's datagram I/O (TRANSCEIVER_IO): the batched addon (recvmmsg /
// sendmmsg, backbone-batch.ts) or Node's dgram (backbone.ts). "auto" takes the addon when it loads
// and says why not otherwise; "batch" refuses to start without it.
import { chooseIoMode, type IoMode, loadBinding, RESUMABLE_MISSING } from "../../common/native/index.ts";
import type { BackboneIo, TransceiverConfig } from "../config.ts";
import type { TransceiverMetrics } from "../metrics.ts";
import { type Backbone, BackboneSocket } from "./backbone.ts";
import { BatchBackboneSocket } from "./backbone-batch.ts";

export interface OpenedBackbone {
  socket: Backbone;
  io: IoMode;
  /** Why this I/O (for the start-up log). */
  reason: string;
  /** The addon's counters summed over the sockets (batched I/O only). */
  totals: (() => Float64Array) | undefined;
}

export function chooseBackboneIo(want: BackboneIo, binding = loadBinding()): { io: IoMode; reason: string } {
  // The shell needs start(..., resumable) (backbone-batch.ts); an addon built before it is as good as none.
  const b =
    binding instanceof Error || binding.resumableBatches === true ? binding : new Error(RESUMABLE_MISSING);
  const { mode, reason } = chooseIoMode(want, b, "TRANSCEIVER_IO");
  return { io: mode, reason };
}

export async function openBackbone(
  c: TransceiverConfig,
  metrics: TransceiverMetrics,
): Promise<OpenedBackbone> {
  const { io, reason } = chooseBackboneIo(c.io);
  const at = [c.udp, c.clusterId, c.transceiverId, metrics, c.socketBufferBytes, c.socketCount] as const;
  if (io === "batch") {
    const b = BatchBackboneSocket.open(...at, c.gro);
    return { socket: b, io, reason, totals: () => b.totals() };
  }
  const socket = await BackboneSocket.open(...at, c.connectRelays);
  return { socket, io, reason, totals: undefined };
}
