// The SRTP/SRTCP replay window (RFC 3711 3.3.2, srtp/unprotect.ts) for one call's peer connection:
// each DTLS transport's receiving contexts get a sink as SRTP starts, so a packet received again
// (a capture re-sent from the client's own address: the paths and the relays let that through)
// is dropped and counted (`srtp_replay`, `srtcp_replay`). Without the swap installed
// (installPacketIndexEstimate refused a changed werift) the sink is never called.
import type { RTCDtlsTransport, RTCPeerConnection } from "werift";
import type { CounterHandle } from "../../common/metrics.ts";
import type { DropReason } from "../core/drops.ts";
import { guardReplays } from "../srtp/unprotect.ts";

type Drops = Readonly<Record<DropReason, CounterHandle>>;

/** Guards `t`'s receiving SRTP and SRTCP contexts; false before SRTP started. */
export function guardTransport(t: RTCDtlsTransport, drops: Drops): boolean {
  const srtp = t.srtp?.remoteContext;
  const srtcp = t.srtcp?.remoteContext;
  if (srtp === undefined || srtcp === undefined) return false;
  const tooMany = () => drops.srtp_ssrc_limit.inc();
  guardReplays(srtp, () => drops.srtp_replay.inc(), tooMany);
  guardReplays(srtcp, () => drops.srtcp_replay.inc(), tooMany);
  return true;
}

/** Applies guardTransport to each DTLS transport of `pc` as it connects. */
export function guardSrtpReplay(pc: RTCPeerConnection, drops: Drops): void {
  for (const t of pc.dtlsTransports) {
    // werift's startSrtp makes the contexts right before this state change, synchronously: no
    // packet is unprotected in between.
    t.onStateChange.subscribe((state) => {
      if (state === "connected") guardTransport(t, drops);
    });
  }
}
