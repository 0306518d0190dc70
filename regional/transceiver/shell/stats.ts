// Periodic call-quality samples into the region's histograms: ICE RTT from the selected pair,
// RTCP RTT, jitter and loss (as deltas between samples) from werift's stats.
import type { RTCPeerConnection } from "werift";
import type { RegionHandles } from "../metrics.ts";
import type { IceAttachment } from "./werift-glue.ts";

export class CallStats {
  #lastLost = 0;
  #lastReceived = 0;
  #nextAt = 0;

  /** Samples when due (jittered interval, so sessions do not sample in step). */
  maybeSample(
    now: number,
    intervalMs: number,
    pc: RTCPeerConnection,
    att: IceAttachment,
    rh: RegionHandles,
  ): void {
    if (now < this.#nextAt) return;
    this.#nextAt = now + intervalMs * (0.75 + Math.random() * 0.5);
    this.#sample(pc, att, rh).catch(() => {});
  }

  async #sample(pc: RTCPeerConnection, att: IceAttachment, rh: RegionHandles): Promise<void> {
    const rtt = att.selectedRtt();
    if (rtt !== undefined) rh.iceRtt.observe(rtt);
    const report = await pc.getStats();
    for (const s of report.values() as Iterable<Record<string, unknown>>) {
      if (s.type === "remote-inbound-rtp" && typeof s.roundTripTime === "number" && s.roundTripTime > 0) {
        rh.rtcpRtt.observe(s.roundTripTime);
      } else if (s.type === "inbound-rtp") {
        if (typeof s.jitter === "number") rh.jitter.observe(s.jitter);
        const lost = typeof s.packetsLost === "number" ? s.packetsLost : 0;
        const received = typeof s.packetsReceived === "number" ? s.packetsReceived : 0;
        const dl = Math.max(0, lost - this.#lastLost);
        const dr = Math.max(0, received - this.#lastReceived);
        this.#lastLost = lost;
        this.#lastReceived = received;
        if (dl + dr > 0) rh.loss.observe(dl / (dl + dr));
      }
    }
  }
}
